"""The funnel's counters per business day: started, trial_asked, booked, attended,
plan_interest, each also per source (the click-to-WhatsApp ad, else the HTTP ``origin``).

The steps a turn shows (``shared.funnel.steps_of_turn``) are found by triage, which reads every
turn anyway: on one Redis its commit script counts each the first time the conversation shows
it (``shared.funnel.Tally``); on a cluster it publishes each on the funnel stream for this
counter, which is delivered a few messages per conversation rather than every turn and trial
task. Bookings and attendance come from the domain events.

Every step counts once per conversation (``booked``/``attended`` once per booking): a marker in
the conversation's slot is set first (``HSETNX``), and only the call that set it increments the
day's hash, so a redelivered turn, task or event is not counted twice.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from redis.asyncio import Redis
from structlog.typing import FilteringBoundLogger

from shared.attribution import source_of
from shared.contracts import DomainEvent, FunnelStep, MetaView
from shared.funnel import DAY_TTL_S, SEEN_TTL_S, business_day, step_of_event
from shared.keys import Keys
from shared.metrics import FUNNEL_STEPS


class FunnelCounter:
    def __init__(self, redis: Redis, keys: Keys, tz: ZoneInfo, log: FilteringBoundLogger) -> None:
        self.redis = redis
        self.keys = keys
        self.tz = tz
        self.log = log

    async def count(
        self, conversation_id: str, step: str, marker: str, at: datetime, source: str | None = None
    ) -> bool:
        """Count ``step`` unless ``marker`` was counted for the conversation before; without
        a ``source``, the conversation's is read from its meta slice."""
        seen = self.keys.funnel_seen(conversation_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            # The source is read with the marker (one round trip), used only if this call set it.
            pipe.hsetnx(seen, marker, at.isoformat())
            if source is None:
                pipe.hget(self.keys.state(conversation_id), "meta")
            first, *raw = await pipe.execute()
        if not first:
            return False
        if source is None:
            source = source_of(MetaView.model_validate_json(raw[0]) if raw[0] else None)
        day = self.keys.funnel_day(business_day(at, self.tz))
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.expire(seen, SEEN_TTL_S)
            pipe.hincrby(day, step, 1)
            pipe.hincrby(day, f"{step}|{source}", 1)
            pipe.expire(day, DAY_TTL_S)
            await pipe.execute()
        FUNNEL_STEPS.labels(step, self.keys.tenant).inc()
        return True

    async def on_step(self, body: bytes) -> None:
        step = FunnelStep.model_validate_json(body)
        await self.count(step.conversation_id, step.step, step.step, step.at, step.source)

    async def on_event(self, event: DomainEvent) -> None:
        found = step_of_event(event)
        if found is not None:
            await self.count(event.conversation_id, found[0], found[1], event.at)
