"""A booked class moved to another day or hour reaches the booking flow.

Once a class is booked the flow is idle, so triage places a message by its own words: "trocar
pra quinta?" or "dá pra mudar pras 7h?" names no class, only where it moves to.
"""

from __future__ import annotations

import pytest

from services.triage.config import load_config
from services.triage.rules import classify
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)


@pytest.mark.parametrize(
    "text",
    [
        "tem como mudar pras 7h na mesma terça?",
        "queria trocar pra terça seguinte, pode?",
        "consigo alterar para as 19h?",
        # Asked as the class it could be, with no verb of moving.
        "surgiu uma reunião, daria pra ser às 18h na mesma terça?",
        "seria possível no dia 22 em vez disso?",
        "tem jeito de ficar pra próxima terça?",
        "no fim consigo ir no dia 27, pode voltar?",
    ],
)
def test_moving_a_booked_class_goes_to_the_trial(text: str) -> None:
    result = classify(text, trial_stage="booked", config=CONFIG, pack=PACK)
    assert "trial" in result.intents


def test_not_going_after_all_goes_to_the_trial() -> None:
    result = classify(
        "infelizmente não vou poder comparecer, retira minha reserva",
        trial_stage="booked",
        config=CONFIG,
        pack=PACK,
    )
    assert "trial" in result.intents


def test_a_plans_use_on_a_day_is_not_a_class_asked_for() -> None:
    result = classify(
        "o plano de 3x dá pra usar na sexta?", trial_stage="booked", config=CONFIG, pack=PACK
    )
    assert "trial" not in result.intents


def test_changing_something_else_is_not_a_booking() -> None:
    result = classify(
        "posso trocar a raquete depois?", trial_stage="booked", config=CONFIG, pack=PACK
    )
    assert "trial" not in result.intents


@pytest.mark.parametrize(
    "text",
    [
        "se eu desmarcar vocês cobram alguma coisa?",
        "tem multa pra trocar o horário?",
        "mudar o dia da aula é pago?",
    ],
)
def test_asking_what_a_change_costs_is_a_question_not_a_change(text: str) -> None:
    result = classify(text, trial_stage="booked", config=CONFIG, pack=PACK)
    assert result.intents == ["faq"]


def test_asking_for_the_change_is_still_a_change() -> None:
    result = classify(
        "quero trocar pra outra terça", trial_stage="booked", config=CONFIG, pack=PACK
    )
    assert "trial" in result.intents


def test_asking_when_ones_own_class_is_is_the_booking_not_the_timetable() -> None:
    result = classify(
        "e que dia é minha aula mesmo?", trial_stage="booked", config=CONFIG, pack=PACK
    )
    assert result.intents == ["trial"]


@pytest.mark.parametrize(
    ("text", "intents"),
    [
        ("e a que horas começa a aula?", ["trial"]),
        ("a aulinha é que dia?", ["trial"]),
        ("qual a data da aula experimental?", ["trial"]),
        # The classes, plural, are the timetable's; so is the opening hour.
        ("quais os horários das aulas?", ["faq"]),
        ("que horas vocês abrem?", ["faq"]),
    ],
)
def test_with_a_class_booked_the_class_asked_of_its_time_is_the_booked_one(
    text: str, intents: list[str]
) -> None:
    """With a class booked, "a que horas é a aula?" got the whole timetable instead of the
    day and time of the class booked."""
    result = classify(text, trial_stage="booked", config=CONFIG, pack=PACK)
    assert result.intents == intents


@pytest.mark.parametrize(
    "text", ["posso trazer meu irmão junto?", "minha namorada pode vir também?"]
)
def test_bringing_someone_along_is_a_booking_not_what_to_bring(text: str) -> None:
    result = classify(text, trial_stage="booked", config=CONFIG, pack=PACK)
    assert result.intents == ["trial"]
