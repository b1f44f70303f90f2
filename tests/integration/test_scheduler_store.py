"""The scheduler's Redis scripts on a real Redis: claims are exclusive across replicas, an
abandoned claim is taken again, a held or cancelled message is never handed out, each status
change is journaled once, and the buckets every tenant shares keep each tenant's messages its
own."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis

from services.scheduler.app import Send, tick_once
from shared.clock import Clock
from shared.keys import Keys
from shared.lua import register
from shared.scheduled import Adding, Claimed, Scheduled, ScheduleStore
from shared.service import Lookup
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


async def test_an_events_items_are_recorded_together_once_each(store: ScheduleStore) -> None:
    """A booking's reminders in one ``add_all``: each recorded and journaled once, the pending
    one in its bucket and the dropped one in none; the event redelivered creates nothing, and
    a pending item whose bucket write was lost (a crash between) is put in its bucket again."""
    later = item(2, due=DUE + timedelta(hours=3))
    adds = [
        Adding(item(1), "pending", DUE, entry("scheduled.created")),
        Adding(later, "dropped", DUE, entry("scheduled.dropped")),
    ]
    assert await store.add_all(adds, "t1") == [True, True]
    [bucket] = await store.due_buckets(DUE + timedelta(hours=5))
    assert await store.redis.zrange(store.keys.sched_due(bucket), 0, -1) == [
        store.keys.sched_bucket_member("c1", item(1).id)
    ]
    await store.redis.delete(store.keys.sched_due(bucket))  # the crash between the two writes
    assert await store.add_all(adds, "t1") == [False, False]
    assert await store.redis.zcard(store.keys.sched_due(bucket)) == 1
    journal = await store.redis.lrange(store.keys.journal("c1"), 0, -1)
    assert len(journal) == 2
    assert sorted((i.id, status) for i, status, _ in await store.items("c1")) == [
        ("e1-day_before", "pending"),
        ("e2-day_before", "dropped"),
    ]


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


def tenant_stores(redis: Redis, prefix: str) -> dict[str, ScheduleStore]:
    scripts = register(redis)
    return {
        tenant: ScheduleStore(
            redis, scripts, Keys(prefix, tenant=tenant), journal_max=100, ttl_s=3600
        )
        for tenant in ("alpha", "beta")
    }


async def test_tenants_share_the_buckets_but_each_lists_and_cancels_only_its_own(
    redis: Redis, unique_prefix: str
) -> None:
    stores = tenant_stores(redis, unique_prefix)
    for tenant, store in stores.items():
        await store.add(item(1), "pending", DUE, entry("scheduled.created"))  # the same ids
        await store.add(item(2, f"{tenant}-only"), "pending", DUE, entry("scheduled.created"))
    alpha, beta = stores["alpha"], stores["beta"]
    assert alpha.keys.sched_buckets == beta.keys.sched_buckets
    [bucket] = await alpha.due_buckets(DUE)
    assert alpha.keys.sched_due(bucket) == beta.keys.sched_due(bucket)
    assert sorted(await redis.zrange(alpha.keys.sched_due(bucket), 0, -1)) == [
        "alpha~alpha-only|e2-day_before",
        "alpha~c1|e1-day_before",
        "beta~beta-only|e2-day_before",
        "beta~c1|e1-day_before",
    ]
    listed = await alpha.listing(None, None)
    assert [(r["conversation_id"], r["id"]) for r in listed] == [
        ("c1", "e1-day_before"),
        ("alpha-only", "e2-day_before"),
    ]
    assert await alpha.cancel(item(1), bucket, entry("scheduled.cancelled"))
    assert [r["conversation_id"] for r in await alpha.listing(None, None)] == ["alpha-only"]
    assert [r["conversation_id"] for r in await beta.listing(None, None)] == ["c1", "beta-only"]
    assert await beta.redis.zscore(beta.keys.sched_due(bucket), "beta~c1|e1-day_before")


async def test_a_message_of_a_tenant_not_served_here_stays_claimed_for_a_process_serving_it(
    redis: Redis, unique_prefix: str
) -> None:
    """The one loop hands each claimed message to its tenant's sender; one whose tenant this
    process does not serve is left claimed (not handed out again before its claim expires,
    then claimed by whichever process looks, here one serving the tenant)."""
    stores = tenant_stores(redis, unique_prefix)
    for store in stores.values():
        await store.add(item(1), "pending", DUE, entry("scheduled.created"))
    clock = Clock(redis, Keys(unique_prefix), movable=True)
    sent: list[tuple[str, str, str]] = []

    def serving(*tenants: str) -> Lookup:
        def sender(tenant: str) -> Send | None:
            async def send(claimed: Claimed, now: datetime) -> None:
                sent.append((tenant, claimed.conversation_id, claimed.item_id))
                await stores[tenant].finish(claimed)

            return send if tenant in tenants else None

        return sender

    shared = stores["alpha"]
    await clock.set(DUE + timedelta(seconds=1))
    assert await tick_once(shared, clock, serving("alpha"), 2_000) == 1
    assert await tick_once(shared, clock, serving("beta"), 2_000) == 0
    assert sent == [("alpha", "c1", "e1-day_before")]
    await clock.set(DUE + timedelta(seconds=4))
    assert await tick_once(shared, clock, serving("beta"), 2_000) == 1
    assert sent[1:] == [("beta", "c1", "e1-day_before")]
    # Every member finished and the hour over: the bucket leaves the one index.
    await clock.set(DUE + timedelta(hours=2))
    assert await tick_once(shared, clock, serving(), 2_000) == 0
    assert await redis.zcard(shared.keys.sched_buckets) == 0
