"""Each tenant's work names its tenant, on a real Redis: the bus counts a message under the
tenant its header names (handled, latency, dead letters; its dead-letter log line names it
too) and each stored journal entry of a tenant says whose it is, while a deployment of one
counts under "" and writes its journal entries unchanged."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis
from structlog.testing import capture_logs

from shared.bus import Bus, Handler, make_broker
from shared.keys import Keys
from shared.lua import register
from shared.scheduled import Scheduled, ScheduleStore
from shared.settings import Settings
from shared.state import Outbox, StateStore, journal_entry, stamp_tenant

SERVICE = "tenant-labels-test"
DUE = datetime(2026, 2, 9, 21, 0, tzinfo=UTC)


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
async def bus(redis_url: str, redis: Redis, unique_prefix: str) -> AsyncIterator[Bus]:
    """A bus of a deployment of one (its runtimes take tenant views of it); the broker starts
    once the test subscribed. One attempt, so a failing handler dead-letters at once."""
    settings = Settings(
        prefix=unique_prefix, redis_url=redis_url, workers=1, max_attempts=1, reclaim_idle_ms=500
    )
    broker = make_broker(settings)
    yield Bus(broker, redis, settings, Keys(unique_prefix), SERVICE)
    await broker.stop()


async def started(bus: Bus, stream: str, group: str) -> None:
    await bus.redis.xgroup_create(stream, group, id="0", mkstream=True)
    await bus.broker.start()


async def test_a_message_of_a_tenant_is_counted_under_its_tenant(bus: Bus) -> None:
    stream, group = f"{bus.keys.prefix}labels", "labels"
    acme = bus.for_tenant(Keys(bus.keys.prefix, tenant="acme"))
    handled: dict[str, asyncio.Event] = {"acme": asyncio.Event(), "": asyncio.Event()}

    def handler(tenant: str) -> Handler:
        async def handle(body: bytes) -> None:
            handled[tenant].set()

        return handle

    acme.subscribe(stream, group, handler("acme"))

    await bus.install(acme, "acme")  # a tenant view's subscriptions are staged
    bus.subscribe(stream, group, handler(""))
    ok = {"service": SERVICE, "stream": stream, "outcome": "ok"}
    before = {t: sample("orq_messages_handled_total", **ok, tenant=t) for t in handled}
    await started(bus, stream, group)
    await acme.publish(stream, "for acme")
    await bus.publish(stream, "for the one business")
    async with asyncio.timeout(10):
        await asyncio.gather(*(event.wait() for event in handled.values()))
    for tenant in handled:
        assert sample("orq_messages_handled_total", **ok, tenant=tenant) == before[tenant] + 1
    latency = {"service": SERVICE, "stream": stream, "tenant": "acme"}
    assert sample("orq_handler_seconds_count", **latency) >= 1


async def test_a_dead_letter_of_a_tenant_is_counted_under_its_tenant(bus: Bus) -> None:
    stream, group = f"{bus.keys.prefix}poison", "poison"
    acme = bus.for_tenant(Keys(bus.keys.prefix, tenant="acme"))

    async def fail(body: bytes) -> None:
        raise RuntimeError("poison")

    acme.subscribe(stream, group, fail)

    await bus.install(acme, "acme")  # a tenant view's subscriptions are staged
    labels = {"service": SERVICE, "stream": stream, "tenant": "acme"}
    await started(bus, stream, group)
    with capture_logs() as logs:
        await acme.publish(stream, "poison")
        async with asyncio.timeout(10):
            while not await bus.redis.xlen(bus.keys.dlq):
                await asyncio.sleep(0.05)
    [line] = [line for line in logs if line["event"] == "message moved to dead-letter stream"]
    assert line["tenant"] == "acme"
    assert sample("orq_dead_letters_total", **labels) == 1
    assert sample("orq_messages_handled_total", **labels, outcome="dead_letter") == 1


def test_stamping_names_the_tenant_and_leaves_a_deployment_of_ones_entries_alone() -> None:
    entry = journal_entry("gateway", "t1", "reply.dropped", reason="human_owner", tenant="x")
    assert stamp_tenant("", entry) == [entry]
    [stamped] = stamp_tenant("acme", entry)
    assert json.loads(stamped) == {**json.loads(entry), "tenant": "acme"}


async def stored_journal(redis: Redis, prefix: str, tenant: str) -> tuple[list[str], list[str]]:
    """The entries a state store and a schedule store of ``tenant`` write to one journal, and
    the journal as stored."""
    keys = Keys(prefix, tenant=tenant)
    written = [
        journal_entry("triage", "t1", "committed"),
        journal_entry("gateway", "t1", "appended"),
        journal_entry("scheduler", None, "scheduled"),
    ]
    scripts = register(redis)
    store = StateStore(redis, scripts, keys, journal_max=50, state_ttl_s=3600, outbox_ttl_s=60)
    await store.commit(
        "c1",
        "t1",
        "triage",
        snapshot=None,
        writes={},
        outbox=Outbox(),
        journal=written[:1],
    )
    await store.append_journal("c1", written[1])
    schedule = ScheduleStore(redis, scripts, keys, journal_max=50, ttl_s=3600)
    item = Scheduled(
        id="e1-day_before",
        conversation_id="c1",
        kind="day_before",
        booking_id="AE-1",
        due_at=DUE,
        class_at=DUE + timedelta(days=1),
        text="lembrete",
        channel="http",
    )
    await schedule.add(item, "pending", DUE, written[2])
    return written, list(await redis.lrange(keys.journal("c1"), 0, -1))


async def test_every_journal_entry_of_a_tenant_names_it(redis: Redis, unique_prefix: str) -> None:
    written, stored = await stored_journal(redis, unique_prefix, "acme")
    assert [json.loads(s) for s in stored] == [{**json.loads(w), "tenant": "acme"} for w in written]


async def test_a_deployment_of_one_writes_its_journal_entries_as_they_are(
    redis: Redis, unique_prefix: str
) -> None:
    written, stored = await stored_journal(redis, unique_prefix, "")
    assert stored == written
