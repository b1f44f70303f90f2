"""Public slice views: what a service may read of a slice another service owns."""

from __future__ import annotations

from datetime import UTC, datetime

from services.mode_router.state import ModeState
from services.mode_router.types import ConversationMode
from shared.contracts import ModeView
from shared.state import Snapshot


def test_a_view_only_names_fields_its_owner_writes() -> None:
    assert set(ModeView.model_fields) <= set(ModeState.model_fields)


def test_the_mode_is_read_through_its_view() -> None:
    state = ModeState(
        mode=ConversationMode.OFERTA,
        source="test",
        updated_at=datetime(2026, 2, 10, 18, 0, tzinfo=UTC),
        updated_reason="test",
        last_turn_id="t1",
    )
    snapshot = Snapshot({"mode": {**state.model_dump(mode="json"), "_v": 3}})
    assert snapshot.mode() == "oferta"
    view = snapshot.model("mode", ModeView)
    assert view is not None and view.last_turn_id == "t1"
    assert Snapshot({"mode": None}).mode() is None
    assert Snapshot({}).mode() is None
