"""The funnel's vocabulary (pure): its steps, the pack's ``funnel`` section, which steps a turn
or a domain event shows, and how a day's counters read back.

Shared because three services speak it: triage finds the steps a turn shows
(``steps_of_turn``) and publishes them on the ``funnel.steps`` stream, the scheduler counts them
(``services/scheduler/funnel.py``: ``FunnelCounter``, with ``step_of_event`` for bookings and
attendance), and the gateway reads the days back for ``GET /v1/funnel`` (``read_days``). The
counting itself (Redis) stays in the scheduler, the only writer of the counters.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.contracts import DomainEvent, FunnelStepName, Turn
from shared.nlu.normalize import normalize
from shared.pack import Pack

METRICS = ("started", "trial_asked", "booked", "attended", "plan_interest")


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
