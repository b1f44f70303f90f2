"""After a booking: a class moved relative to itself (the shift read from the message, the
booked date it is added to) and triage sending moves and questions about a cancelled class
to the trial."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from services.triage.config import load_config as load_triage
from services.triage.rules import classify
from services.trial.extraction import detect_action
from services.trial.shift import asks_to_move
from shared.nlu.dates import resolve_date
from tests.unit.test_trial_flow import CONFIG, PACK, booked_chat, confirming_chat

TRIAGE = load_triage(PACK)


@pytest.mark.parametrize(
    ("text", "weeks"),
    [
        ("dá pra empurrar em duas semanas?", 2),
        ("joga ela 3 semanas depois", 3),
        ("melhor uma semana adiante", 1),
        ("pode ser na semana seguinte, msm hora", 1),
        ("adiar 1 semana", 1),
        ("semana que vem eu vou", None),
        ("passei a semana toda doente", None),
        ("faz 2 semanas que quero jogar", None),
    ],
)
def test_a_move_relative_to_the_class_is_a_number_of_weeks(text: str, weeks: int | None) -> None:
    """Read by the date extractor against the booked class's date (``reference``): a shift is
    that many weeks after it; anything else does not depend on it."""
    tz = ZoneInfo("America/Sao_Paulo")
    now, booked = datetime(2026, 2, 5, 10, tzinfo=tz), date(2026, 2, 10)
    moved = resolve_date(text, now, tz, reference=booked)
    if weeks is None:
        assert moved == resolve_date(text, now, tz)
    else:
        assert moved == booked + timedelta(weeks=weeks)


def test_a_shift_moves_the_booked_class_and_keeps_its_time() -> None:
    chat = booked_chat()  # terça 10/02 às 19:00
    out = chat.say("consegue empurrar duas semanas? mesma hora")
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.tool == "reschedule_booking"
    assert out.state.pending_tool.args["new_date"] == "2026-02-24"
    assert out.state.pending_tool.args["new_time"] == "19:00"


def test_a_date_said_outright_wins_over_the_shift_words() -> None:
    chat = booked_chat()
    # (The week after the booked 10/02 is Carnival, closed; the day said is the 24th.)
    out = chat.say("muda pra semana seguinte, terça dia 24 às 18h")
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.args["new_date"] == "2026-02-24"
    assert out.state.pending_tool.args["new_time"] == "18:00"


@pytest.mark.parametrize(
    "text",
    [
        "boa tarde! tem como passar pra outra terça?",
        "preciso adiar uma semana, pode ser?",
        "troca pra próxima, no mesmo horário",
    ],
)
def test_moving_a_class_to_a_later_day_reads_as_the_trial(text: str) -> None:
    result = classify(text, trial_stage="booked", config=TRIAGE, pack=PACK)
    assert "trial" in result.intents


def test_changing_clothes_is_no_move() -> None:
    result = classify("dá pra trocar de roupa aí?", trial_stage="booked", config=TRIAGE, pack=PACK)
    assert "trial" not in result.intents


@pytest.mark.parametrize("stage", ["booked", "cancelled"])
def test_asking_whether_the_class_stands_cancelled_reads_as_the_trial(stage: str) -> None:
    result = classify("então ficou desmarcado, certo?", trial_stage=stage, config=TRIAGE, pack=PACK)
    assert "trial" in result.intents
    result = classify("foi cancelado mesmo?", trial_stage=stage, config=TRIAGE, pack=PACK)
    assert "trial" in result.intents


@pytest.mark.parametrize(
    ("text", "moves"),
    [
        ("vai dar não, tem como mudar?", True),
        ("preciso remarcar, surgiu um imprevisto", True),
        ("dá pra trocar?", True),
        ("onde eu troco de roupa? dá pra trocar de roupa lá?", False),
        ("me passa o endereço", False),
        ("quero mudar o nome que eu passei", False),
    ],
)
def test_asking_to_move_with_no_other_object(text: str, moves: bool) -> None:
    assert asks_to_move(text) is moves


def test_asking_to_move_a_booked_class_without_a_date_asks_for_the_new_one() -> None:
    chat = booked_chat()
    out = chat.say("ih, ela não vai conseguir nesse dia. tem como mudar?")
    assert out.journal["reply"] == "trial_reschedule_ask"
    assert out.state.rescheduling
    out = chat.say("terça dia 24 então")
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.args["new_date"] == "2026-02-24"
    assert out.state.pending_tool.args["new_time"] == "19:00"


def test_moving_without_a_date_reads_as_the_trial_when_booked() -> None:
    result = classify("será que tem como trocar?", trial_stage="booked", config=TRIAGE, pack=PACK)
    assert "trial" in result.intents


@pytest.mark.parametrize(
    "text", ["e quando é a aula do meu marido mesmo?", "que dia vai ser a aula da Bia? esqueci"]
)
def test_when_someones_own_class_is_reads_as_the_trial(text: str) -> None:
    result = classify(text, trial_stage="booked", config=TRIAGE, pack=PACK)
    assert "trial" in result.intents
    plan = booked_chat().plan_for(text, intents=result.intents)
    assert plan.tool_call is not None and plan.tool_call.tool == "get_booking"


@pytest.mark.parametrize(
    ("text", "moves"),
    [("dá pra mudar o horário?", True), ("posso trocar a bolinha?", False)],
)
def test_only_the_class_s_own_object_is_a_move(text: str, moves: bool) -> None:
    assert asks_to_move(text) is moves
    result = classify(text, trial_stage="booked", config=TRIAGE, pack=PACK)
    assert ("trial" in result.intents) is moves


def test_not_making_the_class_with_another_hour_named_is_a_move() -> None:
    out = booked_chat().say("não vou conseguir ir às 19h, dá pra passar pras 20h?")
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.tool == "reschedule_booking"
    assert out.state.pending_tool.args["new_time"] == "20:00"


def test_not_making_the_booked_class_itself_is_a_cancel() -> None:
    out = booked_chat().say("não vou conseguir ir na terça dia 10, desculpa")
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.tool == "cancel_booking"


@pytest.mark.parametrize(
    "text",
    [
        "não vou conseguir, foi mal",
        "nao vou poder terça, mil desculpas",
        "infelizmente não poderei",
        "acho que vou desistir da aula",
    ],
)
def test_not_going_with_the_going_unsaid_asks_to_cancel(text: str) -> None:
    """Nobody says "ir" after "não vou conseguir": the future "can't" followed by no other verb
    is the class given up, in triage and in the trial alike."""
    assert "trial" in classify(text, trial_stage="booked", config=TRIAGE, pack=PACK).intents
    out = booked_chat().say(text, intents=["trial"])
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.tool == "cancel_booking"


@pytest.mark.parametrize(
    "text", ["nao vou conseguir pagar no cartao", "não vou poder trazer minha raquete"]
)
def test_a_cant_with_another_verb_is_no_cancel(text: str) -> None:
    assert detect_action(text, [], CONFIG) is None


@pytest.mark.parametrize(
    "text",
    [
        "segue tudo combinado pra terça?",
        "a aula ainda tá de pé?",
        "tá mantido ainda?",
        "consegue checar se ficou tudo ok?",
    ],
)
def test_asking_whether_the_class_still_stands_is_its_status(text: str) -> None:
    """Whether the class still stands is asked with "de pé", "valendo", "tudo certo", not with
    "marcada": the booking is looked up, not left to the small talk or nobody."""
    assert "trial" in classify(text, trial_stage="booked", config=TRIAGE, pack=PACK).intents
    assert detect_action(text, [], CONFIG) == "status"
    plan = booked_chat().plan_for(text, intents=["trial"])
    assert plan.tool_call is not None
    assert plan.tool_call.tool == "get_booking"


@pytest.mark.parametrize("text", ["tá certo, brigada", "o cupom ainda está valendo?"])
def test_an_ack_or_something_else_still_valid_is_no_status(text: str) -> None:
    assert detect_action(text, [], CONFIG) is None


def test_a_move_that_names_the_class_with_a_status_phrase_is_a_move() -> None:
    """ "minha aula" is a status phrase; beside a verb of moving it only names what moves."""
    out = booked_chat().say("bom dia, tem como alterar a minha aula para as 18h?")
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.tool == "reschedule_booking"
    assert out.state.pending_tool.args["new_time"] == "18:00"
    asked = booked_chat().say("preciso alterar minha aula")
    assert (asked.state.rescheduling, asked.asks_question) == (True, True)


@pytest.mark.parametrize(
    "text",
    [
        "vou ter que faltar, surgiu um plantão",
        "não vou mais na aula, obrigada",
        "Informo que não me será possível comparecer.",
        "olha, não vai rolar pra mim na terça",
    ],
)
def test_missing_the_class_in_other_words_asks_to_cancel(text: str) -> None:
    """Missing the class is said with "faltar", "não vou na aula", a formal "não será
    possível", or an impersonal "não vai dar/rolar" with the day."""
    assert "trial" in classify(text, trial_stage="booked", config=TRIAGE, pack=PACK).intents
    out = booked_chat().say(text, intents=["trial"])
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.tool == "cancel_booking"


def test_a_cant_said_to_the_class_offered_asks_for_another() -> None:
    """Before anything is booked, "não vou conseguir" at the confirmation refuses that class (a
    no, which asks for another), where "cancela" stops the booking."""
    refused = confirming_chat().say("hmm não vou conseguir")
    assert refused.journal["reply"] != "trial_flow_stopped"
    assert (refused.state.stage, refused.state.nome) == ("ask_date", "João")
    assert confirming_chat().say("cancela").journal["reply"] == "trial_flow_stopped"
