"""The classes of a date range as staff see them (pure): every class of the pack, empty ones
too, with its seats and its bookings."""

from __future__ import annotations

from datetime import date, timedelta

from pydantic import BaseModel

from shared.trial.bookings import StaffBooking
from shared.trial.config import TrialConfig

MAX_RANGE_DAYS = 90


class ClassRoster(BaseModel):
    date: str
    time: str
    capacity: int
    seats_left: int
    bookings: list[StaffBooking]


def range_problem(start: date, end: date) -> str | None:
    """Why ``start``..``end`` (inclusive) is not a range staff may ask for, if it is not."""
    if end < start:
        return f"'to' ({end}) is before 'from' ({start})"
    days = (end - start).days + 1
    if days > MAX_RANGE_DAYS:
        return f"the range covers {days} days; at most {MAX_RANGE_DAYS} may be asked at once"
    return None


def class_dates(start: date, end: date, config: TrialConfig) -> list[str]:
    """The class days between ``start`` and ``end``, inclusive."""
    first = start + timedelta(days=(config.weekday - start.weekday()) % 7)
    days = []
    day = first
    while day <= end:
        days.append(day.isoformat())
        day += timedelta(weeks=1)
    return days


def roster(
    dates: list[str],
    config: TrialConfig,
    bookings: list[StaffBooking],
    seats_taken: dict[tuple[str, str], int],
) -> list[ClassRoster]:
    """One entry per class (date, time) in order; seats come from the store's seat sets,
    which count every booking holding a seat (an erased person's too)."""
    classes = []
    for day in dates:
        for hour in config.times:
            taken = seats_taken.get((day, hour), 0)
            classes.append(
                ClassRoster(
                    date=day,
                    time=hour,
                    capacity=config.seats_per_slot,
                    seats_left=max(config.seats_per_slot - taken, 0),
                    bookings=[b for b in bookings if (b.date, b.time) == (day, hour)],
                )
            )
    return classes
