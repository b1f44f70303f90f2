"""The trial specialist's pure core: one turn in; what to say, the new slices, what to run.

Stages: ``collect_client_info`` (nome, idade, nivel, in any order, over any number of messages)
→ ``ask_date`` (desired_date, desired_time, validated) → ``awaiting_confirmation`` ("sim" books,
"não" goes back to ask_date keeping the client info, a new date or time is validated again) →
``booked`` (status, reschedule and cancel, through the tool gate, the last two after a yes).
``handoff_requested`` when the person asks for someone ("atendente"), is upset
(``shared.nlu.upset``: the reply says sorry first) or gives no usable answer to the same
question ``max_attempts`` times in a row; the next message that says something useful resumes
where it stopped, and after the bot's own handoff a yes or a no answers the paused question.
A plain "no" while a field is asked stops the flow (client info kept), like "cancelar" does;
"cancelar" or "remarcar" with nothing booked and no booking going on says there is nothing to
cancel and offers to book.

No loops, and no giving up on itself (issue 29): a question asked again says exactly what is
missing, with an example (``trial_still_need_*``), after noting what the message did give. Only
an answer that moved nothing counts as failed (``conclude._failed``): a message that gave other
fields is progress, a question (triage saw a question intent, answered by another service) is
re-asked in one line (``trial_reask_*``). A second failed answer in a row hands off with a
summary of what was understood. Every field a message gives is kept, whatever was asked. An
answer put off ("vou ver e te falo") is acknowledged and not asked again, and a field not
given ("prefiro não dizer") gets why it is asked: neither stops the booking.

Two steps, so the core never does I/O. The shell (``services/trial/app.py``), per task:

    config = load_trial_config(pack)
    state = snapshot.model("trial", TrialState)        # None on the first turn
    context = snapshot.model("context", ContextState)  # None when nothing is remembered
    extraction = extract_trial_fields(task.text, now=turn.now, tz=tz,
                                      asked=state.asked if state else None)
    #   (llm/hybrid: a TrialExtraction from the LLM instead, the rules one on any failure)
    plan = plan_turn(task.text, state=state, context=context, now=turn.now, tz=tz,
                     config=config, pack=pack, seed=turn.turn_id, seats_taken=UNREAD_SEATS,
                     allowed_tools=..., mode=..., conversation_id=turn.conversation_id,
                     extraction=extraction, intents=task.intents)
    #   on SeatsNeeded (the plan looked at the seats), or a plan with a tool call:
    dates = seat_lookup_dates(now=turn.now, tz=tz, config=config, state=state,
                              extraction=extraction)
    seats = await store.seats_taken(dates, config.times)
    plan = plan_turn(..., seats_taken=seats, ...)   # the same arguments otherwise
    if plan.tool_call is not None:       # already approved by the tool gate
        result = await run_tool(store, plan.tool_call,
                                conversation_id=turn.conversation_id,
                                capacity=config.seats_per_slot, turn_id=turn.turn_id,
                                now=turn.now)
        outcome = finish_turn(plan, result)
    else:
        outcome = plan.outcome
    # write slices trial=outcome.state and context=outcome.context, send
    # Part(text=outcome.text, asks_question=outcome.asks_question), publish each of
    # outcome.events as DomainEvent(type=e["type"], data=e["data"]), journal outcome.journal.
    # With an LLM: text = fallback_or_nlg(llm(outcome.nlg.messages), outcome.nlg, config.nlg).

``allowed_tools`` is the set of tools the conversation's mode allows (None: no restriction).
A redelivered turn is safe: the store's create and cancel are idempotent by the turn id and a
reschedule to where the booking already is succeeds again, so re-planning gives the same outcome.

The branches live in modules of their own, each importing only those before it: ``turn`` (what a
turn decides from, what a branch decides), ``gating`` (a tool call through the gate),
``before_booking``, ``after_booking``, ``routing`` (which branch a turn takes), ``finishing``
(with the store's result) and ``conclude`` (attempts, handoff, rendering the outcome).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from services.trial.before_booking import ASIDE_ERRORS, ASK_CLIENT
from services.trial.conclude import conclude
from services.trial.extraction import (
    detect_action,
    ensure_trial_defaults,
    extract_trial_fields,
    find_booking_code,
)
from services.trial.finishing import finish
from services.trial.models import (
    CLIENT_FIELDS,
    ContextState,
    ToolCall,
    ToolResult,
    TrialExtraction,
    TrialOutcome,
    TrialState,
)
from services.trial.replies import TextSource
from services.trial.routing import route
from services.trial.summary import SUMMARY_FIELDS
from services.trial.tool_gate import GateDecision
from services.trial.turn import Reply, TrialTurn
from services.trial.validators import ERROR_FIELD, SeatsTaken
from shared.nlu.refusal import refused_day
from shared.nlu.upset import complains, is_upset
from shared.trial.config import TrialConfig


def text_keys(config: TrialConfig) -> frozenset[str]:
    """Every pack text the trial may say (``orquestra pack check`` reports missing ones).

    ``<key>_other`` variants (said when someone else is writing) are optional.
    """
    fixed = {
        "trial_ask_date",
        "trial_ask_confirmation",
        "trial_confirmation_unclear",
        "trial_confirmation_declined",
        "trial_validation_failed",
        "trial_option_day",
        "trial_no_options",
        "trial_too_young",
        "trial_guardian_note",
        "trial_guardian_note_unnamed",
        "trial_noted",
        "trial_summary",
        "trial_summary_empty",
        "trial_booked",
        "trial_status",
        "trial_status_none",
        "trial_no_active_booking",
        "trial_cancelled",
        "trial_already_cancelled",
        "trial_cancelled_status",
        "trial_flow_stopped",
        "trial_nothing_to_cancel",
        "trial_nothing_to_reschedule",
        "trial_change_kept",
        "trial_reschedule_ask",
        "trial_reschedule_same",
        "trial_rescheduled",
        "trial_handoff",
        "trial_handoff_attempts",
        "trial_handoff_upset",
        "trial_complaint_sorry",
        "trial_handoff_waiting",
        "trial_fact_time",
        "trial_party_named",
        "trial_party_one_more",
        "trial_party_more",
        "trial_party_next_named",
        "trial_party_next",
        "trial_party_not_yet",
        "trial_party_fits",
        "trial_party_too_young",
        "trial_leave_granted",
        "trial_party_too_many",
        "trial_party_not_yet_unnamed",
        "trial_party_declined",
        "trial_status_of",
        "trial_times_answer",
        "trial_closed_note",
        "trial_aside_open_day",
        "trial_ask_name_writer",
        "trial_day_refused",
        "trial_bound_after",
        "trial_bound_after_inclusive",
        "trial_bound_before",
        "trial_bound_before_inclusive",
        "trial_bound_one",
        "trial_bound_options",
        "trial_bound_full",
        "trial_bound_none_after",
        "trial_bound_none_before",
    }
    fixed |= {f"trial_aside_{code}" for code in ASIDE_ERRORS}
    fixed |= set(ASK_CLIENT.values())
    fixed |= {f"trial_{code}" for code in ERROR_FIELD}
    for name in CLIENT_FIELDS:
        fixed |= {f"trial_still_need_{name}", f"trial_reask_{name}"}
    for name in SUMMARY_FIELDS:
        fixed |= {f"trial_fact_{name}", f"trial_field_{name}"}
    fixed |= {"trial_reask_date", "trial_reask_time", "trial_reask_confirmation"}
    fixed.add("trial_field_confirmation")
    gate = config.gate
    fixed |= set(gate.confirm_texts.values()) | set(gate.missing_context_texts.values())
    fixed |= {gate.not_allowed_text, gate.invalid_args_text}
    return frozenset(fixed)


@dataclass(frozen=True)
class TrialPlan:
    """The first step's result: a tool call to run (then ``finish_turn``) or the outcome."""

    tool_call: ToolCall | None
    outcome: TrialOutcome | None
    _turn: TrialTurn = field(repr=False)
    _reply: Reply = field(repr=False)

    @property
    def gate(self) -> GateDecision | None:
        """The tool gate's decision on this turn's tool call, if one was proposed."""
        return self._reply.gate


def plan_turn(
    text: str,
    *,
    state: TrialState | None,
    context: ContextState | None,
    now: datetime,
    tz: ZoneInfo,
    config: TrialConfig,
    pack: TextSource,
    seed: str,
    seats_taken: SeatsTaken,
    allowed_tools: set[str] | None,
    mode: str | None = None,
    conversation_id: str = "",
    extraction: TrialExtraction | None = None,
    intents: list[str] | None = None,
) -> TrialPlan:
    """Decide the turn up to the tool call, if one is needed (call sequence in the module doc).

    ``seed`` is the turn id (text variants, booking idempotency); ``seats_taken`` the seats taken
    per (date, time) as read from the store; ``extraction`` an LLM's reading of the message, or
    None for the rules extractor.
    """
    before = ensure_trial_defaults(state)
    if extraction is None:
        extraction = extract_trial_fields(
            text,
            now=now,
            tz=tz,
            asked=before.asked,
            valid_times=config.times,
            reference_date=before.desired_date,
            reference_time=before.desired_time,
            class_weekday=config.weekday,
            levels_by_time=config.levels_by_time,
        )
    turn = TrialTurn(
        text=text,
        now=now,
        now_local=now.astimezone(tz),
        config=config,
        pack=pack,
        seed=seed,
        seats=seats_taken,
        allowed_tools=frozenset(allowed_tools) if allowed_tools is not None else None,
        mode=mode,
        conversation_id=conversation_id,
        intents=tuple(intents or ()),
        extraction=extraction,
        action=detect_action(text, list(intents or ()), config),
        code=find_booking_code(text, config),
        before=before,
        question=_is_question(text, extraction, intents or [], config),
        answered_elsewhere=bool(set(intents or ()) & set(config.question_intents)),
        idle=state is not None
        and before.asked is None
        and before.stage in ("collect_client_info", "ask_date", "cancelled"),
        upset=is_upset(text),
        complaint=complains(text),
        refused_day=_refused(text, now, tz),
    )
    reply = route(turn, before, context or ContextState())
    if reply.tool is not None:
        return TrialPlan(tool_call=reply.tool, outcome=None, _turn=turn, _reply=reply)
    return TrialPlan(tool_call=None, outcome=conclude(turn, reply), _turn=turn, _reply=reply)


def _refused(text: str, now: datetime, tz: ZoneInfo) -> str | None:
    day = refused_day(text, now, tz)
    return day.isoformat() if day is not None else None


def _is_question(
    text: str, extraction: TrialExtraction, intents: list[str], config: TrialConfig
) -> bool:
    """Whether the message asks something rather than answering the trial: triage saw a
    question intent, or it asks ("?") and gives no client field and no yes/no (a day it
    mentions may be part of the question: "terça tenho médico... tem de manhã?")."""
    if set(intents) & set(config.question_intents):
        return True
    client = (extraction.nome, extraction.idade, extraction.nivel)
    return "?" in text and all(v is None for v in client) and extraction.confirmed is None


def finish_turn(plan: TrialPlan, result: ToolResult) -> TrialOutcome:
    """The outcome of a turn whose approved tool call the shell ran with ``result``."""
    if plan.tool_call is None:
        raise ValueError("this plan has no tool call: use plan.outcome")
    turn, reply = plan._turn, plan._reply
    finished = finish(turn, reply, plan.tool_call, result)
    finished.gate = reply.gate
    return conclude(turn, finished, result=result)
