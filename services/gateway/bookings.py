"""Staff's view of the trial bookings and their commands on them (``/v1/bookings``).

The trial service owns the bookings: this module reads them (the roster, and whether a booking
exists before relaying a command) and relays staff's changes as ``BookingCommand`` messages on
``commands.trial``, answering 202 with the command id. The ``/bookings`` page (served with the
other pages by ``webchat.py``) talks to these routes with the admin token.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from pydantic import BaseModel, Field, field_validator

from services.gateway import auth
from services.gateway.deps import Deps, GatewayDeps
from shared.contracts import BookingCommand
from shared.trial.bookings import StaffBooking
from shared.trial.roster import class_dates, range_problem, roster

router = APIRouter(dependencies=[Depends(auth.require_admin)])
# A booking code ("AE-7K3Q9P"): the pack's prefix, a dash, letters and digits.
BookingPath = Annotated[str, Path(pattern=r"^[A-Za-z0-9]{1,8}-[A-Za-z0-9]{1,16}$")]


class AttendanceIn(BaseModel):
    status: Literal["attended", "no_show"] = Field(description="Whether the person came.")


class CancelIn(BaseModel):
    reason: str = Field(min_length=1, max_length=300, description="Told to the customer.")

    @field_validator("reason")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("reason must not be blank")
        return value.strip()


class CommandAccepted(BaseModel):
    command_id: str
    booking_id: str


@router.get("/v1/bookings")
async def list_bookings(
    deps: Deps,
    start: Annotated[date, Query(alias="from", description="YYYY-MM-DD")],
    end: Annotated[date, Query(alias="to", description="YYYY-MM-DD, inclusive")],
) -> dict[str, Any]:
    problem = range_problem(start, end)
    if problem:
        raise HTTPException(status_code=422, detail=problem)
    config = deps.trial_config
    if config is None:
        raise HTTPException(status_code=404, detail="this pack has no trial classes")
    store = deps.bookings
    dates = class_dates(start, end, config)
    bookings = await store.day_bookings(dates, config.times)
    seats = await store.seats_taken(dates, config.times)
    classes = roster(dates, config, bookings, seats)
    # A booking's date and time are its class's: not repeated in each booking.
    nested = {"bookings": {"__all__": {"date", "time"}}}
    return {"classes": [c.model_dump(mode="json", exclude=nested) for c in classes]}


async def _relay(deps: GatewayDeps, command: BookingCommand) -> CommandAccepted:
    booking: StaffBooking | None = await deps.bookings.staff_view(command.booking_id)
    if booking is None:
        raise HTTPException(status_code=404, detail="no booking with this id")
    if booking.status == "cancelled":
        raise HTTPException(status_code=409, detail="the booking is cancelled")
    await deps.publish(deps.keys.commands("trial"), command)
    return CommandAccepted(command_id=command.command_id, booking_id=command.booking_id)


@router.post("/v1/bookings/{booking_id}/attendance", status_code=202)
async def post_attendance(
    booking_id: BookingPath, body: AttendanceIn, deps: Deps
) -> CommandAccepted:
    """Mark whether the person came; the trial service records it and tells the follow-ups."""
    command = BookingCommand(action="attendance", booking_id=booking_id, status=body.status)
    return await _relay(deps, command)


@router.post("/v1/bookings/{booking_id}/cancel", status_code=202)
async def post_cancel(booking_id: BookingPath, body: CancelIn, deps: Deps) -> CommandAccepted:
    """Cancel a booking; the customer is told, with the reason, through their channel."""
    command = BookingCommand(action="cancel", booking_id=booking_id, reason=body.reason)
    return await _relay(deps, command)
