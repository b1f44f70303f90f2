"""Changing ``ORQ_PARTITIONS`` is refused while the old streams hold work, allowed once they
are drained; a single-partition deployment records nothing (real Redis)."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from services.registry import TOPOLOGY
from shared.bus import PartitionChangeRefused, ensure_groups
from shared.keys import Keys


async def test_one_partition_adds_no_key(redis: Redis, unique_prefix: str) -> None:
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    await ensure_groups(redis, keys)
    assert await redis.exists(keys.partition_count) == 0
    assert await redis.exists(keys.turns) == 1


async def test_a_new_count_is_refused_while_a_turn_waits_and_allowed_after_the_drain(
    redis: Redis, unique_prefix: str
) -> None:
    old, new = Keys(unique_prefix, 4, topology=TOPOLOGY), Keys(unique_prefix, 8, topology=TOPOLOGY)
    await ensure_groups(redis, old)
    assert await redis.get(old.partition_count) == "4"
    stream = old.route(old.turns, "conv-1")
    entry = await redis.xadd(stream, {"n": "1"})

    with pytest.raises(PartitionChangeRefused, match="last run with 4 partition") as refused:
        await ensure_groups(redis, new)
    assert stream in str(refused.value) and "ORQ_PARTITIONS=4" in str(refused.value)

    # Delivered to every group of the turns stream, acknowledged by all but one: refused.
    groups = [group for part, group in old.groups() if part == stream]
    for group in groups:
        await redis.xreadgroup(group, "c1", {stream: ">"})
    for group in groups[:-1]:
        await redis.xack(stream, group, entry)
    with pytest.raises(PartitionChangeRefused, match="1 pending"):
        await ensure_groups(redis, new)

    await redis.xack(stream, groups[-1], entry)
    await redis.zadd(old.pending_starts("conv-2"), {"conv-2": 0})
    with pytest.raises(PartitionChangeRefused, match="gw:pending"):
        await ensure_groups(redis, new)

    await redis.zrem(old.pending_starts("conv-2"), "conv-2")
    await ensure_groups(redis, new)
    assert await redis.get(new.partition_count) == "8"
    assert all([await redis.exists(part) for part in new.parts(new.turns)])


async def test_an_unrecorded_system_counts_as_one_partition(
    redis: Redis, unique_prefix: str
) -> None:
    single, split = (
        Keys(unique_prefix, topology=TOPOLOGY),
        Keys(unique_prefix, 2, topology=TOPOLOGY),
    )
    await ensure_groups(redis, single)
    await redis.xadd(single.outbound, {"n": "1"})
    with pytest.raises(PartitionChangeRefused, match="outbound/gateway"):
        await ensure_groups(redis, split)
