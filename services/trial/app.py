"""trial service shell: load slices and seats, plan the turn, run the approved tool, commit,
publish the part and the domain events. Every decision is in ``flow.py`` (call sequence there).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from services.trial.commands import CommandHandler
from services.trial.extraction import extract_trial_fields, points_back, with_memory
from services.trial.flow import TrialPlan, finish_turn, plan_turn
from services.trial.llm import (
    PhrasedReply,
    extraction_messages,
    llm_worth_asking,
    merge_extractions,
)
from services.trial.models import ContextState, TrialExtraction, TrialOutcome, TrialState
from services.trial.nlg import fallback_or_nlg
from services.trial.privacy import PrivacyConfig, asks_erasure, erasure_handoff
from services.trial.schedule import seat_lookup_dates
from services.trial.staff import lifecycle_events
from services.trial.tools import run_tool
from services.trial.validators import UNREAD_SEATS, SeatsNeeded, SeatsTaken
from shared.attribution import attribution
from shared.capabilities import CapabilitiesConfig, allowed_tools
from shared.contracts import SpecialistTask, Turn, utcnow
from shared.service import Runtime, TurnDecision, ask_llm, on_tasks
from shared.state import Snapshot
from shared.trial.bookings import BookingStore
from shared.trial.config import load_trial_config


def build(rt: Runtime) -> None:
    config = load_trial_config(rt.pack)
    capabilities = (
        rt.pack.section("capabilities", CapabilitiesConfig) if rt.pack.has("capabilities") else None
    )
    store = BookingStore(
        rt.redis,
        rt.keys.prefix + "trial:",
        id_prefix=config.booking_id_prefix,
        tenant=rt.keys.tenant,
    )
    privacy = rt.pack.section("privacy", PrivacyConfig) if rt.pack.has("privacy") else None
    mode_setting = rt.settings.nlu_mode

    async def extract(
        turn: Turn, text: str, state: TrialState | None, journal: list[str]
    ) -> TrialExtraction:
        asked = state.asked if state else None
        rules = extract_trial_fields(
            text,
            now=turn.now,
            tz=rt.tz,
            asked=asked,
            valid_times=config.times,
            reference_date=state.desired_date if state else None,
            reference_time=state.desired_time if state else None,
            class_weekday=config.weekday,
            levels_by_time=config.levels_by_time,
        )
        if mode_setting == "rules" or (
            mode_setting == "hybrid" and not llm_worth_asking(text, rules, asked)
        ):
            return rules
        messages = extraction_messages(text, now=turn.now, tz=rt.tz, state=state)
        llm = await ask_llm(
            rt,
            messages,
            TrialExtraction,
            turn_id=turn.turn_id,
            purpose="trial.extract",
            journal=journal,
        )
        return merge_extractions(rules, llm) if llm else rules

    async def decide(task: SpecialistTask, snapshot: Snapshot, decision: TurnDecision) -> None:
        turn = task.turn
        state = snapshot.model("trial", TrialState)
        context = snapshot.model("context", ContextState)
        if privacy is not None and asks_erasure(task.text, privacy):
            erasure = erasure_handoff(
                state, context, pack=rt.pack, seed=turn.turn_id, config=privacy
            )
            conclude(decision, erasure, erasure.text, erasure.events, snapshot)
            return
        mode = snapshot.mode()
        extraction = await extract(turn, task.text, state, decision.journal)
        extraction = with_memory(
            extraction,
            snapshot.memory(),
            turn_id=turn.turn_id,
            now=turn.now,
            window=timedelta(minutes=config.earlier_messages_minutes),
            starting=state is None,
            points_back=points_back(task.text, state, config),
        )
        tools = allowed_tools(mode, capabilities) if capabilities and mode else None

        def planned(seats: SeatsTaken) -> TrialPlan:
            return plan_turn(
                task.text,
                state=state,
                context=context,
                now=turn.now,
                tz=rt.tz,
                config=config,
                pack=rt.pack,
                seed=turn.turn_id,
                seats_taken=seats,
                allowed_tools=tools,
                mode=mode,
                conversation_id=turn.conversation_id,
                extraction=extraction,
                intents=task.intents,
            )

        # The seats are read only for a plan that looks at them, or that calls a tool (whose
        # outcome may offer other times): most turns of a booking do neither.
        try:
            plan = planned(UNREAD_SEATS)
            needs_seats = plan.tool_call is not None
        except SeatsNeeded:
            needs_seats = True
        if needs_seats:
            dates = seat_lookup_dates(
                now=turn.now, tz=rt.tz, config=config, state=state, extraction=extraction
            )
            plan = planned(await store.seats_taken(dates, config.times))
        reason = ""
        if plan.tool_call is not None:
            reason = str(plan.tool_call.args.get("reason") or "")
            result = await run_tool(
                store,
                plan.tool_call,
                conversation_id=turn.conversation_id,
                capacity=config.seats_per_slot,
                turn_id=turn.turn_id,
                now=turn.now,
                contact_name=turn.messages[-1].metadata.get("profile_name"),
            )
            if plan.tool_call.tool == "create_booking" and await rt.store.erased(
                turn.conversation_id, turn.turn_id
            ):
                # The person was erased while this booking was being made: the erase's own
                # pass may have run before it existed (services/gateway/privacy.py).
                await store.anonymize(turn.conversation_id, now=utcnow())
            outcome = finish_turn(plan, result)
        else:
            outcome = plan.outcome
        assert outcome is not None
        text = outcome.text
        if mode_setting == "llm" and outcome.nlg is not None:
            phrased = await ask_llm(
                rt,
                outcome.nlg.messages,
                PhrasedReply,
                turn_id=turn.turn_id,
                purpose="trial.phrase",
                journal=decision.journal,
            )
            text = fallback_or_nlg(phrased.text if phrased else None, outcome.nlg, config.nlg)
        events = lifecycle_events(outcome.events, turn.conversation_id, reason=reason)
        conclude(decision, outcome, text, events, snapshot)

    def conclude(
        decision: TurnDecision,
        outcome: TrialOutcome,
        text: str,
        events: list[dict[str, Any]],
        snapshot: Snapshot,
    ) -> None:
        meta = snapshot.meta()
        decision.writes["trial"] = outcome.state
        decision.writes["context"] = outcome.context
        stage = {"stage": outcome.state.stage}
        decision.reply(text, asks_question=outcome.asks_question, data=stage)
        for event in events:
            data = event.get("data", {})
            if event["type"] == "trial.booked":
                # The booking carries the conversation's attribution (ad click or origin).
                data = {**data, **attribution(meta)}
            decision.emit(event["type"], data)
        decision.record("trial.decided", **outcome.journal)

    on_tasks(rt, decide)
    rt.bus.subscribe(rt.keys.commands("trial"), "trial", CommandHandler(rt, store, config).handle)
