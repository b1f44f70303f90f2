"""Dates and times relative to Turn.now (rules in shared/nlu/dates.py)."""

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from shared.nlu.dates import part_of_day, resolve_date, resolve_time

TZ = ZoneInfo("America/Sao_Paulo")
THURSDAY = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)
MONDAY = datetime(2026, 2, 9, 10, 0, tzinfo=TZ)
TUESDAY = datetime(2026, 2, 10, 10, 0, tzinfo=TZ)
SUNDAY = datetime(2026, 2, 8, 10, 0, tzinfo=TZ)
DECEMBER = datetime(2026, 12, 28, 10, 0, tzinfo=TZ)
JANUARY = datetime(2027, 1, 2, 10, 0, tzinfo=TZ)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("terça", date(2026, 2, 10)),
        ("terca", date(2026, 2, 10)),
        ("Terça-feira", date(2026, 2, 10)),
        ("terça feira", date(2026, 2, 10)),
        ("3ª feira", date(2026, 2, 10)),
        ("3a-feira", date(2026, 2, 10)),
        ("essa terça", date(2026, 2, 10)),
        ("terça que vem", date(2026, 2, 10)),
        ("próxima terça", date(2026, 2, 10)),
        ("proxima terca", date(2026, 2, 10)),
        ("semana que vem na terça", date(2026, 2, 10)),
        ("quarta", date(2026, 2, 11)),
        ("sábado", date(2026, 2, 7)),
        ("sab", date(2026, 2, 7)),
        ("domingo", date(2026, 2, 8)),
        ("quinta", date(2026, 2, 5)),
        ("sexta que vem", date(2026, 2, 13)),
        ("segunda", date(2026, 2, 9)),
        ("dia 10", date(2026, 2, 10)),
        ("no dia 10", date(2026, 2, 10)),
        ("dia 5", date(2026, 2, 5)),
        ("dia 3", date(2026, 3, 3)),
        ("dia 31", date(2026, 3, 31)),
        ("10/02", date(2026, 2, 10)),
        ("10/2", date(2026, 2, 10)),
        ("10-02", date(2026, 2, 10)),
        ("10/02/2026", date(2026, 2, 10)),
        ("10/02/26", date(2026, 2, 10)),
        ("10 de fevereiro", date(2026, 2, 10)),
        ("10 fev", date(2026, 2, 10)),
        ("10 de fev.", date(2026, 2, 10)),
        ("10 de fevereiro de 2026", date(2026, 2, 10)),
        ("1º de março", date(2026, 3, 1)),
        ("primeiro de março", date(2026, 3, 1)),
        ("2026-02-10", date(2026, 2, 10)),
        ("hoje", date(2026, 2, 5)),
        ("hj", date(2026, 2, 5)),
        ("amanhã", date(2026, 2, 6)),
        ("amanha", date(2026, 2, 6)),
        ("depois de amanhã", date(2026, 2, 7)),
        ("dps de amanha", date(2026, 2, 7)),
        # Explicit dates win over relative words in the same message.
        ("Quero na terça dia 10 de fevereiro", date(2026, 2, 10)),
        ("pode ser terça que vem às 19h?", date(2026, 2, 10)),
        ("amanhã não, dia 10 pode ser", date(2026, 2, 10)),
        ("terça 17/02 às 19h", date(2026, 2, 17)),
        ("quarta dia 10", date(2026, 2, 10)),
        # A mention followed by "não" is skipped.
        ("terça não, quarta", date(2026, 2, 11)),
        ("hoje não posso, só amanhã", date(2026, 2, 6)),
        # Past dates: with a year exactly as written; without, recent ones stay this year.
        ("01/02/2026", date(2026, 2, 1)),
        ("03/02/2025", date(2025, 2, 3)),
        ("03/02", date(2026, 2, 3)),
        ("10/01", date(2026, 1, 10)),
        ("10/08", date(2026, 8, 10)),
        ("04/01", date(2027, 1, 4)),
    ],
)
def test_resolve_date_on_a_thursday(text: str, expected: date) -> None:
    assert resolve_date(text, THURSDAY, TZ) == expected


@pytest.mark.parametrize(
    ("now", "text", "expected"),
    [
        (MONDAY, "terça", date(2026, 2, 10)),
        (MONDAY, "terça que vem", date(2026, 2, 17)),
        (MONDAY, "próxima terça", date(2026, 2, 17)),
        (TUESDAY, "terça", date(2026, 2, 10)),
        (TUESDAY, "terça que vem", date(2026, 2, 17)),
        (SUNDAY, "terça que vem", date(2026, 2, 10)),
        (DECEMBER, "05/01", date(2027, 1, 5)),
        (DECEMBER, "dia 5", date(2027, 1, 5)),
        (DECEMBER, "5 de janeiro", date(2027, 1, 5)),
        (JANUARY, "30/12", date(2026, 12, 30)),
        (JANUARY, "amanhã", date(2027, 1, 3)),
    ],
)
def test_resolve_date_relative_to_now(now: datetime, text: str, expected: date) -> None:
    assert resolve_date(text, now, TZ) == expected


def test_today_is_the_business_day_not_the_utc_day() -> None:
    # 01:30 UTC on Friday is still Thursday 22:30 in São Paulo.
    now = datetime(2026, 2, 6, 1, 30, tzinfo=UTC)
    assert resolve_date("amanhã", now, TZ) == date(2026, 2, 6)
    assert resolve_date("hoje", now, TZ) == date(2026, 2, 5)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "oi",
        "19h",
        "às 19:00",
        "27 anos",
        "tenho 10 anos",
        "31/02",
        "30/02/2026",
        "99/99",
        "semana que vem",
        "é minha segunda vez",
        "11 98765-4321",
        "10",
        "terça não",
    ],
)
def test_resolve_date_none(text: str) -> None:
    assert resolve_date(text, THURSDAY, TZ) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("10", date(2026, 2, 10)), ("dia 12", date(2026, 2, 12)), ("o 3", date(2026, 3, 3))],
)
def test_bare_day_counts_only_when_expected(text: str, expected: date) -> None:
    assert resolve_date(text, THURSDAY, TZ, expecting=True) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("19h", time(19, 0)),
        ("19H", time(19, 0)),
        ("19:00", time(19, 0)),
        ("19:00h", time(19, 0)),
        ("19hrs", time(19, 0)),
        ("19 hrs", time(19, 0)),
        ("19hs", time(19, 0)),
        ("19 h", time(19, 0)),
        ("19 horas", time(19, 0)),
        ("às 19", time(19, 0)),
        ("as 19", time(19, 0)),
        ("pelas 19", time(19, 0)),
        ("umas 19h", time(19, 0)),
        ("a partir das 18", time(18, 0)),
        ("7 da noite", time(19, 0)),
        ("8 da noite", time(20, 0)),
        ("7 da manhã", time(7, 0)),
        ("7 da manha", time(7, 0)),
        ("3 da tarde", time(15, 0)),
        ("sete e meia da noite", time(19, 30)),
        ("sete e meia", time(7, 30)),
        ("às sete", time(7, 0)),
        ("às duas da tarde", time(14, 0)),
        ("oito da noite", time(20, 0)),
        ("meio-dia", time(12, 0)),
        ("meio dia", time(12, 0)),
        ("meio dia e meia", time(12, 30)),
        ("meia-noite", time(0, 0)),
        ("12 da noite", time(0, 0)),
        ("18h30", time(18, 30)),
        ("18h 30", time(18, 30)),
        ("18h30min", time(18, 30)),
        ("18:30", time(18, 30)),
        ("19h e meia", time(19, 30)),
        ("19 e 30", time(19, 30)),
        ("20h", time(20, 0)),
        ("7pm", time(19, 0)),
        ("07:15", time(7, 15)),
        ("0h", time(0, 0)),
        ("pode ser terça que vem às 19h?", time(19, 0)),
        ("dia 10 às 19", time(19, 0)),
        ("10/02 as 19:00", time(19, 0)),
        ("10 de fevereiro, 20h", time(20, 0)),
        ("das 18h às 20h", time(18, 0)),
        ("prefiro de noite, tipo 8 da noite", time(20, 0)),
        # Between two hours: the first, not "18:19".
        ("entre 18 e 19", time(18, 0)),
        ("entre 7 e 8 da noite", time(19, 0)),
        # Past noon, an hour in words with "horas" is no duration.
        ("pode ser dezenove horas", time(19, 0)),
        ("vinte horas tá ótimo", time(20, 0)),
    ],
)
def test_resolve_time(text: str, expected: time) -> None:
    assert resolve_time(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "dia 10",
        "10/02",
        "10/02/2026",
        "2026-02-10",
        "27 anos",
        "tenho 27",
        "19",
        "sete horas",
        "aula de 1h",
        "daqui 2 horas",
        "dia 10 de manhã",
        "11 98765-4321",
        "24h",
        "25:00",
        "19:75",
        "terça",
        "de manhã",
        "chego entre 5 e 10 minutos atrasado",
        "entre 8 e 10 anos",
    ],
)
def test_resolve_time_none(text: str) -> None:
    assert resolve_time(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("19", time(19, 0)),
        ("7", time(7, 0)),
        ("sete", time(7, 0)),
        # A reply's opening words before the hour.
        ("então 20", time(20, 0)),
        ("melhor 18", time(18, 0)),
    ],
)
def test_bare_hour_counts_only_when_expected(text: str, expected: time) -> None:
    assert resolve_time(text) is None
    assert resolve_time(text, expecting=True) == expected


def test_date_and_time_work_alone_and_together() -> None:
    assert resolve_date("19:00", THURSDAY, TZ) is None
    assert resolve_time("19:00") == time(19, 0)
    assert resolve_date("terça 10/02", THURSDAY, TZ) == date(2026, 2, 10)
    assert resolve_time("terça 10/02") is None
    text = "terça 10/02 às 19:00"
    assert (resolve_date(text, THURSDAY, TZ), resolve_time(text)) == (
        date(2026, 2, 10),
        time(19, 0),
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The hour a change goes to wins over the one named before it.
        ("às 18h não rola, passa pras 19h?", time(19, 0)),
        ("não consigo mais às 7, pode ser para as 20h?", time(20, 0)),
        # "para as" said to the hour is no change.
        ("dez para as 19h", time(18, 50)),
    ],
)
def test_the_hour_a_change_goes_to(text: str, expected: time) -> None:
    assert resolve_time(text, valid_times=["07:00", "18:00", "19:00", "20:00"]) == expected


@pytest.mark.parametrize(
    ("text", "expecting", "expected"),
    [
        ("às 18h... ops, quis dizer 19h", False, time(19, 0)),
        ("20h digo 19h", False, time(19, 0)),
        ("8 não, 7", True, time(7, 0)),
        ("18, pera, 20", True, time(20, 0)),
    ],
)
def test_the_hour_after_a_slip_is_the_time(text: str, expecting: bool, expected: time) -> None:
    """ "ops", "quis dizer", "digo", "pera" correct like "não" and "aliás"; when the time was
    asked, a bare hour after the correction is the time."""
    valid = ("07:00", "18:00", "19:00", "20:00")
    assert resolve_time(text, expecting=expecting, valid_times=valid) == expected


def test_the_day_after_a_slip_is_the_date() -> None:
    assert resolve_date("dia 17, ops, quer dizer dia 24", THURSDAY, TZ) == date(2026, 2, 24)


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("quinta cedinho dá?", "manha"),
        ("amanha cedo consigo", "manha"),
        ("antes do serviço seria ideal", "manha"),
        ("so consigo dps do almoço", "tarde"),
        ("pode ser saindo do serviço", "noite"),
        ("quero o horario mais cedo possivel", None),
    ],
)
def test_a_part_of_the_day_said_without_its_name(text: str, part: str | None) -> None:
    """ "cedinho", "antes do serviço", "depois do almoço", "saindo do serviço" name a part of
    the day as "de manhã" does; the earliest class ("o mais cedo possível") names none."""
    assert part_of_day(text) == part


def test_early_on_the_day_is_the_morning_class() -> None:
    valid = ("07:00", "18:00", "19:00", "20:00")
    assert resolve_time("terça cedinho", valid_times=valid) == time(7, 0)
    assert resolve_time("saindo do serviço", previous=time(7, 0)) == time(19, 0)


@pytest.mark.parametrize(
    "text", ["já fiz umas 3 aulas de tênis", "bati bola umas 2 vezes", "pelas 4 semanas seguintes"]
)
def test_a_number_that_counts_something_is_no_hour_whatever_its_preposition(text: str) -> None:
    assert resolve_time(text) is None


@pytest.mark.parametrize(
    ("text", "now", "expected"),
    [
        ("dá pra ser na primeira terça de março?", THURSDAY, date(2026, 3, 3)),
        ("quero a ultima terca do mes, 19h", THURSDAY, date(2026, 2, 24)),
        ("a segunda terça do mes que vem", THURSDAY, date(2026, 3, 10)),
        ("na terceira terça de janeiro", DECEMBER, date(2027, 1, 19)),
        ("primeira terça do mês", THURSDAY, date(2026, 3, 3)),
    ],
)
def test_a_weekday_counted_within_a_month(text: str, now: datetime, expected: date) -> None:
    """ "a primeira/segunda/última terça de março / do mês (que vem)": that weekday of the
    month, the next one that has not passed, not the nearest Tuesday."""
    assert resolve_date(text, now, TZ) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pode ser 24/fev?", date(2026, 2, 24)),
        ("3-mar às 19h", date(2026, 3, 3)),
        ("10 / mar", date(2026, 3, 10)),
    ],
)
def test_a_day_and_a_month_word_joined_by_a_slash_or_dash(text: str, expected: date) -> None:
    assert resolve_date(text, THURSDAY, TZ) == expected
