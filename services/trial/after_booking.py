"""The trial flow once a booking exists: its status, a cancel and a reschedule (each through
the tool gate, the last two after the person's yes), and the answer to that confirmation."""

from __future__ import annotations

from services.trial.before_booking import error_key, slot_values
from services.trial.extraction import without_phrases
from services.trial.gating import after_gate, ask_gate, id_args
from services.trial.models import (
    ContextState,
    PendingTool,
    ToolCall,
    TrialState,
)
from services.trial.replies import base_values
from services.trial.turn import Reply, TrialTurn
from services.trial.validators import ERROR_FIELD, validate_slot
from shared.nlu.yesno import yes_no
from shared.trial.config import Action
from shared.trial.days import show_date

TOOL_ACTION: dict[str, Action] = {
    "cancel_booking": "cancel",
    "reschedule_booking": "reschedule",
    "get_booking": "status",
}


def lookup(t: TrialTurn, state: TrialState, ctx: ContextState) -> Reply:
    call = ToolCall(tool="get_booking", args=id_args(t))
    return after_gate(t, state, ctx, ask_gate(t, ctx, call, confirmed=False))


def lookup_of(t: TrialTurn, state: TrialState, ctx: ContextState, booking_id: str) -> Reply:
    """The status of another booking of this conversation (a group's earlier one)."""
    call = ToolCall(tool="get_booking", args={"booking_id": booking_id})
    return after_gate(t, state, ctx, ask_gate(t, ctx, call, confirmed=False))


def ask_cancel(t: TrialTurn, state: TrialState, ctx: ContextState) -> Reply:
    call = ToolCall(tool="cancel_booking", args=id_args(t))
    values = base_values(state, now_local=t.now_local, config=t.config)
    decision = ask_gate(t, ctx, call, confirmed=False, question_values=values)
    return after_gate(t, state, ctx, decision)


def reschedule(t: TrialTurn, state: TrialState, ctx: ContextState) -> Reply:
    # A move said relative to the booked class ("uma semana pra frente", "adia duas semanas")
    # is already a date: the extractor reads it against the slice's date (``reference_date``).
    ext = t.extraction
    asking = state.model_copy(update={"rescheduling": True})
    if not ext.mentions_slot():
        return Reply(asking, ctx, key="trial_reschedule_ask", asks="date")
    new_date = ext.desired_date or state.desired_date
    new_time = ext.desired_time or state.desired_time
    if (new_date, new_time) == (state.desired_date, state.desired_time):
        return Reply(asking, ctx, key="trial_reschedule_same", asks="date")
    result = validate_slot(
        new_date, new_time, now_local=t.now_local, config=t.config, seats_taken=t.seats
    )
    if not result.ok:
        code = result.error or ""
        return Reply(
            asking,
            ctx,
            key=error_key(code),
            values=slot_values(t, new_date, new_time, t.seats, code=code),
            asks=ERROR_FIELD.get(code, "date"),
            error=code,
        )
    call = ToolCall(
        tool="reschedule_booking",
        args={**id_args(t), "new_date": new_date, "new_time": new_time},
    )
    values = {
        "data_antiga": show_date(state.desired_date, t.config),
        "hora_antiga": state.desired_time or "",
        "data": show_date(new_date, t.config),
        "hora": new_time,
    }
    decision = ask_gate(t, ctx, call, confirmed=False, question_values=values)
    return after_gate(t, state.model_copy(update={"rescheduling": False}), ctx, decision)


def answer_pending(
    t: TrialTurn, state: TrialState, ctx: ContextState, pending: PendingTool
) -> Reply:
    cleared = state.model_copy(update={"pending_tool": None})
    if pending.tool == "reschedule_booking" and t.extraction.mentions_slot():
        return reschedule(t, cleared, ctx)
    answer = t.extraction.confirmed
    if t.action is not None and t.action == TOOL_ACTION[pending.tool]:
        # Repeating the request answers yes ("cancela", "não vou poder ir"), although those
        # words alone read as a refusal; a refusal besides them still wins ("não, não cancela").
        rest = without_phrases(t.text, t.config.keywords[t.action])
        answer = yes_no(rest) is not False
    if answer is True:
        call = ToolCall(tool=pending.tool, args=pending.args)
        return after_gate(t, cleared, ctx, ask_gate(t, ctx, call, confirmed=True))
    if answer is False:
        kept = cleared.model_copy(update={"rescheduling": False})
        return Reply(kept, ctx, key="trial_change_kept")
    return Reply(state, ctx, text=pending.question, asks="confirmation")
