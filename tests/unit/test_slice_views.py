"""Public slice views: what a service may read of a slice another service owns."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import AliasPath

from services.mode_router.state import ModeState
from services.mode_router.types import ConversationMode
from services.triage.models import TriageState
from services.trial.models import PartyMember, PendingTool, TrialState
from shared.contracts import FlowView, MetaView, ModeView, TriageView, TrialView
from shared.state import Snapshot

AT = datetime(2026, 2, 10, 18, 0, tzinfo=UTC)


def test_a_view_only_names_fields_its_owner_writes() -> None:
    assert set(ModeView.model_fields) <= set(ModeState.model_fields)
    read: set[str] = set()
    for name, info in TrialView.model_fields.items():
        alias = info.validation_alias
        read.add(str(alias.path[0]) if isinstance(alias, AliasPath) else alias or name)
    assert read <= set(TrialState.model_fields)
    assert set(TriageView.model_fields) <= set(TriageState.model_fields)
    assert set(FlowView.model_fields) <= set(TrialView.model_fields)


def test_the_triage_is_read_through_its_view() -> None:
    state = TriageState(last_intents=["trial", "faq"])
    view = Snapshot({"triage": state.model_dump(mode="json")}).model("triage", TriageView)
    assert view == TriageView(last_intents=["trial", "faq"])


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


def test_the_trial_is_read_through_its_view_from_the_owners_own_dump() -> None:
    """A field the trial renames or retypes breaks this test, not the readers in production:
    every field of the view is set here to a value other than its default."""
    pending = PendingTool(tool="cancel_booking", args={}, question="Cancelo?", asked_at=AT)
    state = TrialState(
        stage="booked",
        asked="confirmation",
        pending_tool=pending,
        rescheduling=True,
        nome="Sofia",
        idade=9,
        nivel="iniciante",
        desired_date="2026-02-10",
        desired_time="19:00",
        booking_id="CT-7K2Q",
        contact_name="Ana",
        for_someone_else=True,
        next_person=PartyMember(nome="Caio"),
    )
    expected = TrialView(
        stage="booked",
        awaiting_field="confirmation",
        confirming="cancel_booking",
        rescheduling=True,
        offering_next=True,
        nome="Sofia",
        idade=9,
        nivel="iniciante",
        desired_date="2026-02-10",
        desired_time="19:00",
        booking_id="CT-7K2Q",
        contact_name="Ana",
    )
    assert expected.model_fields_set == set(TrialView.model_fields)
    for name, info in TrialView.model_fields.items():
        assert getattr(expected, name) != info.default, name
    snapshot = Snapshot({"trial": {**state.model_dump(mode="json"), "_v": 4}})
    assert snapshot.trial() == expected
    assert Snapshot({"trial": None}).trial() is None
    assert Snapshot({}).trial() is None


def test_a_trial_waiting_for_nothing_reads_as_such() -> None:
    view = Snapshot({"trial": TrialState().model_dump(mode="json")}).trial()
    assert view == TrialView(stage="collect_client_info")
    assert view is not None and view.awaiting_field is None and view.confirming is None


def test_the_meta_is_read_through_its_view() -> None:
    meta = {"channel": "whatsapp", "contact": "5511999990000", "handoff": "bot", "_v": 2}
    assert Snapshot({"meta": meta}).meta() == MetaView(channel="whatsapp", contact="5511999990000")
    assert Snapshot({}).meta() is None
