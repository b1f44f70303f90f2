"""Booking lifecycle decisions shared by the turn handler and staff commands (pure).

Other services (the scheduler's reminders and follow-ups, the funnel) follow a booking through
these events on the events stream, whoever caused the change:

- ``trial.booked`` — data: booking_id, date, time, conversation_id (and the person's fields);
- ``booking.cancelled`` — data: booking_id, reason, by (``customer``/``staff``),
  conversation_id, date, time;
- ``booking.attendance`` — data: booking_id, status (``attended``/``no_show``),
  conversation_id, date, time.
"""

from __future__ import annotations

from typing import Literal

from services.trial.models import ContextState, Event, TrialState
from services.trial.replies import TextSource
from shared.trial.bookings import StaffBooking
from shared.trial.config import TrialConfig
from shared.trial.days import show_date


def lifecycle_events(events: list[Event], conversation_id: str, *, reason: str = "") -> list[Event]:
    """A turn's events with the lifecycle names added: ``trial.booked`` names its conversation
    and a customer's ``trial.cancelled`` is also a ``booking.cancelled`` by the customer."""
    out: list[Event] = []
    for event in events:
        data = dict(event.get("data", {}))
        if event["type"] == "trial.booked":
            data["conversation_id"] = conversation_id
        out.append({**event, "data": data})
        if event["type"] == "trial.cancelled":
            out.append(
                cancelled_event(
                    booking_id=data["booking_id"],
                    reason=reason,
                    by="customer",
                    conversation_id=conversation_id,
                    date=data.get("date", ""),
                    time=data.get("time", ""),
                )
            )
    return out


def cancelled_event(
    *,
    booking_id: str,
    reason: str,
    by: Literal["customer", "staff"],
    conversation_id: str | None,
    date: str,
    time: str,
) -> Event:
    return {
        "type": "booking.cancelled",
        "data": {
            "booking_id": booking_id,
            "reason": reason,
            "by": by,
            "conversation_id": conversation_id,
            "date": date,
            "time": time,
        },
    }


def attendance_event(booking: StaffBooking, status: str) -> Event:
    return {
        "type": "booking.attendance",
        "data": {
            "booking_id": booking.booking_id,
            "status": status,
            "conversation_id": booking.conversation_id,
            "date": booking.date,
            "time": booking.time,
        },
    }


def forget_booking(
    state: TrialState | None,
    context: ContextState | None,
    booking_id: str,
    config: TrialConfig,
) -> tuple[TrialState | None, ContextState | None]:
    """The slices after staff cancelled ``booking_id``: the conversation no longer holds it
    (None when a slice does not change), so the bot does not speak of a class that is gone."""
    new_state = None
    if state is not None and state.booking_id == booking_id:
        new_state = state.cancelled()
    key = config.booking_context_key
    new_context = None
    if context is not None:
        entry = context.entries.get(key)
        if entry is not None and entry.value == booking_id:
            new_context = context.without(key)
    return new_state, new_context


def staff_cancel_text(
    booking: StaffBooking, reason: str, *, pack: TextSource, config: TrialConfig, seed: str
) -> str:
    return pack.text(
        "booking_cancelled_by_staff",
        seed=seed,
        data=show_date(booking.date, config),
        hora=booking.time,
        motivo=reason,
    )
