"""What to schedule for a domain event, and what to do with a message when it is due (pure).

Due times are business-time instants derived from the class's date and time in the business's
time zone. The shell compares them with its clock (``shared/clock.py``); nothing here reads one.

- ``plan_event``: a booking schedules its reminders (the day before at the pack's hour, and
  optionally some minutes before); a cancel or reschedule cancels them (a reschedule schedules
  the new class's); an attendance mark schedules the follow-up ("como foi?" or "sentimos sua
  falta" with the next class day).
- ``admit``: a message already past when scheduled is sent at once if it still makes sense (a
  reminder whose class is ahead, a follow-up not later than ``max_late_hours``), else dropped.
- ``at_due``: the same test when the message comes due, for a scheduler that was down.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from services.scheduler.config import RemindersConfig, _Message
from shared.pack import Pack
from shared.scheduled import Kind, Scheduled, bucket_start
from shared.trial.config import TrialConfig
from shared.trial.days import next_open_class_day, show_date, show_day

REMINDER_KINDS: tuple[Kind, ...] = ("day_before", "before_class")

BOOKED = frozenset({"trial.booked"})
CANCELLED = frozenset({"trial.cancelled", "booking.cancelled"})
RESCHEDULED = frozenset({"trial.rescheduled"})
ATTENDANCE = frozenset({"booking.attendance"})
ATTENDANCE_KIND: dict[str, Kind] = {"attended": "attended", "no_show": "no_show"}
# Every event ``plan_event`` acts on; the shell reads no context for any other.
SCHEDULING = BOOKED | CANCELLED | RESCHEDULED | ATTENDANCE


@dataclass(frozen=True)
class Context:
    """What the shell knows about the conversation when an event arrives."""

    conversation_id: str
    channel: str
    to: str | None
    student_name: str | None


@dataclass
class Plan:
    """An event's consequences: bookings whose pending messages are cancelled, then new ones."""

    cancel_booking: str | None = None
    schedule: list[Scheduled] = field(default_factory=list)
    note: str | None = None


def class_start(day: str, hour: str, tz: ZoneInfo) -> datetime:
    return datetime.combine(date.fromisoformat(day), datetime.strptime(hour, "%H:%M").time(), tz)


def item_id(event_id: str, kind: Kind) -> str:
    """Deterministic per event and kind: a redelivered event schedules nothing twice."""
    return f"{event_id}-{kind}"


def plan_event(
    event_type: str,
    event_id: str,
    data: dict[str, Any],
    ctx: Context,
    *,
    config: RemindersConfig,
    trial: TrialConfig,
    pack: Pack,
    tz: ZoneInfo,
) -> Plan:
    booking_id = data.get("booking_id")
    if not isinstance(booking_id, str) or not booking_id:
        return Plan(note="no booking_id")
    day, hour = data.get("date"), data.get("time")
    if event_type in CANCELLED:
        return Plan(cancel_booking=booking_id)
    if not isinstance(day, str) or not isinstance(hour, str):
        return Plan(note="no class date or time")
    start = class_start(day, hour, tz)
    values = {
        "nome": data.get("nome") or ctx.student_name or config.unknown_name,
        "data": show_date(day, trial),
        "hora": hour,
    }

    def make(kind: Kind, message: _Message, due: datetime, **extra: str) -> Scheduled:
        ident = item_id(event_id, kind)
        return Scheduled(
            id=ident,
            conversation_id=ctx.conversation_id,
            kind=kind,
            booking_id=booking_id,
            due_at=due,
            class_at=start,
            text=pack.text(message.text_key, ident, **values, **extra),
            template=message.template,
            template_params=[values["nome"], values["data"], values["hora"]],
            channel=ctx.channel,
            to=ctx.to,
        )

    if event_type in BOOKED or event_type in RESCHEDULED:
        items: list[Scheduled] = []
        if config.day_before is not None:
            eve = datetime.combine(start.date() - timedelta(days=1), config.day_before.time, tz)
            items.append(make("day_before", config.day_before, eve))
        if config.before_class is not None:
            due = start - timedelta(minutes=config.before_class.minutes)
            items.append(make("before_class", config.before_class, due))
        cancel = booking_id if event_type in RESCHEDULED else None
        return Plan(cancel_booking=cancel, schedule=items)
    if event_type in ATTENDANCE:
        kind = ATTENDANCE_KIND.get(str(data.get("status")))
        message = getattr(config, kind) if kind else None
        if kind is None or message is None:
            return Plan(note=f"no follow-up for status {data.get('status')!r}")
        due = start + timedelta(minutes=message.after_minutes)
        following = next_open_class_day(start.date() + timedelta(days=1), trial)
        return Plan(schedule=[make(kind, message, due, proxima_data=show_day(following, trial))])
    return Plan()


Admission = Literal["schedule", "send_now", "drop"]


def at_due(item: Scheduled, now: datetime, config: RemindersConfig) -> Literal["send", "drop"]:
    """Whether a message whose time has come still makes sense: a reminder only before its
    class starts, a follow-up only within ``max_late_hours`` of its time."""
    if item.kind in REMINDER_KINDS:
        return "send" if now < item.class_at else "drop"
    late = now - item.due_at
    return "send" if late <= timedelta(hours=config.max_late_hours) else "drop"


def admit(item: Scheduled, now: datetime, config: RemindersConfig) -> Admission:
    """When scheduling: keep a future message, send a past one at once if it still makes
    sense, else drop it."""
    if item.due_at > now:
        return "schedule"
    return "send_now" if at_due(item, now, config) == "send" else "drop"


def bucket_finished(bucket: str, now: datetime, grace: timedelta) -> bool:
    """No new message can land in a bucket whose hour ended more than ``grace`` ago (a message
    scheduled for the past is due "now"), so an empty one may leave the index."""
    return bucket_start(bucket) + timedelta(hours=1) + grace < now
