"""A burst's messages are lines of one turn: a "não" that opens a message corrects what comes
after it, it does not take back the hour that ended the message before (sentences written for
these tests)."""

from __future__ import annotations

from datetime import time

import pytest

from shared.nlu.dates import resolve_time


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("quinta dia 4 às 18h\nnão, espera\nprefiro dia 11", time(18, 0)),
        ("às 20h\nnão pera\nàs 19h", time(19, 0)),
        ("às 20h não, às 19h", time(19, 0)),
        ("pode ser 7h não", None),
    ],
)
def test_a_no_opening_the_next_message_keeps_the_hour_before(text: str, expected: time) -> None:
    assert resolve_time(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fechado! os 4 no mesmo horário, certo?", None),
        ("as duas juntas então", None),
        ("às 4 da tarde", time(16, 0)),
        ("às 20h na mesma turma", time(20, 0)),
    ],
)
def test_a_count_of_people_is_no_hour(text: str, expected: time | None) -> None:
    assert resolve_time(text) == expected
