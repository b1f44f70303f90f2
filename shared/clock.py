"""The scheduler's clock: the wall clock, which end-to-end tests may move at run time.

Due messages are business-time instants compared with this clock. With ``ORQ_TEST_CLOCK`` on,
``POST /v1/admin/clock`` stores an offset in Redis that every process adds to the wall clock, so
a test reaches "Monday 18:00" without sleeping for hours. With the setting off (production) the
offset is never read or written.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from redis.asyncio import Redis

from shared.contracts import utcnow
from shared.keys import Keys


class Clock:
    def __init__(self, redis: Redis, keys: Keys, *, movable: bool) -> None:
        self.redis = redis
        self.keys = keys
        self.movable = movable

    async def now(self) -> datetime:
        if not self.movable:
            return utcnow()
        raw = await self.redis.get(self.keys.clock_offset)
        return utcnow() + timedelta(milliseconds=int(raw or 0))

    async def set(self, now: datetime) -> timedelta:
        """Make ``now`` the current time (test clock only); returns the offset stored."""
        if not self.movable:
            raise PermissionError("the clock moves only with ORQ_TEST_CLOCK=true")
        offset = now - utcnow()
        await self.redis.set(self.keys.clock_offset, int(offset.total_seconds() * 1000))
        return offset
