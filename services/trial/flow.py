"""The trial specialist's pure core: one turn in; what to say, the new slices, what to run.

Stages: ``collect_client_info`` (nome, idade, nivel, in any order, over any number of messages)
→ ``ask_date`` (desired_date, desired_time, validated) → ``awaiting_confirmation`` ("sim" books,
"não" goes back to ask_date keeping the client info, a new date or time is validated again) →
``booked`` (status, reschedule and cancel, through the tool gate, the last two after a yes).
``handoff_requested`` when the person asks for someone ("atendente") or fails the same question
``max_attempts`` times; the next message that says something useful resumes where it stopped.
A plain "no" while a field is asked stops the flow (client info kept), like "cancelar" does;
"cancelar" or "remarcar" with nothing booked and no booking going on says there is nothing to
cancel and offers to book.

No loops: a question is asked at most twice. The second time says exactly what is missing, with
an example (``trial_still_need_*``), after noting what the message did give; a second failed
answer hands off with a summary of what was understood. A message that asked something (triage
saw a question intent, answered by another service) is not a failed answer: the pending step
is re-asked in one line (``trial_reask_*``) instead of the full question. Every field a message
gives is kept, whatever was asked.

Two steps, so the core never does I/O. The shell (``services/trial/app.py``), per task:

    config = load_trial_config(pack)
    state = snapshot.model("trial", TrialState)        # None on the first turn
    context = snapshot.model("context", ContextState)  # None when nothing is remembered
    extraction = extract_trial_fields(task.text, now=turn.now, tz=tz,
                                      asked=state.asked if state else None)
    #   (llm/hybrid: a TrialExtraction from the LLM instead, the rules one on any failure)
    dates = seat_lookup_dates(now=turn.now, tz=tz, config=config, state=state,
                              extraction=extraction)
    seats = await store.seats_taken(dates, config.times)
    plan = plan_turn(task.text, state=state, context=context, now=turn.now, tz=tz,
                     config=config, pack=pack, seed=turn.turn_id, seats_taken=seats,
                     allowed_tools=..., mode=..., conversation_id=turn.conversation_id,
                     extraction=extraction, intents=task.intents)
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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from services.trial.extraction import (
    MERGEABLE,
    detect_action,
    ensure_trial_defaults,
    extract_trial_fields,
    find_booking_code,
    merge_trial,
    without_phrases,
)
from services.trial.models import (
    CLIENT_FIELDS,
    Asked,
    ContextState,
    PendingTool,
    ToolCall,
    ToolResult,
    TrialExtraction,
    TrialOutcome,
    TrialState,
)
from services.trial.nlg import build_nlg_request
from services.trial.replies import (
    TextSource,
    base_values,
    class_day_options,
    free_options,
    join_list,
)
from services.trial.summary import SUMMARY_FIELDS, facts, summary
from services.trial.tool_gate import GateDecision, gate_tool_call
from services.trial.validators import ERROR_FIELD, SeatsTaken, validate_age, validate_slot
from shared.nlu.yesno import yes_no
from shared.trial.config import Action, TrialConfig
from shared.trial.days import parse_date, show_date

_ASK_CLIENT: dict[str, str] = {
    "nome": "trial_ask_name",
    "idade": "trial_ask_age",
    "nivel": "trial_ask_level",
}
_TOOL_ACTION: dict[str, Action] = {
    "cancel_booking": "cancel",
    "reschedule_booking": "reschedule",
    "get_booking": "status",
}


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
        "trial_noted",
        "trial_summary",
        "trial_summary_empty",
        "trial_booked",
        "trial_status",
        "trial_status_none",
        "trial_no_active_booking",
        "trial_cancelled",
        "trial_already_cancelled",
        "trial_flow_stopped",
        "trial_nothing_to_cancel",
        "trial_nothing_to_reschedule",
        "trial_change_kept",
        "trial_reschedule_ask",
        "trial_reschedule_same",
        "trial_rescheduled",
        "trial_handoff",
        "trial_handoff_attempts",
        "trial_handoff_waiting",
        "trial_fact_time",
    }
    fixed |= set(_ASK_CLIENT.values())
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
class _Turn:
    """Everything one turn decides from (inputs, plus what was read off the message)."""

    text: str
    now: datetime
    now_local: datetime
    config: TrialConfig
    pack: TextSource
    seed: str
    seats: SeatsTaken
    allowed_tools: frozenset[str] | None
    mode: str | None
    conversation_id: str
    intents: tuple[str, ...]
    extraction: TrialExtraction
    action: Action | None
    code: str | None
    before: TrialState
    # The message asked something rather than answering (see ``_is_question``).
    question: bool
    # Triage sent the message to a service that answers questions too.
    answered_elsewhere: bool
    # A booking conversation had ended (stopped, refused, nothing to cancel): nothing is asked.
    idle: bool


@dataclass
class _Reply:
    """What a branch decided: new slices, the reply (text key or rendered text) and the rest."""

    state: TrialState
    context: ContextState
    key: str | None = None
    text: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    asks: Asked | None = None
    error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    gate: GateDecision | None = None
    tool: ToolCall | None = None
    handoff: str | None = None
    # Fields this message gave, said back before the next question ("Anotado: ...").
    noted: list[Asked] = field(default_factory=list)
    # Texts said after the reply (the guardian note after a minor's booking).
    after: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TrialPlan:
    """The first step's result: a tool call to run (then ``finish_turn``) or the outcome."""

    tool_call: ToolCall | None
    outcome: TrialOutcome | None
    _turn: _Turn = field(repr=False)
    _reply: _Reply = field(repr=False)

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
        )
    turn = _Turn(
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
        and before.stage in ("collect_client_info", "ask_date"),
    )
    reply = _route(turn, before, context or ContextState())
    if reply.tool is not None:
        return TrialPlan(tool_call=reply.tool, outcome=None, _turn=turn, _reply=reply)
    return TrialPlan(tool_call=None, outcome=_conclude(turn, reply), _turn=turn, _reply=reply)


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
    finishers = {
        "create_booking": _finish_create,
        "get_booking": _finish_get,
        "reschedule_booking": _finish_reschedule,
        "cancel_booking": _finish_cancel,
    }
    finished = finishers[plan.tool_call.tool](turn, reply, plan.tool_call, result)
    finished.gate = reply.gate
    return _conclude(turn, finished, result=result)


# Routing


def _route(t: _Turn, state: TrialState, ctx: ContextState) -> _Reply:
    pending = state.pending_tool
    if pending is not None and t.now - pending.asked_at > timedelta(
        minutes=t.config.confirmation_ttl_minutes
    ):
        state = state.model_copy(update={"pending_tool": None})
    if state.stage == "handoff_requested":
        if not t.extraction.has_data() and t.code is None and t.action in (None, "handoff"):
            return _Reply(state, ctx, key="trial_handoff_waiting")
        resume = state.resume_stage or "collect_client_info"
        state = state.model_copy(
            update={"stage": resume, "resume_stage": None, "handoff_requested": False}
        )
    if t.action == "handoff":
        return _handoff(state, ctx, reason="asked")
    if state.pending_tool is not None:
        if t.action is None or t.action == _TOOL_ACTION[state.pending_tool.tool]:
            return _answer_pending(t, state, ctx, state.pending_tool)
        state = state.model_copy(update={"pending_tool": None})
    if t.code is not None and t.code != state.booking_id:
        return _lookup(t, state, ctx)
    has_booking = state.booking_created or t.config.booking_context_key in ctx.entries
    in_progress = state.asked is not None and state.stage != "booked"
    if t.action == "cancel":
        if has_booking:
            return _ask_cancel(t, state, ctx)
        if in_progress:
            return _stop_flow(state, ctx)
        return _Reply(state, ctx, key="trial_nothing_to_cancel")
    if t.action == "reschedule":
        if has_booking:
            return _reschedule(t, state, ctx)
        if not in_progress and not t.extraction.has_data():
            return _Reply(state, ctx, key="trial_nothing_to_reschedule")
    if has_booking and t.action == "status":
        return _lookup(t, state, ctx)
    if state.stage == "booked":
        if t.extraction.mentions_slot() or state.rescheduling:
            return _reschedule(t, state, ctx)
        return _lookup(t, state, ctx)
    return _booking_flow(t, state, ctx)


def _id_args(t: _Turn) -> dict[str, Any]:
    """The booking id the person typed, passed explicitly (the gate never overrides it)."""
    return {"booking_id": t.code} if t.code else {}


def _gate(
    t: _Turn,
    ctx: ContextState,
    call: ToolCall,
    *,
    confirmed: bool,
    question_values: dict[str, Any] | None = None,
) -> GateDecision:
    return gate_tool_call(
        call,
        context=ctx,
        now=t.now,
        config=t.config.gate,
        allowed_tools=t.allowed_tools,
        confirmed=confirmed,
        pack=t.pack,
        seed=t.seed,
        mode=t.mode,
        conversation_id=t.conversation_id,
        question_values=question_values,
    )


def _after_gate(t: _Turn, state: TrialState, ctx: ContextState, decision: GateDecision) -> _Reply:
    if decision.outcome == "approved":
        return _Reply(state, ctx, gate=decision, tool=decision.call)
    if decision.outcome == "needs_confirmation":
        pending = PendingTool(
            tool=decision.call.tool,
            args=decision.call.args,
            question=decision.message or "",
            asked_at=t.now,
        )
        return _Reply(
            state.model_copy(update={"pending_tool": pending}),
            ctx,
            text=decision.message,
            asks="confirmation",
            gate=decision,
        )
    return _Reply(state, ctx, text=decision.message, error=decision.refusal, gate=decision)


# Before the booking


def _booking_flow(t: _Turn, state: TrialState, ctx: ContextState) -> _Reply:
    ext = t.extraction
    if ext.confirmed is False and not ext.has_data() and state.stage != "awaiting_confirmation":
        # A plain refusal while a field is asked ("não quero mais", "agora não") declines the
        # booking: asking the same question again would count it as a failed answer and end
        # in a handoff to a person, as if the bot could not understand a clear "no".
        return _stop_flow(state, ctx)
    if t.idle and t.answered_elsewhere and not ext.has_data() and ext.confirmed is None:
        # After the booking talk ended, a question is only a question: the other service's
        # answer is the reply, not a new round of booking questions.
        return _Reply(state, ctx, text="")
    age_error = validate_age(ext.idade, t.config).error if ext.idade is not None else None
    merged = _merge(state, ext.model_copy(update={"idade": None}) if age_error else ext)
    missing = merged.missing_client_field()
    if age_error == "too_young":
        # A rule, not a misread: explain it once and stop asking (the person may book for
        # someone else next); the age is not kept.
        refused = merged.model_copy(update={"stage": "collect_client_info", "idade": None})
        return _Reply(
            refused, ctx, key="trial_too_young", values={"idade": ext.idade}, error=age_error
        )
    if age_error is not None:
        stage = "collect_client_info" if missing else merged.stage
        return _Reply(
            merged.model_copy(update={"stage": stage}),
            ctx,
            key="trial_invalid_age",
            asks="idade",
            error="invalid_age",
        )
    if missing is not None:
        collecting = merged.model_copy(update={"stage": "collect_client_info"})
        return _ask_client(t, collecting, ctx, missing)
    same_slot = (merged.desired_date, merged.desired_time) == (
        state.desired_date,
        state.desired_time,
    )
    if merged.stage == "awaiting_confirmation" and (not ext.mentions_slot() or same_slot):
        if ext.confirmed is True:
            return _book(t, merged, ctx)
        if ext.confirmed is False:
            declined = merged.model_copy(
                update={"stage": "ask_date", "desired_date": None, "desired_time": None}
            )
            return _Reply(declined, ctx, key="trial_confirmation_declined", asks="date")
        if t.question:
            # A question at the confirmation ("tem de manhã?") gets the slot and the other
            # times: a yes still books it, another time moves it.
            return _Reply(merged, ctx, key="trial_reask_confirmation", asks="time")
        return _Reply(
            merged,
            ctx,
            key="trial_confirmation_unclear",
            asks="confirmation",
            noted=_noted(t, merged),
        )
    return _check_slot(t, merged, ctx)


def _merge(state: TrialState, ext: TrialExtraction) -> TrialState:
    """The safe merge of the trial fields, plus who writes when the student is someone else."""
    merged = merge_trial(state, ext)
    updates: dict[str, Any] = {}
    if ext.contact_name:
        updates["contact_name"] = ext.contact_name
    if ext.for_someone_else is not None:
        updates["for_someone_else"] = ext.for_someone_else
    return merged.model_copy(update=updates) if updates else merged


def _noted(t: _Turn, state: TrialState) -> list[Asked]:
    """The fields this message set or changed, for saying them back."""
    before = t.before
    changed: list[Asked] = [
        f for f in ("nome", "idade", "nivel") if getattr(state, f) != getattr(before, f)
    ]
    if state.desired_date != before.desired_date:
        changed.append("date")
    if state.desired_time != before.desired_time:
        changed.append("time")
    return changed


def _ask_client(t: _Turn, state: TrialState, ctx: ContextState, missing: Asked) -> _Reply:
    """Ask the first missing client field: in full the first time; after a question in one
    line; the second time by saying exactly what is missing, with an example."""
    again = t.before.asked == missing
    if again and t.question:
        key = f"trial_reask_{missing}"
    elif again:
        key = f"trial_still_need_{missing}"
    else:
        key = _ASK_CLIENT[missing]
    noted = _noted(t, state)
    if not again and missing != "nome":
        # "Prazer, Ana! Quantos anos você tem?" already says back the field just given.
        noted = [f for f in noted if f not in ("nome", "idade", "nivel")]
    return _Reply(state, ctx, key=_for_student(t, state, key), asks=missing, noted=noted)


def _for_student(t: _Turn, state: TrialState, key: str) -> str:
    """The variant of ``key`` that talks about the student, when someone else is writing."""
    other = f"{key}_other"
    return other if state.for_someone_else and t.pack.has_text(other) else key


def _check_slot(t: _Turn, state: TrialState, ctx: ContextState) -> _Reply:
    result = validate_slot(
        state.desired_date,
        state.desired_time,
        now_local=t.now_local,
        config=t.config,
        seats_taken=t.seats,
    )
    if result.ok:
        return _Reply(
            state.model_copy(update={"stage": "awaiting_confirmation"}),
            ctx,
            key="trial_ask_confirmation",
            asks="confirmation",
        )
    code = result.error or ""
    asks = ERROR_FIELD.get(code, "date")
    pending = code in ("missing_date", "missing_time")
    if pending and t.question and t.before.asked == asks:
        key = f"trial_reask_{asks}"
    elif code == "missing_date" and t.before.asked not in ("date", "time"):
        key = "trial_ask_date"
    else:
        key = _error_key(code)
    return _Reply(
        state.model_copy(update={"stage": "ask_date"}),
        ctx,
        key=key,
        values=_slot_values(t, state.desired_date, state.desired_time, t.seats, code=code),
        asks=asks,
        error=code,
        noted=_noted(t, state) if t.before.asked in CLIENT_FIELDS and pending else [],
    )


def _error_key(code: str) -> str:
    return f"trial_{code}" if code in ERROR_FIELD else "trial_validation_failed"


def _slot_values(
    t: _Turn,
    desired_date: str | None,
    desired_time: str | None,
    seats: SeatsTaken,
    *,
    code: str | None = None,
) -> dict[str, Any]:
    """A date and time as shown in texts, with the free times around that date (for a day
    that is not a class day, the class days nearest to it)."""
    day = parse_date(desired_date)
    if code == "not_tuesday" and day is not None:
        options = class_day_options(
            day, now_local=t.now_local, config=t.config, seats_taken=seats, pack=t.pack, seed=t.seed
        )
    else:
        options = free_options(
            day, now_local=t.now_local, config=t.config, seats_taken=seats, pack=t.pack, seed=t.seed
        )
    return {
        "data": show_date(desired_date, t.config),
        "hora": desired_time or "",
        "opcoes": options,
    }


def _book(t: _Turn, state: TrialState, ctx: ContextState) -> _Reply:
    checked = _check_slot(t, state, ctx)
    if checked.error is not None:
        return checked
    call = ToolCall(
        tool="create_booking",
        args={
            "date": state.desired_date,
            "time": state.desired_time,
            "nome": state.nome,
            "idade": state.idade,
            "nivel": state.nivel,
            "idempotency_key": t.seed,
        },
    )
    return _after_gate(t, state, ctx, _gate(t, ctx, call, confirmed=False))


def _stop_flow(state: TrialState, ctx: ContextState) -> _Reply:
    return _Reply(_without_booking(state), ctx, key="trial_flow_stopped")


def _without_booking(state: TrialState) -> TrialState:
    stage = "collect_client_info" if state.missing_client_field() else "ask_date"
    return state.model_copy(
        update={
            "stage": stage,
            "booking_id": None,
            "booking_created": False,
            "desired_date": None,
            "desired_time": None,
            "rescheduling": False,
            "pending_tool": None,
        }
    )


def _handoff(
    state: TrialState, ctx: ContextState, *, reason: str, field: str | None = None
) -> _Reply:
    handed, event = state.handed_off(reason, field)
    key = "trial_handoff" if reason == "asked" else "trial_handoff_attempts"
    return _Reply(handed, ctx, key=key, events=[event], handoff=reason)


# After the booking


def _lookup(t: _Turn, state: TrialState, ctx: ContextState) -> _Reply:
    call = ToolCall(tool="get_booking", args=_id_args(t))
    return _after_gate(t, state, ctx, _gate(t, ctx, call, confirmed=False))


def _ask_cancel(t: _Turn, state: TrialState, ctx: ContextState) -> _Reply:
    call = ToolCall(tool="cancel_booking", args=_id_args(t))
    values = base_values(state, now_local=t.now_local, config=t.config)
    decision = _gate(t, ctx, call, confirmed=False, question_values=values)
    return _after_gate(t, state, ctx, decision)


def _reschedule(t: _Turn, state: TrialState, ctx: ContextState) -> _Reply:
    ext = t.extraction
    asking = state.model_copy(update={"rescheduling": True})
    if not ext.mentions_slot():
        return _Reply(asking, ctx, key="trial_reschedule_ask", asks="date")
    new_date = ext.desired_date or state.desired_date
    new_time = ext.desired_time or state.desired_time
    if (new_date, new_time) == (state.desired_date, state.desired_time):
        return _Reply(asking, ctx, key="trial_reschedule_same", asks="date")
    result = validate_slot(
        new_date, new_time, now_local=t.now_local, config=t.config, seats_taken=t.seats
    )
    if not result.ok:
        code = result.error or ""
        return _Reply(
            asking,
            ctx,
            key=_error_key(code),
            values=_slot_values(t, new_date, new_time, t.seats, code=code),
            asks=ERROR_FIELD.get(code, "date"),
            error=code,
        )
    call = ToolCall(
        tool="reschedule_booking",
        args={**_id_args(t), "new_date": new_date, "new_time": new_time},
    )
    values = {
        "data_antiga": show_date(state.desired_date, t.config),
        "hora_antiga": state.desired_time or "",
        "data": show_date(new_date, t.config),
        "hora": new_time,
    }
    decision = _gate(t, ctx, call, confirmed=False, question_values=values)
    return _after_gate(t, state.model_copy(update={"rescheduling": False}), ctx, decision)


def _answer_pending(t: _Turn, state: TrialState, ctx: ContextState, pending: PendingTool) -> _Reply:
    cleared = state.model_copy(update={"pending_tool": None})
    if pending.tool == "reschedule_booking" and t.extraction.mentions_slot():
        return _reschedule(t, cleared, ctx)
    answer = t.extraction.confirmed
    if t.action is not None and t.action == _TOOL_ACTION[pending.tool]:
        # Repeating the request answers yes ("cancela", "não vou poder ir"), although those
        # words alone read as a refusal; a refusal besides them still wins ("não, não cancela").
        rest = without_phrases(t.text, t.config.keywords[t.action])
        answer = yes_no(rest) is not False
    if answer is True:
        call = ToolCall(tool=pending.tool, args=pending.args)
        return _after_gate(t, cleared, ctx, _gate(t, ctx, call, confirmed=True))
    if answer is False:
        kept = cleared.model_copy(update={"rescheduling": False})
        return _Reply(kept, ctx, key="trial_change_kept")
    return _Reply(state, ctx, text=pending.question, asks="confirmation")


# Finishing a turn with the store's result


def _finish_create(t: _Turn, r: _Reply, call: ToolCall, result: ToolResult) -> _Reply:
    booking = result.booking
    if result.status == "created" and booking is not None:
        state = r.state.model_copy(
            update={
                "stage": "booked",
                "booking_id": booking.booking_id,
                "booking_created": True,
                "desired_date": booking.date,
                "desired_time": booking.time,
                "rescheduling": False,
            }
        )
        ctx = r.context.with_value(t.config.booking_context_key, booking.booking_id, t.now)
        event = {
            "type": "trial.booked",
            "data": {
                "booking_id": booking.booking_id,
                "date": booking.date,
                "time": booking.time,
                "nome": state.nome,
                "idade": state.idade,
                "nivel": state.nivel,
            },
        }
        key = _for_student(t, state, "trial_booked")
        minor = state.idade is not None and state.idade < t.config.adult_age
        after = ["trial_guardian_note"] if minor else []
        return _Reply(state, ctx, key=key, events=[event], after=after)
    return _slot_full(t, r, call.args["date"], call.args["time"], r.state)


def _slot_full(t: _Turn, r: _Reply, day: str, hour: str, state: TrialState) -> _Reply:
    """The class filled up between the check and the write: say so, offer what is free."""
    seats = {**t.seats, (day, hour): t.config.seats_per_slot}
    return _Reply(
        state.model_copy(update={"stage": "ask_date"}) if state.stage != "booked" else state,
        r.context,
        key="trial_slot_full",
        values=_slot_values(t, day, hour, seats),
        asks="time",
        error="slot_full",
    )


def _finish_get(t: _Turn, r: _Reply, call: ToolCall, result: ToolResult) -> _Reply:
    booking = result.booking
    key = t.config.booking_context_key
    if result.status == "found" and booking is not None and booking.status == "active":
        state = r.state.model_copy(
            update={
                "stage": "booked",
                "booking_id": booking.booking_id,
                "booking_created": True,
                "desired_date": booking.date,
                "desired_time": booking.time,
            }
        )
        ctx = r.context.with_value(key, booking.booking_id, t.now)
        return _Reply(state, ctx, key="trial_status")
    if call.args.get("booking_id") == r.state.booking_id:
        return _Reply(_without_booking(r.state), r.context.without(key), key="trial_status_none")
    return _Reply(r.state, r.context, key="trial_status_none")


def _finish_cancel(t: _Turn, r: _Reply, call: ToolCall, result: ToolResult) -> _Reply:
    key = t.config.booking_context_key
    booking_id = call.args["booking_id"]
    ctx = r.context.without(key) if booking_id == r.state.booking_id else r.context
    state = _without_booking(r.state) if booking_id == r.state.booking_id else r.state
    booking = result.booking
    if result.status == "cancelled" and booking is not None:
        event = {
            "type": "trial.cancelled",
            "data": {"booking_id": booking_id, "date": booking.date, "time": booking.time},
        }
        values = {"data": show_date(booking.date, t.config), "hora": booking.time}
        return _Reply(state, ctx, key="trial_cancelled", values=values, events=[event])
    if result.status == "already_cancelled":
        return _Reply(state, ctx, key="trial_already_cancelled")
    return _Reply(state, ctx, key="trial_no_active_booking")


def _finish_reschedule(t: _Turn, r: _Reply, call: ToolCall, result: ToolResult) -> _Reply:
    key = t.config.booking_context_key
    new_date, new_time = call.args["new_date"], call.args["new_time"]
    if result.status == "rescheduled":
        state = r.state.model_copy(
            update={
                "stage": "booked",
                "desired_date": new_date,
                "desired_time": new_time,
                "rescheduling": False,
            }
        )
        booking_id = call.args["booking_id"]
        event = {
            "type": "trial.rescheduled",
            "data": {
                "booking_id": booking_id,
                "from_date": r.state.desired_date,
                "from_time": r.state.desired_time,
                "date": new_date,
                "time": new_time,
            },
        }
        ctx = r.context.with_value(key, booking_id, t.now)
        return _Reply(state, ctx, key="trial_rescheduled", events=[event])
    if result.status == "full":
        moving = r.state.model_copy(update={"rescheduling": True})
        return _slot_full(t, r, new_date, new_time, moving)
    return _Reply(_without_booking(r.state), r.context.without(key), key="trial_no_active_booking")


# Attempts, handoff, rendering


def _failed(t: _Turn, r: _Reply) -> bool:
    """This reply asks again for what the last one asked, and the message did not answer it.

    A client field asked again was not given, whatever else the message gave (else the same
    question would come a third time). A validation error is a failed answer when it repeats
    the last one or the message gave nothing new ("sexta" then "terça 10/02 às 15h" are two
    answers, each told what is wrong). A question (answered by another service) is not a
    failed answer; a date or time change at the confirmation is an answer.
    """
    if t.question and r.error in (None, "missing_date", "missing_time"):
        return False
    changed = any(getattr(r.state, f) != getattr(t.before, f) for f in MERGEABLE)
    if r.error is not None and ERROR_FIELD.get(r.error) == r.asks:
        return r.error == t.before.last_error or not changed
    if r.asks in CLIENT_FIELDS:
        return True
    return not changed and r.state.pending_tool == t.before.pending_tool


def _count_attempts(t: _Turn, r: _Reply) -> _Reply:
    """Count failed answers per asked field; too many hands the conversation to a person."""
    asked = t.before.asked
    attempts = dict(r.state.attempts)
    if r.asks is not None and r.asks == asked:
        if _failed(t, r):
            attempts[r.asks] = attempts.get(r.asks, 0) + 1
    elif asked is not None:
        attempts.pop(asked, None)
    if r.asks is not None and attempts.get(r.asks, 0) >= t.config.max_attempts:
        handed = _handoff(r.state, r.context, reason="attempts", field=r.asks)
        handed.error = r.error
        handed.values = {
            "resumo": summary(
                r.state, now_local=t.now_local, config=t.config, pack=t.pack, seed=t.seed
            )
        }
        return handed
    r.state = r.state.model_copy(update={"attempts": attempts})
    return r


def _conclude(t: _Turn, r: _Reply, *, result: ToolResult | None = None) -> TrialOutcome:
    if r.handoff is None:
        r = _count_attempts(t, r)
    if r.handoff is not None:
        r.asks = None
        r.state = r.state.model_copy(update={"attempts": {}})
    reask = (r.key or "").startswith("trial_reask_")
    # One reminder of the pending step per run of questions: after the next question the other
    # service's answer is the whole reply, and the step is still the one read next.
    silent = (
        reask
        and t.answered_elsewhere
        and t.before.reasked
        and r.asks == t.before.asked
        and not r.noted
    )
    reading = r.asks
    if silent:
        r.key, r.text, r.asks = None, "", None
    values = {**base_values(r.state, now_local=t.now_local, config=t.config), **r.values}
    text = r.text if r.text is not None else t.pack.text(r.key or "", seed=t.seed, **values)
    if r.noted and r.handoff is None:
        said = facts(
            r.state, r.noted, now_local=t.now_local, config=t.config, pack=t.pack, seed=t.seed
        )
        anotado = join_list(said, t.config)
        text = f"{t.pack.text('trial_noted', seed=t.seed, anotado=anotado)} {text}"
    for key in r.after:
        text = f"{text} {t.pack.text(key, seed=t.seed, **values)}"
    # After a handoff for failed answers the next message is still read as the answer to the
    # question that failed (a name given then resumes the booking instead of waiting).
    asked = r.state.asked if r.handoff == "attempts" else reading
    state = r.state.model_copy(
        update={"asked": asked, "last_error": r.error, "output": text, "reasked": reask}
    )
    snapshot = state.model_dump(
        include={"nome", "idade", "nivel", "desired_date", "desired_time", "booking_id"}
    )
    journal = {
        "stage_before": t.before.stage,
        "stage_after": state.stage,
        "intents": list(t.intents),
        "extracted": t.extraction.model_dump(exclude_none=True),
        "action": t.action,
        "booking_code": t.code,
        "validation": r.error,
        "reply": r.key,
        "asked": r.asks,
        "attempts": state.attempts,
        "gate": r.gate.journal() if r.gate is not None else None,
        "tool_result": result.status if result is not None else None,
        "handoff": r.handoff,
    }
    return TrialOutcome(
        text=text,
        asks_question=r.asks is not None or "?" in text,
        state=state,
        context=r.context,
        events=r.events,
        journal=journal,
        nlg=None
        if not text
        else build_nlg_request(
            stage=state.stage,
            action=(r.key or "gate_message").removeprefix("trial_"),
            error_code=r.error,
            fallback=text,
            snapshot=snapshot,
            config=t.config.nlg,
        ),
    )
