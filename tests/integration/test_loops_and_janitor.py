"""Background loops on a real Redis: the janitor's trim under a concurrent acknowledgement, and
the supervisor that restarts a loop a Redis outage ended."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError

from services.gateway.janitor import needed_from, trim_once
from services.registry import TOPOLOGY
from shared.bus import ensure_groups
from shared.keys import Keys
from shared.logs import get_logger
from shared.loops import backoff_s, supervised


class AckAfterInfo(Redis):
    """A client on the real Redis whose ``XINFO GROUPS`` is followed, before its caller sees
    the answer, by another consumer acknowledging everything pending: the race between the
    janitor's XINFO and its XPENDING, made to happen every time."""

    async def xinfo_groups(self, name: Any) -> Any:
        groups = await super().xinfo_groups(name)
        for group in groups:
            pending = await self.xpending_range(name, group["name"], "-", "+", 100)
            ids = [p["message_id"] for p in pending]
            if ids:
                await self.xack(name, group["name"], *ids)
        return groups


def after(entry_id: str) -> str:
    ms, seq = entry_id.split("-")
    return f"{ms}-{int(seq) + 1}"


def turn_groups(keys: Keys) -> list[str]:
    return [group for stream, group in keys.groups() if stream == keys.turns]


async def delivered_to_every_group(redis: Redis, keys: Keys, count: int) -> list[str]:
    """``count`` turns, read (not acknowledged) by every group of the turns stream."""
    await ensure_groups(redis, keys)
    ids = [await redis.xadd(keys.turns, {"n": str(i)}) for i in range(count)]
    for group in turn_groups(keys):
        await redis.xreadgroup(group, "c1", {keys.turns: ">"}, count=count)
    return ids


async def test_janitor_survives_a_pending_count_that_drops_to_zero(
    redis_url: str, unique_prefix: str
) -> None:
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    client = AckAfterInfo.from_url(redis_url, decode_responses=True)
    try:
        ids = await delivered_to_every_group(client, keys, 3)
        # XINFO says 3 pending per group; by XPENDING every one was acknowledged.
        assert await needed_from(client, keys.turns) == after(ids[-1])
        assert await trim_once(client, keys) == 3
        assert await client.xlen(keys.turns) == 0
    finally:
        await client.aclose()


async def test_janitor_keeps_what_is_still_pending(redis: Redis, unique_prefix: str) -> None:
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    ids = await delivered_to_every_group(redis, keys, 3)
    for group in turn_groups(keys):
        if group != "mode_router":
            await redis.xack(keys.turns, group, *ids)
    await redis.xack(keys.turns, "mode_router", ids[0])
    assert await needed_from(redis, keys.turns) == ids[1]
    assert await trim_once(redis, keys) == 1
    assert await redis.xlen(keys.turns) == 2


def test_backoff_doubles_up_to_the_cap_with_jitter() -> None:
    waits = [backoff_s(n, base_s=0.5, cap_s=5.0, jitter=0.999999) for n in range(1, 7)]
    assert [round(w, 3) for w in waits] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert backoff_s(3, base_s=0.5, cap_s=5.0, jitter=0.0) == 1.0  # half of 2 s at the least


async def test_a_failing_loop_is_logged_backed_off_and_restarted(redis: Redis) -> None:
    """The loop's first two runs meet a Redis error (as after an outage longer than the
    client's retries); the supervisor restarts it and the third run does its work."""
    runs: list[int] = []
    waits: list[float] = []
    done = asyncio.Event()

    async def loop() -> None:
        runs.append(len(runs))
        if len(runs) <= 2:
            raise ConnectionError("Redis went away")
        await redis.ping()
        done.set()

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    task = asyncio.create_task(
        supervised("probe", loop, get_logger("test"), sleep=no_wait, jitter=lambda: 0.999999)
    )
    await asyncio.wait_for(done.wait(), 5)
    await asyncio.wait_for(task, 5)  # the loop returned: the supervisor ends too
    assert runs == [0, 1, 2]
    assert [round(w, 3) for w in waits] == [0.5, 1.0]


async def test_cancel_stops_a_supervised_loop_cleanly() -> None:
    started = asyncio.Event()

    async def loop() -> None:
        started.set()
        await asyncio.Event().wait()

    task = asyncio.create_task(supervised("forever", loop, get_logger("test")))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def test_a_cancel_turned_into_another_error_still_stops_the_loop() -> None:
    """redis-py's socket timeout runs through ``asyncio.wait_for``; a cancel landing there can
    surface as a TimeoutError. The supervisor must stop, not restart."""
    started = asyncio.Event()

    async def loop() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise TimeoutError("swallowed cancel") from None

    task = asyncio.create_task(supervised("swallower", loop, get_logger("test")))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
