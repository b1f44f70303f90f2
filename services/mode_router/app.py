"""mode_router service shell: every turn (its own group on the turns stream) and every domain
event go through the pure router; the decision is committed, journaled as MODE_DECISION and,
for turns, sent to the merger as a Part (the micro-confirmation question when PENDING)."""

from __future__ import annotations

from services.mode_router.config import ModeRouterConfig
from services.mode_router.router import ModeOutcome, concerns, decide, on_event
from services.mode_router.state import ModeState
from shared.contracts import DomainEvent, Turn
from shared.service import Decision, Runtime, TurnDecision, handle_once, on_turns
from shared.state import Snapshot, journal_entry


def build(rt: Runtime) -> None:
    config = ModeRouterConfig.from_pack(rt.pack)

    def record(decision: Decision, outcome: ModeOutcome, turn_id: str | None) -> None:
        decision.writes["mode"] = outcome.state
        decision.journal.append(
            journal_entry("mode_router", turn_id, "MODE_DECISION", **outcome.record)
        )
        rt.log.info("MODE_DECISION", **outcome.record)

    async def decide_turn(turn: Turn, snapshot: Snapshot, decision: TurnDecision) -> None:
        first = turn.first
        outcome = decide(
            snapshot.model("mode", ModeState),
            conversa_id=turn.conversation_id,
            text=turn.text,
            now=turn.now,
            config=config,
            previous_message_at=turn.previous_message_at,
            origin=first.origin,
            campaign_mode=first.campaign_mode,
            turn_id=turn.turn_id,
        )
        record(decision, outcome, turn.turn_id)
        decision.reply(
            outcome.question,
            asks_question=outcome.question is not None,
            data={"mode": outcome.state.mode, "confirmation_type": outcome.confirmation_type},
        )

    async def on_domain_event(body: bytes) -> None:
        event = DomainEvent.model_validate_json(body)
        if not concerns(event.type, config):
            return

        async def decide_event(snapshot: Snapshot) -> Decision:
            decision = Decision()
            outcome = on_event(
                snapshot.model("mode", ModeState),
                conversa_id=event.conversation_id,
                event_type=event.type,
                now=event.at,
                config=config,
                turn_id=event.turn_id,
            )
            if outcome is not None:
                record(decision, outcome, event.turn_id)
            return decision

        await handle_once(
            rt, event.conversation_id, f"event:{event.event_id}", decide_event, acknowledges=True
        )

    on_turns(rt, decide_turn)
    rt.bus.subscribe(rt.keys.events, "mode_router", on_domain_event)
