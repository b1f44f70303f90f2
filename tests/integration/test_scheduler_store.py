"""The scheduler's Redis scripts on a real Redis: claims are exclusive across replicas, an
abandoned claim is taken again, a held or cancelled message is never handed out, and each
status change is journaled once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis

from shared.keys import Keys
from shared.lua import register
from shared.scheduled import Scheduled, ScheduleStore
from shared.state import journal_entry

DUE = datetime(2026, 2, 9, 21, 0, tzinfo=UTC)


@pytest.fixture
def store(redis: Redis, unique_prefix: str) -> ScheduleStore:
    return ScheduleStore(redis, register(redis), Keys(unique_prefix), journal_max=100, ttl_s=3600)


def item(n: int, conversation_id: str = "c1", due: datetime = DUE) -> Scheduled:
    return Scheduled(
        id=f"e{n}-day_before",
        conversation_id=conversation_id,
        kind="day_before",
        booking_id=f"AE-{n}",
        due_at=due,
        class_at=due + timedelta(days=1),
        text=f"lembrete {n}",
        channel="http",
    )


def entry(event: str) -> str:
    return journal_entry("scheduler", None, event)


async def test_two_replicas_claiming_at_once_never_share_a_message(store: ScheduleStore) -> None:
    for n in range(60):
        await store.add(item(n, f"c{n}"), "pending", DUE, entry("scheduled.created"))
    now = DUE + timedelta(seconds=1)
    [bucket] = await store.due_buckets(now)
    rounds = await asyncio.gather(*(store.claim(bucket, now, 10_000, limit=7) for _ in range(20)))
    claimed = [c.member for _, batch in rounds for c in batch]
    assert len(claimed) == len(set(claimed)) == 60


async def test_a_future_message_is_not_claimed_and_a_dead_claim_is_taken_again(
    store: ScheduleStore,
) -> None:
    await store.add(item(1), "pending", DUE, entry("scheduled.created"))
    [bucket] = await store.due_buckets(DUE)
    remaining, early = await store.claim(bucket, DUE - timedelta(seconds=1), 2_000)
    assert (remaining, early) == (1, [])
    _, [first] = await store.claim(bucket, DUE, 2_000)
    # Its replica dies: nobody else gets it before the claim expires, then someone does.
    assert (await store.claim(bucket, DUE + timedelta(seconds=1), 2_000))[1] == []
    _, [again] = await store.claim(bucket, DUE + timedelta(seconds=3), 2_000)
    assert again == first
    status, taken = await store.take(item(1), entry("scheduled.held"))
    assert status == "send" and taken == item(1)
    # A replica that died after taking it sends it again (same turn id: the channel dedupes).
    status, taken = await store.take(item(1), entry("scheduled.held"))
    assert status == "send"
    assert await store.move(item(1), "sending", "sent", entry("scheduled.sent"))
    assert not await store.move(item(1), "sending", "sent", entry("scheduled.sent"))
    await store.finish(again)
    assert await store.claim(bucket, DUE + timedelta(hours=2), 2_000) == (0, [])
    journal = await store.redis.lrange(store.keys.journal("c1"), 0, -1)
    assert sum('"scheduled.sent"' in line for line in journal) == 1


async def test_a_redelivered_event_creates_nothing_twice(store: ScheduleStore) -> None:
    assert await store.add(item(1), "pending", DUE, entry("scheduled.created"))
    assert not await store.add(item(1), "pending", DUE, entry("scheduled.created"))
    journal = await store.redis.lrange(store.keys.journal("c1"), 0, -1)
    assert len(journal) == 1
    assert [i.id for i, _, _ in await store.items("c1")] == ["e1-day_before"]


async def test_held_while_a_person_owns_the_conversation_and_cancel_removes_it(
    store: ScheduleStore,
) -> None:
    await store.redis.hset(store.keys.state("c1"), "meta", '{"handoff": "human", "_v": 1}')
    await store.add(item(1), "pending", DUE, entry("scheduled.created"))
    status, taken = await store.take(item(1), entry("scheduled.held"))
    assert (status, taken) == ("held", None)
    listed = await store.listing(None, None)
    assert [(r["id"], r["status"]) for r in listed] == [("e1-day_before", "held")]
    [(_, _, bucket)] = await store.items("c1")
    assert await store.cancel(item(1), bucket, entry("scheduled.cancelled"))
    assert await store.listing(None, None) == []
    assert [r["status"] for r in await store.listing("c1", None)] == ["cancelled"]
    assert (await store.take(item(1), entry("scheduled.held")))[0] == "cancelled"
