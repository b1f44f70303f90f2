"""triage service shell: keyword routing to trial / faq / general."""

from __future__ import annotations

from shared.contracts import Part, SpecialistTask, Turn, TurnPlan
from shared.nlu.normalize import normalize
from shared.service import Decision, Runtime, handle_once
from shared.state import Snapshot, journal_entry

KEYWORDS = {
    "trial": ("agendar", "aula experimental", "marcar", "experimental"),
    "faq": ("onde", "endereco", "horario", "preco", "quanto", "valor", "plano"),
}


def route(text: str) -> list[str]:
    norm = normalize(text)
    return [intent for intent, words in KEYWORDS.items() if any(w in norm for w in words)]


def build(rt: Runtime) -> None:
    async def on_turn(body: bytes) -> None:
        turn = Turn.model_validate_json(body)

        async def decide(snapshot: Snapshot) -> Decision:
            decision = Decision()
            routes = route(turn.text)
            inline: list[Part] = []
            if not routes:
                text = rt.pack.text("general_greeting", seed=turn.turn_id)
                inline.append(
                    Part(
                        turn_id=turn.turn_id,
                        conversation_id=turn.conversation_id,
                        source="triage",
                        text=text,
                        asks_question=True,
                    )
                )
            intents = routes or ["general"]
            for name in routes:
                task = SpecialistTask(turn=turn, route=name, intents=intents, text=turn.text)
                decision.outbox.add(rt.keys.tasks(name), task)
            plan = TurnPlan(
                turn_id=turn.turn_id,
                conversation_id=turn.conversation_id,
                expected=[*routes, "mode_router"],
                parts=inline,
            )
            decision.outbox.add(rt.keys.merge, plan)
            decision.writes["triage"] = {"last_intents": intents, "source": "rules"}
            decision.journal.append(
                journal_entry(
                    "triage", turn.turn_id, "triage.routed", intents=intents, source="rules"
                )
            )
            return decision

        await handle_once(rt, turn.conversation_id, turn.turn_id, decide)

    rt.bus.subscribe(rt.keys.turns, "triage", on_turn)
