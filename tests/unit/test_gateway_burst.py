"""The quiet window after a message: the latest message's kind decides how long to wait."""

from __future__ import annotations

from services.gateway.burst import Quiet, quiet_after


def test_a_fragment_waits_the_fragment_window() -> None:
    quiet = quiet_after(control=False, fragment=True, window_ms=250, fragment_ms=2500)
    assert quiet == Quiet(ms=2500, rule="fragment")


def test_a_complete_message_waits_only_the_short_window() -> None:
    quiet = quiet_after(control=False, fragment=False, window_ms=250, fragment_ms=2500)
    assert quiet == Quiet(ms=250, rule="window")


def test_a_control_word_starts_at_once_even_in_a_fragment() -> None:
    quiet = quiet_after(control=True, fragment=True, window_ms=250, fragment_ms=2500)
    assert quiet == Quiet(ms=0, rule="control")


def test_both_windows_zero_turn_coalescing_off() -> None:
    for fragment in (True, False):
        quiet = quiet_after(control=False, fragment=fragment, window_ms=0, fragment_ms=0)
        assert quiet.ms == 0


def test_a_fragment_never_waits_less_than_the_short_window() -> None:
    quiet = quiet_after(control=False, fragment=True, window_ms=250, fragment_ms=100)
    assert quiet == Quiet(ms=250, rule="window")
