"""The booking tools run against the store: a tool call the gate approved becomes one store
write or read, and its ``ToolResult`` feeds ``finish_turn`` (shell side: this module does I/O).

The store (``shared/trial/bookings.py``) is shared with the gateway, which reads the same
bookings for staff; what a tool call means stays here, with the tool gate that approves it.
"""

from __future__ import annotations

from datetime import datetime

from services.trial.models import ToolCall, ToolResult
from services.trial.tool_gate import (
    CancelBookingArgs,
    CreateBookingArgs,
    GetBookingArgs,
    RescheduleBookingArgs,
)
from shared.trial.bookings import FULL, BookingStore


async def run_tool(
    store: BookingStore,
    call: ToolCall,
    *,
    conversation_id: str,
    capacity: int,
    turn_id: str,
    now: datetime,
    contact_name: str | None = None,
) -> ToolResult:
    """Execute a tool call the gate approved; the result feeds ``finish_turn``.

    ``turn_id`` makes a cancel idempotent (a create carries its own key, a reschedule to
    where the booking already is succeeds again), so a redelivered turn is safe.
    """
    if call.tool == "create_booking":
        create = CreateBookingArgs.model_validate(call.args)
        booking_id = await store.create(
            date=create.date,
            time=create.time,
            capacity=capacity,
            idempotency_key=create.idempotency_key,
            conversation_id=conversation_id,
            nome=create.nome,
            idade=create.idade,
            nivel=create.nivel,
            now=now,
            contact_name=contact_name,
        )
        if booking_id == FULL:
            return ToolResult(status="full")
        return ToolResult(status="created", booking=await store.get(booking_id))
    if call.tool == "get_booking":
        get = GetBookingArgs.model_validate(call.args)
        found = await store.get(get.booking_id, conversation_id=conversation_id)
        return ToolResult(status="found" if found else "not_found", booking=found)
    if call.tool == "reschedule_booking":
        move = RescheduleBookingArgs.model_validate(call.args)
        moved = await store.reschedule(
            move.booking_id,
            date=move.new_date,
            time=move.new_time,
            capacity=capacity,
            conversation_id=conversation_id,
            now=now,
        )
        view = await store.get(move.booking_id, conversation_id=conversation_id)
        return ToolResult(status=moved, booking=view)
    cancel = CancelBookingArgs.model_validate(call.args)
    cancelled = await store.cancel(
        cancel.booking_id,
        conversation_id=conversation_id,
        reason=cancel.reason,
        idempotency_key=turn_id,
        now=now,
    )
    view = await store.get(cancel.booking_id, conversation_id=conversation_id)
    return ToolResult(status=cancelled, booking=view)
