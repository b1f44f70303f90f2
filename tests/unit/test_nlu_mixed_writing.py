"""Ways of writing the slot rules read beside plain Portuguese: a tourist's English or Spanish
days, months and introductions, a name typed before "tenho N", slang trailing a bare age, and an
asked name in a clause of its own after another one.

Each case is one mechanism, with sentences of our own: the weekday and month words of another
language are dates (and so never names), foreign function words are never names, a name run
ends at "tenho" and its typing slip, a discourse marker after a number does not hide the age.
"""

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from shared.nlu.dates import resolve_date, resolve_time
from shared.nlu.normalize import normalize
from shared.nlu.slots import extract_age, extract_level, extract_name

TZ = ZoneInfo("America/Sao_Paulo")
# A Thursday.
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tuesday", "terca"),
        ("el Miércoles", "el quarta"),
        ("the 3rd of March", "dia 3 of march"),
        ("a las 19 hs", "as 19 hs"),
        ("32 years old", "32 anos"),
    ],
)
def test_foreign_calendar_words_read_as_portuguese(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("text", "day", "hour"),
    [
        ("could it be next tuesday, the 10th, 6pm?", date(2026, 2, 10), time(18, 0)),
        ("¿Puede ser el martes 17 de febrero a las 20 hs?", date(2026, 2, 17), time(20, 0)),
        ("tomorrow at 6pm", date(2026, 2, 6), time(18, 0)),
        ("el viernes 13 a las 19", date(2026, 2, 13), time(19, 0)),
    ],
)
def test_foreign_dates_and_times(text: str, day: date, hour: time) -> None:
    assert resolve_date(text, NOW, TZ) == day
    assert resolve_time(text) == hour


@pytest.mark.parametrize(
    "text",
    [
        "is next tuesday, the 10th, at 6pm still free?",
        "el jueves a las 18, puede ser?",
        "tomorrow is fine, thanks",
        "hola, quiero una clase de prueba el jueves",
    ],
)
def test_foreign_words_are_not_names(text: str) -> None:
    assert extract_name(text) is None


@pytest.mark.parametrize(
    ("text", "name", "age", "level"),
    [
        ("¡Hola! Soy Valentina, tengo 26 años, principiante", "Valentina", 26, "iniciante"),
        ("hi! my name is Oliver, 41 years old, beginner", "Oliver", 41, "iniciante"),
        ("Me llamo Andrés Vega, 38 años, avanzado", "Andrés Vega", 38, "avancado"),
        ("my name is Grace, 29, intermediate", "Grace", 29, "intermediario"),
    ],
)
def test_foreign_introductions(text: str, name: str, age: int, level: str) -> None:
    assert extract_name(text) == name
    assert extract_age(text) == age
    assert extract_level(text) == level


def test_soy_de_is_a_place_not_a_name() -> None:
    assert extract_name("Soy de Rosario, tengo 40 años") is None


@pytest.mark.parametrize(
    ("text", "name", "age"),
    [
        ("renata alves tenho 36 anos", "Renata Alves", 36),
        ("heitor tneho 22 anos e nunca joguei", "Heitor", 22),
        ("Lia Prado tenho 19, sou iniciante", "Lia Prado", 19),
    ],
)
def test_a_name_run_ends_at_tenho_and_its_age(text: str, name: str, age: int) -> None:
    assert extract_name(text) == name
    assert extract_age(text) == age


@pytest.mark.parametrize(
    "text", ["moro em santos tenho 30 anos", "oi tenho 30 anos", "quero agendar tenho 30 anos"]
)
def test_no_name_before_tenho_where_none_is(text: str) -> None:
    assert extract_name(text) is None


@pytest.mark.parametrize(
    ("text", "age"),
    [
        ("sou a duda, 19 tlgd, intermediária", 19),
        ("Rogério, 45 né, iniciante", 45),
        ("pra minha irmã, 31 kkk, nunca jogou", 31),
    ],
)
def test_a_marker_after_a_listed_age(text: str, age: int) -> None:
    assert extract_age(text) == age


@pytest.mark.parametrize(
    ("text", "name", "unasked"),
    [
        ("sou eu que vou fazer, Bruno. tem que ser o nome completo?", "Bruno", None),
        # Unasked, a name that ends the message signs it.
        ("sou eu mesma, Talita", "Talita", "Talita"),
    ],
)
def test_an_asked_name_in_a_later_clause(text: str, name: str, unasked: str | None) -> None:
    assert extract_name(text, expecting_name=True) == name
    assert extract_name(text) == unasked
