"""Replica acknowledgement on a Redis with no replica: what waits, what is refused."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from shared.durability import NotReplicated, ReplicaAck, replicas_of


async def promise(redis: Redis, ack: ReplicaAck, key: str) -> list[str]:
    """One promised write the way the gateway makes it: the write, then its WAITs."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.set(key, "1", ex=60)
        waits = ack.queue(pipe, redis, key)
        done = await pipe.execute()
    await ack.check(redis, waits, done[1:], f"write of {key}")
    return waits


async def test_a_master_without_replicas_is_written_to_without_waiting_unless_strict(
    redis: Redis, unique_prefix: str
) -> None:
    if await replicas_of(redis):
        pytest.skip("this test's Redis has a replica")
    lenient = ReplicaAck(1, timeout_ms=50)
    assert await promise(redis, lenient, f"{unique_prefix}a") != []  # waited, found nobody
    assert await promise(redis, lenient, f"{unique_prefix}b") == []  # not asked again for now

    strict = ReplicaAck(1, timeout_ms=50, strict=True)
    with pytest.raises(NotReplicated):
        await promise(redis, strict, f"{unique_prefix}c")
    assert await promise(redis, ReplicaAck(0), f"{unique_prefix}d") == []  # off: no WAIT
