"""Class days and free times: what the trial can offer, given the seats already taken.

Seats come in as data (``SeatsTaken``, read by the shell from the booking store before the turn);
a slot missing from it counts as empty. That only affects suggestions: the store's atomic seat
check has the last word when a booking is written.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from services.trial.models import TrialExtraction, TrialState
from services.trial.validators import SeatsTaken, bookable_times
from shared.nlu.dates import PartOfDay, in_part_of_day
from shared.trial.config import TrialConfig
from shared.trial.days import next_class_day, parse_date


def next_open_day(*, now_local: datetime, config: TrialConfig) -> date:
    """The next class day that still has a class to come (today's may all have started, the
    business may be closed on a holiday); the first class day of the lookahead after those."""
    days = class_days(now_local.date(), config)
    return next(
        (day for day in days if bookable_times(day, now_local=now_local, config=config)),
        days[-1] + timedelta(weeks=1),
    )


def closed_before_next(*, now_local: datetime, config: TrialConfig) -> list[tuple[date, str]]:
    """The class days skipped as closed before ``next_open_day``, with why (to say so)."""
    first = next_open_day(now_local=now_local, config=config)
    skipped = []
    for day in class_days(now_local.date(), config):
        if day >= first:
            break
        reason = config.calendar.closed_reason(day)
        if reason is not None:
            skipped.append((day, reason))
    return skipped


def class_days(start: date, config: TrialConfig) -> list[date]:
    """Class days from ``start`` (inclusive) over the pack's lookahead."""
    first = next_class_day(start, config.weekday)
    return [first + timedelta(weeks=week) for week in range(config.lookahead_weeks)]


def class_times(config: TrialConfig, part: PartOfDay | None = None) -> list[str]:
    """The class times, only those of ``part`` when the person wished for a part of the day
    ("terça à noite"): offering 07:00 to someone who asked for the evening ignores what they
    said. All of them when the business has no class in that part, so there is still a choice."""
    if part is None:
        return list(config.times)
    return [t for t in config.times if in_part_of_day(t, part)] or list(config.times)


def free_times(
    day: date,
    *,
    now_local: datetime,
    config: TrialConfig,
    seats_taken: SeatsTaken,
    part: PartOfDay | None = None,
) -> list[str]:
    """Times of ``day`` that have not started and still have a seat (of ``part``, as
    ``class_times``)."""
    iso = day.isoformat()
    wanted = class_times(config, part)
    return [
        t
        for t in bookable_times(day, now_local=now_local, config=config)
        if t in wanted and seats_taken.get((iso, t), 0) < config.seats_per_slot
    ]


def next_day_with_room(
    after: date,
    *,
    now_local: datetime,
    config: TrialConfig,
    seats_taken: SeatsTaken,
    part: PartOfDay | None = None,
) -> tuple[date, list[str]] | None:
    """The first class day after ``after`` (within the lookahead) with a free seat (of
    ``part``, as ``class_times``)."""
    start = max(after + timedelta(days=1), now_local.date())
    for day in class_days(start, config):
        times = free_times(
            day, now_local=now_local, config=config, seats_taken=seats_taken, part=part
        )
        if times:
            return day, times
    return None


def seat_lookup_dates(
    *,
    now: datetime,
    tz: ZoneInfo,
    config: TrialConfig,
    state: TrialState | None,
    extraction: TrialExtraction | None,
) -> list[str]:
    """The class days whose seats the shell should read before calling ``plan_turn``.

    The lookahead from today, plus the lookahead after any date the person asked for (this turn
    or earlier), so "that Tuesday and the next one with room" are known.
    """
    today = now.astimezone(tz).date()
    starts = {today}
    for value in (
        extraction.desired_date if extraction else None,
        state.desired_date if state else None,
    ):
        day = parse_date(value)
        if day is not None and day >= today:
            starts.add(day)
    return sorted({d.isoformat() for start in starts for d in class_days(start, config)})
