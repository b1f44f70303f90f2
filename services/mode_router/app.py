"""mode_router service shell: one Part per turn (no text yet), journaled."""

from __future__ import annotations

from shared.contracts import Part, Turn
from shared.service import Decision, Runtime, handle_once
from shared.state import Snapshot, journal_entry


def build(rt: Runtime) -> None:
    async def on_turn(body: bytes) -> None:
        turn = Turn.model_validate_json(body)

        async def decide(_: Snapshot) -> Decision:
            decision = Decision()
            part = Part(
                turn_id=turn.turn_id, conversation_id=turn.conversation_id, source="mode_router"
            )
            decision.outbox.add(rt.keys.merge, part)
            decision.journal.append(journal_entry("mode_router", turn.turn_id, "mode.none"))
            return decision

        await handle_once(rt, turn.conversation_id, turn.turn_id, decide)

    rt.bus.subscribe(rt.keys.turns, "mode_router", on_turn)
