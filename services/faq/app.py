"""faq service shell: answers every question with the pack's configured line."""

from __future__ import annotations

from shared.contracts import Part, SpecialistTask
from shared.service import Decision, Runtime, handle_once
from shared.state import Snapshot, journal_entry


def build(rt: Runtime) -> None:
    async def on_task(body: bytes) -> None:
        task = SpecialistTask.model_validate_json(body)
        turn = task.turn

        async def decide(_: Snapshot) -> Decision:
            decision = Decision()
            text = rt.pack.text("faq_default", seed=turn.turn_id)
            part = Part(
                turn_id=turn.turn_id, conversation_id=turn.conversation_id, source="faq", text=text
            )
            decision.outbox.add(rt.keys.merge, part)
            decision.journal.append(journal_entry("faq", turn.turn_id, "faq.answered"))
            return decision

        await handle_once(rt, turn.conversation_id, turn.turn_id, decide)

    rt.bus.subscribe(rt.keys.tasks("faq"), "faq", on_task)
