"""A tourist's English or Spanish read in the Portuguese words the rules know, and nothing of a
Portuguese message changed (``shared.nlu.foreign``)."""

from __future__ import annotations

from datetime import time

import pytest

from services.enrollment.config import load_config as load_enrollment
from services.enrollment.core import read
from services.faq.core import retrieve
from services.triage.config import load_config as load_triage
from services.triage.rules import classify
from services.trial.extraction import detect_action
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.nlu.dates import resolve_time
from shared.nlu.normalize import normalize
from shared.pack import load_pack
from shared.trial.config import load_trial_config

PACK = load_pack("ctsmash")
INDEX = FaqIndex(PACK.section("faq", FaqConfig))


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("Could I book a taster lesson?", "could i marcar a aula experimental"),
        ("quisiera reservar una clase gratis", "queria marcar una aula experimental"),
        ("How much does it cost?", "quanto custa"),
        ("¿Cuánto sale el plan mensual?", "quanto custa el plano mensal"),
        ("Do you have showers?", "voces tem chuveiros"),
        ("the 2nd of June", "dia 2 of junho"),
        ("I'm 52 and a beginner", "tenho 52 e a iniciante"),
    ],
)
def test_a_tourists_words_are_read_in_portuguese(text: str, read: str) -> None:
    assert normalize(text) == read


@pytest.mark.parametrize(
    "text",
    [
        "a Nina tem 9 anos e o Dado 7",
        "pago no cartão, pode ser?",
        "minha filha estuda de manhã, antes da escola",
        "o que eu levo pra aula?",
    ],
)
def test_portuguese_is_left_as_it_was(text: str) -> None:
    """Only words that cannot be Portuguese in a booking chat are listed."""
    words = normalize(text).split()
    assert "crianca" not in words and "pagamento" not in words and "marcar" not in words


@pytest.mark.parametrize(
    ("question", "entry"),
    [
        ("Is there somewhere to park the car? parking?", "estacionamento"),
        ("Where are you located exactly?", "endereco"),
        ("how much are the monthly plans?", "planos"),
        ("¿Hay clases para niños de 10 años?", "idade"),
        ("¿Dónde queda la escuela? ¿Cuál es la dirección?", "endereco"),
        ("¿Y cuánto cuesta una clase de prueba acá?", "aula_experimental"),
    ],
)
def test_a_tourists_question_finds_its_answer(question: str, entry: str) -> None:
    assert entry in retrieve(question, index=INDEX).entry_ids


def test_a_tourists_function_words_are_not_topics() -> None:
    """ "are you", "los", "una" are dropped; a word the pack's own text uses is kept."""
    words = INDEX.analyzer.words("are you open on the weekend? los sábados abren?")
    assert not {"are", "you", "on", "the", "los"} & set(words)
    assert "nada" in INDEX.analyzer.words("não paga nada a mais?")


@pytest.mark.parametrize(
    ("text", "hour"),
    [
        ("el jueves a las 8 de la noche", 20),
        ("mañana a las 6 de la tarde", 18),
        ("a las 7 por la mañana", 7),
    ],
)
def test_a_spanish_part_of_the_day_places_the_hour(text: str, hour: int) -> None:
    assert resolve_time(text) == time(hour, 0)


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("So sorry, I cannot make it this Tuesday", "cancel"),
        ("no podré asistir mañana", "cancel"),
        ("please cancel it", "cancel"),
        ("could we reschedule?", "reschedule"),
        ("is our booking still on?", "status"),
    ],
)
def test_a_tourists_booked_class_given_up_moved_or_checked(text: str, action: str) -> None:
    """After a booking a tourist cancels, moves or checks it in their words: the trial's own
    phrases read them once they are in Portuguese."""
    config = load_trial_config(PACK)
    assert detect_action(text, [], config) == action


@pytest.mark.parametrize(
    "text", ["how do I sign up for the monthly plan?", "me gustaría inscribirme en el plan"]
)
def test_a_tourist_signing_up_for_a_plan_is_enrolling(text: str) -> None:
    intents = classify(text, trial_stage="booked", config=load_triage(PACK), pack=PACK).intents
    assert "enrollment" in intents
    assert "trial" not in intents


@pytest.mark.parametrize(
    ("text", "plan", "days", "payment"),
    [
        ("I'd go with twice a week, by card", "duas_vezes", [], "cartao"),
        ("three times per week, mondays and fridays", "tres_vezes", ["segunda", "sexta"], None),
        ("quiero dos veces a la semana", "duas_vezes", [], None),
    ],
)
def test_a_tourists_plan_days_and_way_to_pay_are_read(
    text: str, plan: str, days: list[str], payment: str | None
) -> None:
    """How often, which weekdays (said in the plural of a habit) and the card, in English or
    Spanish, fill the enrollment as the Portuguese would."""
    reading = read(text, load_enrollment(PACK), stage="ask_plan")
    assert (reading.plan, reading.days, reading.payment) == (plan, days, payment)
