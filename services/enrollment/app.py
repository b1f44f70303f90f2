"""enrollment service shell: load the slice and the mode, decide (``core.decide``), store the
request once, commit, publish the part, the event and the handoff."""

from __future__ import annotations

from services.enrollment.config import load_config
from services.enrollment.core import EnrollmentState, decide
from services.enrollment.store import EnrollmentStore
from shared.capabilities import CapabilitiesConfig, tool_allowed, violation_record
from shared.contracts import SpecialistTask, utcnow
from shared.service import Runtime, TurnDecision, on_tasks
from shared.state import Snapshot


def build(rt: Runtime) -> None:
    config = load_config(rt.pack)
    capabilities = (
        rt.pack.section("capabilities", CapabilitiesConfig) if rt.pack.has("capabilities") else None
    )
    store = EnrollmentStore(rt.redis, rt.keys)

    async def decide_task(task: SpecialistTask, snapshot: Snapshot, decision: TurnDecision) -> None:
        turn = task.turn
        mode = snapshot.mode()
        memory = snapshot.memory()
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
            earlier=memory.heard_before(turn.turn_id) if memory else None,
        )
        journal = dict(outcome.journal)
        if outcome.journal.get("refused") == "not_allowed":
            journal["violation"] = violation_record(
                turn.conversation_id, mode or "", "tool", config.tool
            )
        if outcome.request is not None:
            journal["created"] = await store.create(outcome.request)
            if await rt.store.erased(turn.conversation_id, turn.turn_id):
                # Erased while the request was being made (services/gateway/privacy.py).
                await store.anonymize(turn.conversation_id, now=utcnow())
        if outcome.state is not None:
            decision.writes["enrollment"] = outcome.state
        stage = outcome.state.stage if outcome.state else None
        decision.reply(outcome.text, asks_question=outcome.asks_question, data={"stage": stage})
        for event in outcome.events:
            decision.emit(event["type"], event["data"])
        decision.record("enrollment.decided", **journal)

    on_tasks(rt, decide_task)
