"""How many handlers of one subscription run at once in a process: ``ORQ_WORKERS`` in rules
mode, ``ORQ_LLM_WORKERS`` when a handler may wait for the LLM (``Settings.handlers``). A handler
that waits for a 300 ms model holds its place all that time, so 16 places would cap a replica at
about 50 calls a second whatever its CPU could do. The test publishes from the subscribing
process, so its first messages are read on write (``shared.bus``) and the rest by the reader:
the limit holds for both together."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from shared.bus import Bus, make_broker
from shared.keys import Keys
from shared.settings import NluMode, Settings


@pytest.mark.parametrize(("mode", "expected"), [("rules", 2), ("llm", 5), ("hybrid", 5)])
async def test_a_subscription_runs_as_many_handlers_at_once_as_its_mode_allows(
    redis_url: str, redis: Redis, unique_prefix: str, mode: NluMode, expected: int
) -> None:
    settings = Settings(
        prefix=unique_prefix, redis_url=redis_url, nlu_mode=mode, workers=2, llm_workers=5
    )
    assert settings.handlers == expected
    broker = make_broker(settings)
    bus = Bus(broker, redis, settings, Keys(unique_prefix), "handlers-test")
    stream, group = f"{unique_prefix}waits", "waits"
    await redis.xgroup_create(stream, group, id="0", mkstream=True)
    running = 0
    most = 0
    done = 0
    total = expected + 3
    release = asyncio.Event()
    reached = asyncio.Event()
    finished = asyncio.Event()

    async def handle(body: bytes) -> None:
        nonlocal running, most, done
        running += 1
        most = max(most, running)
        if running == expected:
            reached.set()
        await release.wait()  # a call to a slow model
        running -= 1
        done += 1
        if done == total:
            finished.set()

    bus.subscribe(stream, group, handle)
    await broker.start()
    try:
        for i in range(total):
            await bus.publish(stream, f"m{i}")
        async with asyncio.timeout(10):
            await reached.wait()
        release.set()
        async with asyncio.timeout(10):
            await finished.wait()
        assert most == expected
    finally:
        release.set()
        await broker.stop()
