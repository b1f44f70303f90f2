"""A tourist's English or Spanish read in the Portuguese words the rules know, and nothing of a
Portuguese message changed (``shared.nlu.foreign``)."""

from __future__ import annotations

from datetime import time

import pytest

from services.faq.core import retrieve
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.nlu.dates import resolve_time
from shared.nlu.normalize import normalize
from shared.pack import load_pack

INDEX = FaqIndex(load_pack("ctsmash").section("faq", FaqConfig))


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
