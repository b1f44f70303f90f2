"""triage service shell: load slices, classify (rules, maybe LLM), decide, commit, publish.

Every decision is in the pure core (``core.triage_turn``); this file only does I/O.
"""

from __future__ import annotations

from services.registry import BY_NAME, SPECIALISTS
from services.triage.config import TriageConfig, load_config
from services.triage.core import asks_llm, follows_faq, triage_turn
from services.triage.faq_evidence import faq_knows
from services.triage.llm_prompt import from_llm, llm_messages
from services.triage.memory import MemoryState, expecting_from, remember
from services.triage.models import TriageResult, TriageState, llm_triage_model
from services.triage.rules import active_flow, classify, mode_awaits_answer
from shared.attribution import source_of
from shared.contracts import FlowView, FunnelStep, ModeView, Part, SpecialistTask, Turn, TurnPlan
from shared.funnel import plan_patterns, steps_of_turn
from shared.notices import notice_keys
from shared.pack import Pack, PackError
from shared.service import Runtime, TurnDecision, ask_llm, on_turns
from shared.state import Snapshot
from shared.trial.config import load_trial_config


def load_routed_config(pack: Pack) -> TriageConfig:
    """The pack's triage section, its routes checked against the registered specialists (at
    start-up and by ``orquestra pack check``): a route to a service nobody registered, or to one
    whose section the pack lacks (it idles, out of the pack's turns), would publish tasks no one
    reads, each turn then waiting for its merge deadline."""
    config = load_config(pack)
    unknown = sorted(set(config.routes.values()) - set(SPECIALISTS))
    if unknown:
        raise PackError(
            f"pack {pack.name!r}: triage.routes names {unknown}, not a registered specialist "
            f"({', '.join(SPECIALISTS)}): fix the route or add the service's spec to "
            "services/registry.py"
        )
    absent = sorted(r for r in set(config.routes.values()) if BY_NAME[r].out_of(pack))
    if absent:
        needs = ", ".join(f"{r} needs {BY_NAME[r].needs_section!r}" for r in absent)
        raise PackError(
            f"pack {pack.name!r}: triage.routes names {absent}, out of this pack's turns "
            f"({needs}, a section the pack lacks): route those intents elsewhere or add it"
        )
    return config


def build(rt: Runtime) -> None:
    pack_config = load_routed_config(rt.pack)
    mode = rt.settings.nlu_mode
    knows = faq_knows(rt.pack, pack_config)
    llm_schema = llm_triage_model(pack_config.intents)
    funnel_patterns = plan_patterns(rt.pack)
    # Class times make "às 8" 20:00 in the memory as in the trial.
    class_times = load_trial_config(rt.pack).times if rt.pack.has("trial") else None
    # The trial's rule for the level of a time played, so the memory reads it alike.
    levels_by_time = load_trial_config(rt.pack).levels_by_time if rt.pack.has("trial") else ()

    def remember_turn(turn: Turn, snapshot: Snapshot, decision: TurnDecision) -> None:
        """The memory slice after this turn's messages (``memory.remember``), journaled."""
        trial = snapshot.trial()
        memory, noted = remember(
            snapshot.model("memory", MemoryState),
            [(message.message_id, message.text) for message in turn.messages],
            turn_id=turn.turn_id,
            now=turn.now,
            tz=rt.tz,
            expecting=expecting_from(trial.awaiting_field if trial else None),
            valid_times=class_times,
            levels_by_time=levels_by_time,
        )
        decision.writes["memory"] = memory
        if noted:
            decision.record("memory.noted", **noted)

    async def understand(
        turn: Turn,
        state: TriageState | None,
        trial_stage: str | None,
        config: TriageConfig,
        journal: list[str],
    ) -> TriageResult:
        rules = classify(
            turn.text,
            trial_stage=trial_stage,
            config=config,
            pack=rt.pack,
            seed=turn.turn_id,
            knows=knows,
            follow_up=follows_faq(state),
            now=turn.now,
        )
        if not asks_llm(mode, turn.text, rules, state, turn.now, config):
            return rules
        messages = llm_messages(turn.text, trial_stage=trial_stage, config=config)
        answer = await ask_llm(
            rt, messages, llm_schema, turn_id=turn.turn_id, purpose="triage", journal=journal
        )
        return from_llm(answer, trial_stage=trial_stage, config=config) if answer else rules

    async def decide(turn: Turn, snapshot: Snapshot, decision: TurnDecision) -> None:
        remember_turn(turn, snapshot, decision)
        state = snapshot.model("triage", TriageState)
        slices = {
            c.state_slice: snapshot.model(c.state_slice, FlowView) for c in pack_config.contexts
        }
        config, trial_stage = active_flow(pack_config, slices)
        result = await understand(turn, state, trial_stage, config, decision.journal)
        outcome = triage_turn(
            turn.text,
            state=state,
            trial_stage=trial_stage,
            now=turn.now,
            config=config,
            pack=rt.pack,
            seed=turn.turn_id,
            classified=result,
            mode_pending=mode_awaits_answer(snapshot.model("mode", ModeView), turn.turn_id),
            knows=knows,
        )
        for route in outcome.routes:
            decision.ask(
                SpecialistTask(
                    turn=turn,
                    route=route,
                    intents=outcome.intents,
                    text=outcome.route_texts.get(route, outcome.text),
                    forced_by_clarification=outcome.forced_by_clarification,
                )
            )
        inline = [
            Part(
                turn_id=turn.turn_id,
                conversation_id=turn.conversation_id,
                source="triage",
                text=rt.pack.text(key, seed=turn.turn_id),
            )
            for key in notice_keys(turn.messages, rt.pack.sections.get("texts", {}))
        ]
        if outcome.inline_text:
            inline.append(
                Part(
                    turn_id=turn.turn_id,
                    conversation_id=turn.conversation_id,
                    source="triage",
                    text=outcome.inline_text,
                    asks_question=outcome.asks_question,
                )
            )
        plan = TurnPlan(
            turn_id=turn.turn_id,
            conversation_id=turn.conversation_id,
            expected=[*outcome.routes, "mode_router"],
            parts=inline,
        )
        decision.outbox.add(rt.keys.route(rt.keys.merge, turn.conversation_id), plan)
        told = state.funnel if state else []
        shown = steps_of_turn(turn, outcome.routes, funnel_patterns)
        source = source_of(snapshot.meta())
        for step in (new := [s for s in shown if s not in told]):
            decision.outbox.add(
                rt.keys.route(rt.keys.funnel, turn.conversation_id),
                FunnelStep(
                    conversation_id=turn.conversation_id, step=step, at=turn.now, source=source
                ),
            )
        decision.writes["triage"] = outcome.state.model_copy(update={"funnel": told + new})
        decision.record("triage.decided", **outcome.journal)

    on_turns(rt, decide)
