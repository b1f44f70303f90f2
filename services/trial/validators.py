"""Deterministic validation of what a person asked for: the validators have the last word.

The chain follows the seed (missing_date → invalid_date_format → not_tuesday → missing_time →
invalid_time_format) with this product's checks added: ``past_date`` right after the weekday
check, then ``closed_day`` (a holiday or a day the pack lists: the business calendar), so nobody
is asked for a time on a day that cannot be booked, and ``day_over`` in place of
``missing_time`` when today's classes have all started; then ``unavailable_time`` (not a class
time, or already over today) and ``slot_full`` (no seats left). ``not_tuesday`` keeps the seed's
name although the class weekday comes from the pack.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import date, datetime, time

from pydantic import BaseModel

from services.trial.models import Asked
from shared.trial.config import TrialConfig
from shared.trial.days import parse_date

# Seats taken per (date, time), as the shell read them from the booking store.
SeatsTaken = Mapping[tuple[str, str], int]


class SeatsNeeded(Exception):
    """The turn's plan looked at the seats taken, which the shell has not read yet."""


class UnreadSeats(Mapping[tuple[str, str], int]):
    """The seats taken before the shell has read them: any look raises ``SeatsNeeded``.

    Most turns of a booking never look (a name, an age, a level asked or given), so the shell
    plans first with these and reads the seats (a round trip to the store) only for a turn
    whose plan looks at them (a time offered or checked, a class full), then plans again with
    what it read: the same plan as if it had read them first.
    """

    def __getitem__(self, key: tuple[str, str]) -> int:
        raise SeatsNeeded(key)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        raise SeatsNeeded()

    def __len__(self) -> int:
        raise SeatsNeeded()


UNREAD_SEATS = UnreadSeats()

_HH_MM = re.compile(r"^(?:[01]\d|2[0-3]):[0-5]\d$")
TUESDAY = 1

# The field each error code asks again for; failed attempts are counted per field.
ERROR_FIELD: dict[str, Asked] = {
    "missing_date": "date",
    "invalid_date_format": "date",
    "not_tuesday": "date",
    "past_date": "date",
    "closed_day": "date",
    "day_over": "date",
    "missing_time": "time",
    "invalid_time_format": "time",
    "unavailable_time": "time",
    "slot_full": "time",
    "invalid_age": "idade",
}


class ValidationResult(BaseModel):
    ok: bool
    error: str | None = None


OK = ValidationResult(ok=True)


def _fail(code: str) -> ValidationResult:
    return ValidationResult(ok=False, error=code)


def parse_time(value: str | None) -> time | None:
    """The time of a strict 24h HH:MM string, else None."""
    if value is None or not _HH_MM.match(value):
        return None
    return time.fromisoformat(value)


def _check_date(desired_date: str | None, weekday: int) -> ValidationResult | date:
    """The date when it passes the seed's date checks, else the failure."""
    if desired_date is None:
        return _fail("missing_date")
    day = parse_date(desired_date)
    if day is None:
        return _fail("invalid_date_format")
    if day.weekday() != weekday:
        return _fail("not_tuesday")
    return day


def _check_time(desired_time: str | None) -> ValidationResult | str:
    """The HH:MM time when it passes the seed's time checks, else the failure."""
    if desired_time is None:
        return _fail("missing_time")
    if parse_time(desired_time) is None:
        return _fail("invalid_time_format")
    return desired_time


def validate_date_time(
    desired_date: str | None, desired_time: str | None, *, weekday: int = TUESDAY
) -> ValidationResult:
    """The seed's five checks, in the seed's order."""
    for checked in (_check_date(desired_date, weekday), _check_time(desired_time)):
        if isinstance(checked, ValidationResult):
            return checked
    return OK


def validate_slot(
    desired_date: str | None,
    desired_time: str | None,
    *,
    now_local: datetime,
    config: TrialConfig,
    seats_taken: SeatsTaken,
) -> ValidationResult:
    """The full chain for a bookable slot, ``now_local`` being Turn.now in the business zone."""
    day = _check_date(desired_date, config.weekday)
    if isinstance(day, ValidationResult):
        return day
    if day < now_local.date():
        return _fail("past_date")
    if not config.calendar.is_open(day):
        return _fail("closed_day")
    hour = _check_time(desired_time)
    if isinstance(hour, ValidationResult):
        if desired_time is None and not bookable_times(day, now_local=now_local, config=config):
            return _fail("day_over")
        return hour
    if hour not in bookable_times(day, now_local=now_local, config=config):
        return _fail("unavailable_time")
    if seats_taken.get((day.isoformat(), hour), 0) >= config.seats_per_slot:
        return _fail("slot_full")
    return OK


def bookable_times(day: date, *, now_local: datetime, config: TrialConfig) -> list[str]:
    """Class times of ``day`` that have not started yet (seats aside); none on a closed day."""
    if day < now_local.date() or not config.calendar.is_open(day):
        return []
    if day > now_local.date():
        return list(config.times)
    started = now_local.strftime("%H:%M")
    return [t for t in config.times if t > started]


def validate_age(idade: int | None, config: TrialConfig) -> ValidationResult:
    """An age is an integer within the pack's range (8 to 99 for CT Smash).

    ``too_young`` is a real age below the business's minimum (a rule to explain, not a misread
    to ask again); ``invalid_age`` is no age or one no person has.
    """
    if idade is None or idade <= 0 or idade > config.max_age:
        return _fail("invalid_age")
    if idade < config.min_age:
        return _fail("too_young")
    return OK
