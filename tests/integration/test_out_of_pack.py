"""A service started with a pack that lacks its section (the trial service with the staffing
pack) starts, says once that it is out of this pack's turns, and idles: alive (its heartbeat is
what /healthz counts), reading no stream."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from services.registry import TOPOLOGY
from shared.keys import Keys
from tests.system import service


async def test_the_trial_service_idles_with_the_staffing_pack(
    redis_url: str, unique_prefix: str, redis: Redis
) -> None:
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    with service("trial", redis_url, unique_prefix, ORQ_PACK="staffing") as (process, watcher):
        said = [line for line in watcher.lines if "out of this pack's turns" in line]
        assert len(said) == 1 and "'trial' section" in said[0], watcher.tail()

        async def beating() -> list[str]:
            while True:
                members = [m for k in keys.all_heartbeats() for m in await redis.zrange(k, 0, -1)]
                if any(m.startswith("trial|") for m in members):
                    return members
                await asyncio.sleep(0.05)

        await asyncio.wait_for(beating(), timeout=30)
        consumers = await redis.xinfo_consumers(keys.stream("tasks.trial"), "trial")
        assert consumers == []
        assert process.poll() is None
