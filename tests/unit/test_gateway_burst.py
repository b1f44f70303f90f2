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


def test_a_turn_reads_an_unfinished_question_and_its_subject_as_one_sentence() -> None:
    from datetime import UTC, datetime

    from services.gateway.turns import joined_text
    from shared.contracts import InboundMessage
    from shared.nlu.fragment import Fragments
    from shared.pack import load_pack

    at = datetime(2026, 6, 30, 9, tzinfo=UTC)
    texts = ["opa", "quanto custa", "a aula experimental", "", "Paulo"]
    messages = [
        InboundMessage(
            channel="http",
            conversation_id="c1",
            message_id=str(i),
            text=t,
            sent_at=at,
            received_at=at,
        )
        for i, t in enumerate(texts)
    ]
    unfinished = Fragments.from_pack(load_pack("ctsmash")).is_unfinished
    assert joined_text(messages, unfinished) == "opa\nquanto custa a aula experimental\nPaulo"
    assert joined_text(messages[:2], unfinished) == "opa\nquanto custa"
