"""Ways to say when beyond the basic rules (shared/nlu/dates.py): the Duckling-derived phrases
of issue 29, two-digit years, dotted dates, abbreviations, days said relative to another day,
minutes before an hour, and times said by preference rather than by hour."""

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from shared.nlu.dates import full_year, resolve_birth_date, resolve_date, resolve_time

TZ = ZoneInfo("America/Sao_Paulo")
THURSDAY = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)
# A Friday in March 2027, when the 16th is a Tuesday.
FRIDAY = datetime(2027, 3, 5, 12, 0, tzinfo=TZ)
CLASSES = ["07:00", "18:00", "19:00", "20:00"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Duckling's Portuguese corpus, as cited by the issue.
        ("as seis pela manhã", time(6, 0)),
        ("quinze para o meio dia", time(11, 45)),
        # The same mechanisms on other hours and wordings.
        ("às oito pela manhã", time(8, 0)),
        ("umas 9 pela manha", time(9, 0)),
        ("às 7 horas da noite", time(19, 0)),
        ("vinte para a meia-noite", time(23, 40)),
        ("dez para as sete da noite", time(18, 50)),
        ("um quarto para as 9 da manhã", time(8, 45)),
        ("cinco para as 20h", time(19, 55)),
    ],
)
def test_time_phrases(text: str, expected: time) -> None:
    assert resolve_time(text) == expected


def test_minutes_before_an_hour_are_not_a_head_count() -> None:
    assert resolve_time("somos 5 para as 19h") == time(19, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("um de março", date(2026, 3, 1)),
        ("1.3.2013", date(2013, 3, 1)),
        ("dia um de abril", date(2026, 4, 1)),
        ("dia primeiro", date(2026, 3, 1)),
        ("15.02", date(2026, 2, 15)),
        ("17.02.26", date(2026, 2, 17)),
        # Booking dates: a two-digit year is read forward.
        ("10/03/27", date(2027, 3, 10)),
        # Weekday abbreviations said alone, or in a list of days.
        ("qua", date(2026, 2, 11)),
        ("sex", date(2026, 2, 6)),
        ("ter", date(2026, 2, 10)),
        ("sáb", date(2026, 2, 7)),
        ("seg ou qua", date(2026, 2, 9)),
        # "daqui a N semanas/dias".
        ("daqui a duas semanas", date(2026, 2, 19)),
        ("daqui 10 dias", date(2026, 2, 15)),
        ("em uma semana", date(2026, 2, 12)),
        ("daqui a três semanas, numa terça", date(2026, 2, 24)),
        # A week marker anywhere beside the weekday (Portugal's "para a semana" too).
        ("na sexta, para a semana", date(2026, 2, 13)),
        ("pode ser sexta, semana que vem?", date(2026, 2, 13)),
        # Days said relative to another: "a outra", "terça seguinte" after any named day.
        ("essa sexta não rola, só a outra", date(2026, 2, 13)),
        ("amanhã tenho médico, pode ser a quarta seguinte?", date(2026, 2, 11)),
        ("sábado eu viajo, fica pra outra terça", date(2026, 2, 10)),
        # The day after "para (o)" is where the person wants to go.
        ("só chego dia 20, troca pro dia 24", date(2026, 2, 24)),
        ("estou fora até sexta, passa para terça que vem", date(2026, 2, 10)),
        # Corrections.
        ("não, melhor dia 19", date(2026, 2, 19)),
        ("dia 12... não, dia 26", date(2026, 2, 26)),
    ],
)
def test_date_phrases_on_a_thursday(text: str, expected: date) -> None:
    assert resolve_date(text, THURSDAY, TZ) == expected


@pytest.mark.parametrize(
    "text",
    ["vai ter aula?", "quero ter aula", "semana que vem", "a outra opção", "nasci em 03/04/91"],
)
def test_not_a_booking_date(text: str) -> None:
    assert resolve_date(text, THURSDAY, TZ) is None


def test_a_weekday_and_its_day_of_month() -> None:
    # "3ª 16" is Tuesday the 16th when the 16th is a Tuesday, even with no time after it.
    assert resolve_date("3ª 16", FRIDAY, TZ) == date(2027, 3, 16)
    assert resolve_date("terça 16", FRIDAY, TZ) == date(2027, 3, 16)


def test_the_next_one_after_the_conversation_date() -> None:
    booked = date(2026, 2, 10)
    assert resolve_date("pode ser na próxima, 20h", THURSDAY, TZ, reference=booked) == date(
        2026, 2, 17
    )
    assert resolve_date("pode ser na próxima", THURSDAY, TZ) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("31/10/74", date(1974, 10, 31)),
        ("nasci em 03/04/91", date(1991, 4, 3)),
        ("nascida em 1.3.2013", date(2013, 3, 1)),
        ("12 de maio de 1988", date(1988, 5, 12)),
        ("04/02/26", date(2026, 2, 4)),
    ],
)
def test_birth_dates_read_two_digit_years_in_the_past(text: str, expected: date) -> None:
    assert resolve_birth_date(text, THURSDAY, TZ) == expected


@pytest.mark.parametrize("text", ["10/03/2027", "dia 10", "terça"])
def test_no_birth_date(text: str) -> None:
    assert resolve_birth_date(text, THURSDAY, TZ) is None


def test_two_digit_years() -> None:
    today = date(2026, 2, 5)
    assert [full_year(y, today, past=True) for y in ("74", "26", "27", "00")] == [
        1974,
        2026,
        1927,
        2000,
    ]
    assert [full_year(y, today) for y in ("25", "26", "27", "74")] == [2025, 2026, 2027, 2074]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("de manhã cedo", time(7, 0)),
        ("pela manhã", time(7, 0)),
        ("o primeiro horário", time(7, 0)),
        ("no último horário", time(20, 0)),
        ("o último horário da manhã", time(7, 0)),
        ("à noite, o primeiro horário", time(18, 0)),
    ],
)
def test_times_said_by_preference_against_the_class_times(text: str, expected: time) -> None:
    assert resolve_time(text, valid_times=CLASSES) == expected
    assert resolve_time(text) is None


@pytest.mark.parametrize("text", ["à noite", "boa tarde", "de tarde não posso"])
def test_a_part_of_the_day_with_several_classes_is_no_time(text: str) -> None:
    assert resolve_time(text, valid_times=CLASSES) is None


@pytest.mark.parametrize(
    ("previous", "text", "expected"),
    [
        (time(7, 0), "da noite", time(19, 0)),
        (time(8, 0), "é à noite", time(20, 0)),
        (time(19, 0), "não, de manhã", time(7, 0)),
        (time(18, 0), "à tarde", time(18, 0)),
    ],
)
def test_a_part_of_the_day_moves_the_time_said_before(
    previous: time, text: str, expected: time
) -> None:
    assert resolve_time(text, valid_times=CLASSES, previous=previous) == expected


def test_an_ordinal_weekday_is_not_an_age() -> None:
    from shared.nlu.slots import extract_age

    assert extract_age("3ª 16, às 19h") is None
    assert extract_age("pode ser 3a-feira") is None
    assert extract_age("Bia, 27a, iniciante") == 27


def test_a_step_forward_counts_from_the_conversation_date() -> None:
    booked = date(2026, 2, 10)
    text = "consigo empurrar uma semana pra frente?"
    assert resolve_date(text, THURSDAY, TZ, reference=booked) == date(2026, 2, 17)
    assert resolve_date(text, THURSDAY, TZ) == date(2026, 2, 12)
    assert resolve_date("terça não, dois dias depois", THURSDAY, TZ) == date(2026, 2, 12)
