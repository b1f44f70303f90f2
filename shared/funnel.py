"""The funnel's vocabulary (pure): its steps, the pack's ``funnel`` section, which steps a turn
or a domain event shows, and how a day's counters read back.

Shared because three services speak it: triage finds the steps a turn shows
(``steps_of_turn``); on one Redis its commit script counts them (``Tally``), on a cluster it
publishes them on the ``funnel.steps`` stream for the scheduler to count
(``services/scheduler/funnel.py``: ``FunnelCounter``, which also counts bookings and attendance,
``step_of_event``); the gateway reads the days back for ``GET /v1/funnel`` (``read_days``).
Either writer counts a step once per conversation: only the one that sets the step's marker in
the conversation's ``funnel_seen`` hash increments the day's counters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.contracts import DomainEvent, FunnelStep, FunnelStepName, Turn
from shared.keys import Keys
from shared.nlu.normalize import normalize
from shared.pack import Pack

METRICS = ("started", "trial_asked", "booked", "attended", "plan_interest")
SEEN_TTL_S = 180 * 86400  # a conversation's markers of the steps already counted
DAY_TTL_S = 400 * 86400  # a business day's counters


class FunnelConfig(BaseModel):
    """The ``funnel`` section of a pack."""

    model_config = ConfigDict(frozen=True)

    plan_interest: list[str] = Field(default_factory=list)

    @field_validator("plan_interest")
    @classmethod
    def _patterns(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"plan_interest pattern {value!r}: {exc}") from exc
        return values


def plan_patterns(pack: Pack) -> list[re.Pattern[str]]:
    """The pack's ``plan_interest`` patterns (none without a ``funnel`` section)."""
    config = pack.section("funnel", FunnelConfig) if pack.has("funnel") else FunnelConfig()
    return [re.compile(p) for p in config.plan_interest]


def steps_of_turn(
    turn: Turn, routes: list[str], patterns: list[re.Pattern[str]]
) -> list[FunnelStepName]:
    """Funnel steps a turn routed to ``routes`` shows (pure)."""
    steps: list[FunnelStepName] = ["started"] if turn.seq == 1 else []
    text = normalize(turn.text)
    if any(p.search(text) for p in patterns):
        steps.append("plan_interest")
    if "trial" in routes:
        steps.append("trial_asked")
    return steps


def step_of_event(event: DomainEvent) -> tuple[str, str] | None:
    """(step, marker) of a domain event, or None (pure)."""
    booking = str(event.data.get("booking_id") or "")
    if event.type == "trial.booked":
        return "booked", f"booked:{booking}"
    if event.type == "booking.attendance" and event.data.get("status") == "attended":
        return "attended", f"attended:{booking}"
    return None


def business_day(at: datetime, tz: ZoneInfo) -> str:
    """The business day (ISO date in the business's time zone) a step at ``at`` counts for."""
    return at.astimezone(tz).date().isoformat()


@dataclass(frozen=True)
class Tally:
    """A funnel step a commit script counts (one Redis): it sets ``marker`` in the
    conversation's ``seen`` hash, and only if it set it increments ``step`` and
    ``step|source`` in the ``day`` hash."""

    seen: str
    day: str
    marker: str
    at: str
    step: str
    source: str


def tally(keys: Keys, step: FunnelStep, source: str, tz: ZoneInfo) -> Tally:
    """The count of a step triage found (its marker is the step's name)."""
    return Tally(
        seen=keys.funnel_seen(step.conversation_id),
        day=keys.funnel_day(business_day(step.at, tz)),
        marker=step.step,
        at=step.at.isoformat(),
        step=step.step,
        source=source,
    )


def read_days(raw: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """``GET /v1/funnel`` rows from each day's hash (pure): totals and ``by_source``."""
    days = []
    for day in sorted(raw):
        counters = raw[day]
        row: dict[str, Any] = {"date": day, **{m: int(counters.get(m, 0)) for m in METRICS}}
        by_source: dict[str, dict[str, int]] = {}
        for name, value in counters.items():
            metric, sep, source = name.partition("|")
            if sep and metric in METRICS:
                by_source.setdefault(source, dict.fromkeys(METRICS, 0))[metric] = int(value)
        row["by_source"] = by_source
        days.append(row)
    return days
