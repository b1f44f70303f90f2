"""The funnel's counters per business day: started, trial_asked, booked, attended,
plan_interest, each also per source (the click-to-WhatsApp ad, else the HTTP ``origin``).

The steps a turn shows (``steps_of_turn``) are found by triage, which reads every turn anyway:
it publishes each on the funnel stream the first time the conversation shows it, so this
counter is delivered a few messages per conversation rather than every turn and trial task.
Bookings and attendance come from the domain events.

Every step counts once per conversation (``booked``/``attended`` once per booking): a marker in
the conversation's slot is set first (``HSETNX``), and only the call that set it increments the
day's hash, so a redelivered turn, task or event is not counted twice.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator
from redis.asyncio import Redis
from structlog.typing import FilteringBoundLogger

from shared.attribution import source_of
from shared.contracts import DomainEvent, FunnelStep, FunnelStepName, Turn
from shared.keys import Keys
from shared.metrics import FUNNEL_STEPS
from shared.nlu.normalize import normalize
from shared.pack import Pack

METRICS = ("started", "trial_asked", "booked", "attended", "plan_interest")
SEEN_TTL_S = 180 * 86400
DAY_TTL_S = 400 * 86400


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


class FunnelCounter:
    def __init__(self, redis: Redis, keys: Keys, tz: ZoneInfo, log: FilteringBoundLogger) -> None:
        self.redis = redis
        self.keys = keys
        self.tz = tz
        self.log = log

    async def count(self, conversation_id: str, step: str, marker: str, at: datetime) -> bool:
        seen = self.keys.funnel_seen(conversation_id)
        if not await self.redis.hsetnx(seen, marker, at.isoformat()):
            return False
        raw = await self.redis.hget(self.keys.state(conversation_id), "meta")
        source = source_of(json.loads(raw) if raw else {})
        day = self.keys.funnel_day(at.astimezone(self.tz).date().isoformat())
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.expire(seen, SEEN_TTL_S)
            pipe.hincrby(day, step, 1)
            pipe.hincrby(day, f"{step}|{source}", 1)
            pipe.expire(day, DAY_TTL_S)
            await pipe.execute()
        FUNNEL_STEPS.labels(step).inc()
        return True

    async def on_step(self, body: bytes) -> None:
        step = FunnelStep.model_validate_json(body)
        await self.count(step.conversation_id, step.step, step.step, step.at)

    async def on_event(self, event: DomainEvent) -> None:
        found = step_of_event(event)
        if found is not None:
            await self.count(event.conversation_id, found[0], found[1], event.at)


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
