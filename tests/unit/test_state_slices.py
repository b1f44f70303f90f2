"""A state hash's slices as a handler gets them (``shared.state.snapshot_of``): each decoded
only when asked for, versions read off what ``encoded_write`` stored, newer slices in place of
those read, and the state a commit leaves built from the slices' text as read."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from shared.contracts import Turn
from shared.service import turn_of
from shared.state import IN_FLIGHT, Snapshot, encoded_write, snapshot_of, state_after

# Not JSON: any decode of this slice fails.
BROKEN = '{"stage": ,"_v":4}'


def test_a_slice_nobody_asks_for_is_never_decoded() -> None:
    snapshot = snapshot_of({"meta": '{"turn_id":"t1","_v":2}', "trial": BROKEN, IN_FLIGHT: "[]"})
    assert snapshot.get("meta") == {"turn_id": "t1", "_v": 2}
    assert list(snapshot.slices) == ["meta", "trial"]
    with pytest.raises(ValueError):
        snapshot.get("trial")


def test_a_version_is_read_off_the_end_of_the_stored_slice() -> None:
    snapshot = snapshot_of({"trial": BROKEN, "mode": '{"_v": 3, "mode": "discovery"}'})
    assert snapshot.version("trial") == 4  # not decoded
    assert snapshot.version("mode") == 3  # written by another writer: decoded
    assert snapshot.version("memory") == 0
    assert encoded_write(snapshot, "trial", {"stage": "booked"}).endswith('"_v":5}')


def test_newer_slices_replace_those_read_and_an_absent_one_is_absent() -> None:
    read = {"meta": '{"_v":1}', "mode": '{"mode":"discovery","_v":1}', "trial": '{"_v":2}'}
    newer = Snapshot({"mode": {"mode": "closing", "_v": 2}, "trial": None})
    snapshot = snapshot_of(read, newer=newer)
    assert snapshot.get("mode") == {"mode": "closing", "_v": 2}
    assert snapshot.version("mode") == 2 and snapshot.version("trial") == 0
    state = state_after(snapshot, {})
    assert state["meta"] == '{"_v":1}'  # the text as read
    assert json.loads(state["mode"]) == {"mode": "closing", "_v": 2}
    assert "trial" not in state


def test_newer_slices_with_their_text_keep_it() -> None:
    newer = snapshot_of({"mode": '{"mode":"closing","_v":2}'})
    snapshot = snapshot_of({"mode": '{"mode":"discovery","_v":1}'}, newer=newer)
    assert state_after(snapshot, {})["mode"] == '{"mode":"closing","_v":2}'
    assert snapshot.version("mode") == 2


def test_a_turn_taken_by_several_subscriptions_is_decoded_once() -> None:
    """Services together, triage and the mode router take the same turn, each from its own
    copy of the message: both get the one turn decoded, without its state, and the state."""
    state = {"meta": '{"turn_id": "t1", "_v": 3}', "memory": '{"facts": {}, "_v": 1}'}
    turn = Turn(
        turn_id="t1", conversation_id="c1", channel="http", seq=1, messages=[], text="oi",
        now=datetime(2026, 3, 2, 15, 0, tzinfo=UTC), state=state,
    )  # fmt: skip
    body = turn.model_dump_json().encode()
    first, second = turn_of(bytes(body)), turn_of(bytes(bytearray(body)))
    assert first[0] is second[0] and first[1] is second[1]
    assert first[0].state is None and first[0].turn_id == "t1"
    assert first[1] == state
