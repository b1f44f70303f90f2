"""enrollment service shell: load the slice and the mode, decide (``core.decide``), store the
request once, commit, publish the part, the event and the handoff."""

from __future__ import annotations

from services.enrollment.config import load_config
from services.enrollment.core import EnrollmentState, decide
from services.enrollment.store import EnrollmentStore
from shared.capabilities import CapabilitiesConfig, tool_allowed, violation_record
from shared.contracts import DomainEvent, Part, SpecialistTask
from shared.service import Decision, Runtime, handle_once
from shared.state import Snapshot, journal_entry


def build(rt: Runtime) -> None:
    config = load_config(rt.pack)
    capabilities = (
        rt.pack.section("capabilities", CapabilitiesConfig) if rt.pack.has("capabilities") else None
    )
    store = EnrollmentStore(rt.redis, rt.keys)

    async def on_task(body: bytes) -> None:
        task = SpecialistTask.model_validate_json(body)
        turn = task.turn

        async def decide_turn(snapshot: Snapshot) -> Decision:
            decision = Decision()
            mode = snapshot.mode()
            allowed = not (capabilities and mode) or tool_allowed(mode, config.tool, capabilities)
            outcome = decide(
                task.text,
                state=snapshot.model("enrollment", EnrollmentState),
                config=config,
                texts=rt.pack,
                seed=turn.turn_id,
                now=turn.now,
                conversation_id=turn.conversation_id,
                turn_id=turn.turn_id,
                allowed=allowed,
            )
            journal = dict(outcome.journal)
            if outcome.journal.get("refused") == "not_allowed":
                journal["violation"] = violation_record(
                    turn.conversation_id, mode or "", "tool", config.tool
                )
            if outcome.request is not None:
                journal["created"] = await store.create(outcome.request)
            if outcome.state is not None:
                decision.writes["enrollment"] = outcome.state
            part = Part(
                turn_id=turn.turn_id,
                conversation_id=turn.conversation_id,
                source="enrollment",
                text=outcome.text,
                asks_question=outcome.asks_question,
                data={"stage": outcome.state.stage if outcome.state else None},
            )
            decision.outbox.add(rt.keys.route(rt.keys.merge, turn.conversation_id), part)
            for event in outcome.events:
                decision.outbox.add(
                    rt.keys.route(rt.keys.events, turn.conversation_id),
                    DomainEvent(
                        type=event["type"],
                        conversation_id=turn.conversation_id,
                        turn_id=turn.turn_id,
                        at=turn.now,
                        data=event["data"],
                    ),
                )
            decision.journal.append(
                journal_entry("enrollment", turn.turn_id, "enrollment.decided", **journal)
            )
            return decision

        await handle_once(rt, turn.conversation_id, turn.turn_id, decide_turn)

    rt.bus.subscribe(rt.keys.tasks("enrollment"), "enrollment", on_task)
