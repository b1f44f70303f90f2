"""trial service shell: starts collecting the client's data by asking the name."""

from __future__ import annotations

from shared.contracts import Part, SpecialistTask
from shared.service import Decision, Runtime, handle_once
from shared.state import Snapshot, journal_entry


def build(rt: Runtime) -> None:
    async def on_task(body: bytes) -> None:
        task = SpecialistTask.model_validate_json(body)
        turn = task.turn

        async def decide(snapshot: Snapshot) -> Decision:
            decision = Decision()
            trial = dict(snapshot.get("trial") or {})
            trial.setdefault("stage", "collect_client_info")
            decision.writes["trial"] = trial
            text = rt.pack.text("trial_ask_name", seed=turn.turn_id)
            part = Part(
                turn_id=turn.turn_id,
                conversation_id=turn.conversation_id,
                source="trial",
                text=text,
                asks_question=True,
            )
            decision.outbox.add(rt.keys.merge, part)
            decision.journal.append(
                journal_entry("trial", turn.turn_id, "trial.asked", stage=trial["stage"])
            )
            return decision

        await handle_once(rt, turn.conversation_id, turn.turn_id, decide)

    rt.bus.subscribe(rt.keys.tasks("trial"), "trial", on_task)
