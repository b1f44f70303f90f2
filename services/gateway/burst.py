"""How long the gateway waits for quiet before the waiting messages become a turn.

The latest message decides: a control word starts at once; a fragment (a message that asks
nothing, or only greets: ``shared.nlu.fragment``) waits ``burst_fragment_ms`` for the rest of
what the person is typing; a question waits only the short ``burst_window_ms``. So "oi" /
"quero marcar a experimental" / "sou o Caio, 40" / "iniciante" sent seconds apart become one
turn, while a question alone pays no more than the short window. A fragment never waits less
than the short window: ``burst_fragment_ms`` 0 (or below the window) turns the longer wait off.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Rule = Literal["control", "fragment", "window"]


class Quiet(BaseModel, frozen=True):
    """The wait chosen after one message, and the rule that chose it (journaled)."""

    ms: int
    rule: Rule


def quiet_after(*, control: bool, fragment: bool, window_ms: int, fragment_ms: int) -> Quiet:
    """The quiet window after a message that is (or is not) a control word or a fragment."""
    if control:
        return Quiet(ms=0, rule="control")
    if fragment and fragment_ms > window_ms:
        return Quiet(ms=fragment_ms, rule="fragment")
    return Quiet(ms=window_ms, rule="window")
