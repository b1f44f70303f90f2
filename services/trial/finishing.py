"""Finishing a trial turn with the booking store's result for its approved tool call: the
new slices, the reply and the domain event of a created, found, cancelled or moved booking,
or what to say when the slot filled up or the booking is gone."""

from __future__ import annotations

from services.trial.before_booking import for_student, slot_values
from services.trial.models import ToolCall, ToolResult, TrialState
from services.trial.turn import Reply, TrialTurn
from shared.trial.days import show_date


def finish(t: TrialTurn, r: Reply, call: ToolCall, result: ToolResult) -> Reply:
    """The reply once the shell ran the approved ``call`` and got ``result``."""
    finishers = {
        "create_booking": _finish_create,
        "get_booking": _finish_get,
        "reschedule_booking": _finish_reschedule,
        "cancel_booking": _finish_cancel,
    }
    return finishers[call.tool](t, r, call, result)


def _finish_create(t: TrialTurn, r: Reply, call: ToolCall, result: ToolResult) -> Reply:
    booking = result.booking
    if result.status == "created" and booking is not None:
        booked = r.state.booked_as(booking.booking_id, booking.date, booking.time)
        state = booked.model_copy(update={"rescheduling": False})
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
        key = for_student(t, state, "trial_booked")
        minor = state.idade is not None and state.idade < t.config.adult_age
        after = ["trial_guardian_note"] if minor else []
        return Reply(state, ctx, key=key, events=[event], after=after)
    return _slot_full(t, r, call.args["date"], call.args["time"], r.state)


def _slot_full(t: TrialTurn, r: Reply, day: str, hour: str, state: TrialState) -> Reply:
    """The class filled up between the check and the write: say so, offer what is free."""
    seats = {**t.seats, (day, hour): t.config.seats_per_slot}
    return Reply(
        state.model_copy(update={"stage": "ask_date"}) if state.stage != "booked" else state,
        r.context,
        key="trial_slot_full",
        values=slot_values(t, day, hour, seats),
        asks="time",
        error="slot_full",
    )


def _finish_get(t: TrialTurn, r: Reply, call: ToolCall, result: ToolResult) -> Reply:
    booking = result.booking
    key = t.config.booking_context_key
    if (
        result.status == "found"
        and booking is not None
        and booking.status == "active"
        and any(b.booking_id == booking.booking_id for b in r.state.booked)
        and booking.booking_id != r.state.booking_id
    ):
        # A group's earlier booking, asked about by name: said as theirs, the slice unchanged.
        values = {
            "nome": booking.nome or "",
            "data": show_date(booking.date, t.config),
            "hora": booking.time,
            "codigo": booking.booking_id,
        }
        return Reply(r.state, r.context, key="trial_status_of", values=values)
    if result.status == "found" and booking is not None and booking.status == "active":
        state = r.state.booked_as(booking.booking_id, booking.date, booking.time)
        ctx = r.context.with_value(key, booking.booking_id, t.now)
        # With several people booked, the class is said as whose it is.
        return Reply(state, ctx, key="trial_status_of" if len(state.booked) > 1 else "trial_status")
    if call.args.get("booking_id") == r.state.booking_id:
        return Reply(r.state.without_booking(), r.context.without(key), key="trial_status_none")
    return Reply(r.state, r.context, key="trial_status_none")


def _finish_cancel(t: TrialTurn, r: Reply, call: ToolCall, result: ToolResult) -> Reply:
    key = t.config.booking_context_key
    booking_id = call.args["booking_id"]
    ctx = r.context.without(key) if booking_id == r.state.booking_id else r.context
    gone = result.status in ("cancelled", "already_cancelled")
    own = booking_id == r.state.booking_id
    state = (r.state.cancelled() if gone else r.state.without_booking()) if own else r.state
    booking = result.booking
    if result.status == "cancelled" and booking is not None:
        event = {
            "type": "trial.cancelled",
            "data": {"booking_id": booking_id, "date": booking.date, "time": booking.time},
        }
        values = {"data": show_date(booking.date, t.config), "hora": booking.time}
        return Reply(state, ctx, key="trial_cancelled", values=values, events=[event])
    if result.status == "already_cancelled":
        return Reply(state, ctx, key="trial_already_cancelled")
    return Reply(state, ctx, key="trial_no_active_booking")


def _finish_reschedule(t: TrialTurn, r: Reply, call: ToolCall, result: ToolResult) -> Reply:
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
        return Reply(state, ctx, key="trial_rescheduled", events=[event])
    if result.status == "full":
        moving = r.state.model_copy(update={"rescheduling": True})
        return _slot_full(t, r, new_date, new_time, moving)
    return Reply(r.state.without_booking(), r.context.without(key), key="trial_no_active_booking")
