"""Class days and how a date is shown to people (pure).

Shared because the trial service (its offers and confirmations), the scheduler (the date in a
reminder, the next class day in a follow-up) and staff-facing texts all name the same class
days the same way: "terça, 10/02" with the pack's weekday names, never an ISO string.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from shared.trial.config import TrialConfig

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def next_class_day(start: date, weekday: int) -> date:
    """The first class day on or after ``start``."""
    return start + timedelta(days=(weekday - start.weekday()) % 7)


def next_open_class_day(start: date, config: TrialConfig) -> date:
    """The first class day on or after ``start`` the business is open (``config.calendar``:
    a holiday Tuesday is skipped); within a year, else the first class day."""
    first = next_class_day(start, config.weekday)
    for week in range(53):
        day = first + timedelta(weeks=week)
        if config.calendar.is_open(day):
            return day
    return first


def parse_date(value: str | None) -> date | None:
    """The date of a strict YYYY-MM-DD string, else None."""
    if value is None or not _ISO_DATE.match(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def show_day(day: date, config: TrialConfig) -> str:
    return f"{config.weekday_names[day.weekday()]}, {day:%d/%m}"


def show_date(value: str | None, config: TrialConfig) -> str:
    """A stored date for people; a value that is not a date is shown as the person wrote it."""
    day = parse_date(value)
    if day is None:
        return value or ""
    return show_day(day, config)
