"""``orquestra chat``'s pure parts: reading a line, the business clock, the bubbles."""

from __future__ import annotations

from datetime import datetime

import pytest

from orquestra.chat import ChatClock, Command, bubble, display_width, parse_line
from orquestra.style import Style


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("", None),
        ("   ", None),
        ("oi", Command(None, "oi")),
        ("  quero agendar  ", Command(None, "quero agendar")),
        ("/new", Command("new")),
        ("/AT 2026-02-10T18:00", Command("at", "2026-02-10T18:00")),
        ("/at   +2h ", Command("at", "+2h")),
        ("/", Command(None, "/")),
        ("//new is a message", Command(None, "/new is a message")),
    ],
)
def test_lines_are_messages_or_commands(line: str, command: Command | None) -> None:
    assert parse_line(line) == command


class FakeMonotonic:
    def __init__(self) -> None:
        self.value = 100.0

    def __call__(self) -> float:
        return self.value


def test_the_clock_follows_real_time_until_set_then_keeps_running() -> None:
    tick = FakeMonotonic()
    clock = ChatClock(tick)
    assert clock.now() is None
    clock.apply("2026-02-10T18:00:00-03:00")
    tick.value += 40
    assert clock.now() == datetime.fromisoformat("2026-02-10T18:00:40-03:00")
    clock.apply("+7d")
    tick.value += 5
    assert clock.now() == datetime.fromisoformat("2026-02-17T18:00:45-03:00")
    clock.apply("now")
    assert clock.now() is None


def test_a_naive_time_stays_naive_for_the_gateway_to_read_in_business_time() -> None:
    clock = ChatClock(FakeMonotonic())
    assert clock.apply("2026-02-10T18:00") == datetime(2026, 2, 10, 18, 0)


@pytest.mark.parametrize(("arg", "message"), [("ontem", "not a time"), ("+2h", "set a time")])
def test_bad_clock_arguments_are_explained(arg: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ChatClock(FakeMonotonic()).apply(arg)


def test_bubbles_wrap_and_align_wide_characters() -> None:
    lines = bubble("Agendado! 🎾 Sua aula é terça.\n\nAté lá!", Style(False), width=20)
    assert lines[0].startswith("╭") and lines[-1].startswith("╰")
    widths = {display_width(line) for line in lines}
    assert len(widths) == 1, lines
    assert "│ Até lá!" in "\n".join(lines)
    assert display_width("🎾a") == 3 and display_width("ação") == 4
    colored = bubble("oi", Style(True))
    assert all(line.startswith("\033[32m") for line in colored)
