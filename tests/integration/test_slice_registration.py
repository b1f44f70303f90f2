"""A slice a service writes must be declared in its spec: an undeclared one used to commit once
and then raise "changed concurrently" on every later turn (it was never loaded back)."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from services.trial.spec import SPEC as TRIAL
from shared.keys import Keys
from shared.lua import register
from shared.state import Outbox, StateStore, UnregisteredSlice


def store_of(redis: Redis, prefix: str) -> StateStore:
    return StateStore(
        redis,
        register(redis),
        Keys(prefix),
        journal_max=50,
        state_ttl_s=3600,
        outbox_ttl_s=60,
        owner=TRIAL.name,
        owns=TRIAL.slices,
    )


async def test_an_undeclared_slice_fails_at_the_first_commit_naming_the_fix(
    redis: Redis, unique_prefix: str
) -> None:
    store = store_of(redis, unique_prefix)
    snapshot = await store.load("c1")
    with pytest.raises(UnregisteredSlice, match=r"services/trial/spec\.py") as raised:
        await store.commit(
            "c1",
            "t1",
            TRIAL.name,
            snapshot=snapshot,
            writes={"trial": {"stage": "x"}, "enrollment": {"plan": "3x"}},
            outbox=Outbox(),
            journal=[],
        )
    assert "enrollment" in str(raised.value) and "Owns(" in str(raised.value)
    assert await redis.hgetall(Keys(unique_prefix).state("c1")) == {}
    assert await store.outbox("c1", "t1", TRIAL.name) is None


async def test_a_declared_slice_commits_turn_after_turn(redis: Redis, unique_prefix: str) -> None:
    store = store_of(redis, unique_prefix)
    for turn in range(1, 4):
        snapshot = await store.load("c1")
        assert snapshot.version("context") == turn - 1
        committed = await store.commit(
            "c1",
            f"t{turn}",
            TRIAL.name,
            snapshot=snapshot,
            writes={"context": {"turn": turn}},
            outbox=Outbox(),
            journal=[],
        )
        assert committed
    assert (await store.load("c1")).get("context") == {"turn": 3, "_v": 3}
