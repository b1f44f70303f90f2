"""Which branch of the trial flow a turn takes: a handoff waiting or asked for, a pending
confirmation, a typed booking code, a cancel, reschedule or status request, or the booking
flow itself. A cancelled booking is asked about ("ficou cancelada?") as such; anything else
reopens the booking flow where the person's data stop."""

from __future__ import annotations

from datetime import timedelta

from services.trial.after_booking import (
    TOOL_ACTION,
    answer_pending,
    ask_cancel,
    lookup,
    lookup_of,
    reschedule,
)
from services.trial.before_booking import booking_flow, handoff, stop_flow
from services.trial.extraction import without_phrases
from services.trial.models import ContextState, TrialState
from services.trial.party import another_person, booked_named, next_person_turn, start_next
from services.trial.shift import asks_to_move
from services.trial.turn import Reply, TrialTurn
from shared.nlu.yesno import yes_no


def _resumes(t: TrialTurn, state: TrialState) -> bool:
    """Whether a message after a handoff takes the booking up again instead of waiting for the
    person: a field, a booking code or another action always does; after a handoff the bot made
    itself (``attempts``), so does a yes or a no, which answers the question it paused on (a
    "sim" must book, not reach the staff queue and wait)."""
    if t.extraction.has_data() or t.code is not None or t.action not in (None, "handoff"):
        return True
    return state.handoff_reason == "attempts" and t.extraction.confirmed is not None


def route(t: TrialTurn, state: TrialState, ctx: ContextState) -> Reply:
    pending = state.pending_tool
    if pending is not None and t.now - pending.asked_at > timedelta(
        minutes=t.config.confirmation_ttl_minutes
    ):
        state = state.model_copy(update={"pending_tool": None})
    if state.stage == "handoff_requested":
        if not _resumes(t, state):
            return Reply(state, ctx, key="trial_handoff_waiting")
        resume = state.resume_stage or "collect_client_info"
        state = state.model_copy(
            update={
                "stage": resume,
                "resume_stage": None,
                "handoff_requested": False,
                "handoff_reason": None,
            }
        )
    if state.stage == "cancelled":
        # "ficou cancelada?" is told it is; a second request to cancel, that nothing is left.
        if t.code is None and t.action == "status":
            return Reply(state, ctx, key="trial_cancelled_status")
        if t.code is None and t.action == "cancel":
            return Reply(state, ctx, key="trial_nothing_to_cancel")
        state = state.reopened()
    if t.action == "handoff":
        return handoff(state, ctx, reason="upset" if t.upset else "asked")
    if state.pending_tool is not None:
        # A status word next to the answer ("sim, pode deixar cancelada") still answers it.
        if t.action in (None, "status", TOOL_ACTION[state.pending_tool.tool]):
            return answer_pending(t, state, ctx, state.pending_tool)
        state = state.model_copy(update={"pending_tool": None})
    if state.stage == "booked" and state.next_person is not None:
        offered = next_person_turn(t, state, ctx)
        if offered is not None:
            return offered
        state = state.model_copy(update={"next_person": None})
    # "a Lúcia tá marcada?", "e a da Lúcia?": a group's earlier booking, named.
    asks_status = t.action == "status" or (
        state.stage == "booked" and t.action is None and not t.extraction.mentions_slot()
    )
    if asks_status and (other := booked_named(t, state)) is not None:
        return lookup_of(t, state, ctx, other.booking_id)
    if (person := another_person(t, state)) is not None:
        return start_next(t, state, ctx, person)
    if t.code is not None and t.code != state.booking_id:
        return lookup(t, state, ctx)
    has_booking = state.booking_created or t.config.booking_context_key in ctx.entries
    in_progress = state.asked is not None and state.stage != "booked"
    if t.action == "cancel":
        if has_booking and _moves_instead(t, state):
            return reschedule(t, state, ctx)
        if has_booking:
            return ask_cancel(t, state, ctx)
        if in_progress and not _refuses_the_slot(t, state) and t.refused_day is None:
            # "não vai dar terça" refuses that day, not the booking: the days after it.
            return stop_flow(state, ctx)
        if in_progress:
            return booking_flow(t, state, ctx)
        return Reply(state, ctx, key="trial_nothing_to_cancel")
    if t.action == "reschedule":
        if has_booking:
            return reschedule(t, state, ctx)
        if not in_progress and not t.extraction.has_data():
            return Reply(state, ctx, key="trial_nothing_to_reschedule")
    if has_booking and t.action == "status":
        # A status phrase may only name the class being moved ("alterar o horário da minha
        # aula pras 20h"): a verb of moving makes it a move.
        if asks_to_move(t.text):
            return reschedule(t, state, ctx)
        return lookup(t, state, ctx)
    if state.stage == "booked":
        moving = state.rescheduling or asks_to_move(t.text)
        if moving or t.extraction.mentions_slot():
            return reschedule(t, state, ctx)
        return lookup(t, state, ctx)
    return booking_flow(t, state, ctx)


def _moves_instead(t: TrialTurn, state: TrialState) -> bool:
    """Whether a message that cannot make the class names another one for it ("não vou
    conseguir ir às 7, dá pra passar pras 18h?"): a move, not a cancel."""
    ext = t.extraction
    if not ext.mentions_slot():
        return False
    wanted = (ext.desired_date or state.desired_date, ext.desired_time or state.desired_time)
    return wanted != (state.desired_date, state.desired_time)


def _refuses_the_slot(t: TrialTurn, state: TrialState) -> bool:
    """Whether a "can't" said to the class offered for confirmation ("não vou conseguir",
    "não vai dar terça") is a no to that class, which asks for another, rather than a stop:
    once the cancel phrases are taken out a no is left. "cancela" leaves nothing and stops."""
    if state.asked != "confirmation":
        return False
    return yes_no(without_phrases(t.text, t.config.keywords["cancel"])) is False
