"""A time said as a limit ("depois das 19h", "antes das 18h", "tem mais tarde?") is a bound
on the classes offered, not the hour wished for."""

from __future__ import annotations

import pytest

from shared.nlu.bounds import TimeBound, time_bound

CLASS_TIMES = ["07:00", "18:00", "19:00", "20:00"]


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        ("tem depois das 19h?", TimeBound("after", "19:00")),
        ("só consigo após as 18", TimeBound("after", "18:00")),
        ("alguma aula mais tarde que 18h?", TimeBound("after", "18:00")),
        ("a partir das sete da noite", TimeBound("after", "19:00", inclusive=True)),
        ("das 18h pra frente", TimeBound("after", "18:00", inclusive=True)),
        ("e antes das 19 horas, tem?", TimeBound("before", "19:00")),
        ("19h ou mais cedo", TimeBound("before", "19:00", inclusive=True)),
    ],
)
def test_a_limit_names_its_side_and_hour(text: str, bound: TimeBound) -> None:
    assert time_bound(text, valid_times=CLASS_TIMES) == bound


@pytest.mark.parametrize(
    "text",
    [
        "depois de 3 anos parado voltei",
        "antes de uma semana não dá",
        "depois do trabalho",
        "o mais tarde possível",
        "te respondo mais tarde",
        "às 19h",
    ],
)
def test_spans_wishes_and_putting_off_are_no_limit(text: str) -> None:
    assert time_bound(text, valid_times=CLASS_TIMES, reference="18:00") is None


def test_later_or_earlier_asked_bare_is_against_the_hour_the_conversation_has() -> None:
    assert time_bound("tem alguma coisa mais tarde?", reference="18:00") == TimeBound(
        "after", "18:00"
    )
    assert time_bound("e mais cedinho?", reference="19:00") == TimeBound("before", "19:00")
    # With no hour to be later than, it limits nothing.
    assert time_bound("tem alguma coisa mais tarde?") is None


def test_admits_keeps_the_hour_itself_only_when_inclusive() -> None:
    after = TimeBound("after", "19:00")
    assert [t for t in CLASS_TIMES if after.admits(t)] == ["20:00"]
    since = TimeBound("after", "19:00", inclusive=True)
    assert [t for t in CLASS_TIMES if since.admits(t)] == ["19:00", "20:00"]
    assert [t for t in CLASS_TIMES if TimeBound("before", "18:00").admits(t)] == ["07:00"]
