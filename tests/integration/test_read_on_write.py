"""Read on write: a commit that adds a message to a stream one of its own process's
subscriptions reads also reads it for that subscription's group, and the process runs it at
once. It is the group's own delivery (pending under the subscription's consumer until handled,
redelivered by the claimer if its handler fails), without a read or a wake-up of its own."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

from redis.asyncio import Redis

from services.registry import BY_NAME, TOPOLOGY
from shared.bus import _LOCAL, takers
from shared.contracts import InboundMessage, Part, SpecialistTask, Turn, new_id
from shared.keys import Keys
from shared.metrics import HANDLED, TAKEN_ON_WRITE
from shared.service import Decision, Runtime, handle_once, make_runtime
from shared.settings import Settings
from shared.state import Outbox, Sent, Snapshot, journal_entry
from tests.integration.test_commit_rides import make_store
from tests.system import decode_entry


async def test_the_commit_reads_the_message_it_adds_for_the_takers_group(
    redis: Redis, unique_prefix: str
) -> None:
    store = make_store(redis, Keys(unique_prefix))
    stream = f"{unique_prefix}tasks"
    await redis.xgroup_create(stream, "g", id="0", mkstream=True)
    data = b"\x89BIN\x00binary"  # FastStream's format is not text

    committed = await store.commit(
        "c1", "t1", "trial", snapshot=None, writes={}, outbox=Outbox([]), journal=[],
        publish=[Sent(stream, data, takers=(("g", "here"),))], maxlen=100,
    )  # fmt: skip
    assert committed is not None
    [taken] = committed.taken
    assert (taken.stream, taken.group, taken.data) == (stream, "g", data)
    assert await redis.xlen(stream) == 1
    # Delivered to the taker's consumer, pending until it is handled.
    [pending] = await redis.xpending_range(stream, "g", "-", "+", 10)
    assert (pending["message_id"], pending["consumer"]) == (taken.message_id, "here")
    assert await redis.xreadgroup("g", "other", {stream: ">"}) == []

    # An entry the group had not read yet is older than the new one: the read takes it (as
    # the group's reader would have), with its own data; the new one waits for the reader.
    waiting = await redis.xadd(stream, {"__data__": b"\x89older"})
    committed = await store.commit(
        "c1", "t2", "trial", snapshot=None, writes={}, outbox=Outbox([]), journal=[],
        publish=[Sent(stream, b"newer", takers=(("g", "here"),))], maxlen=100,
    )  # fmt: skip
    assert committed is not None
    [taken] = committed.taken
    assert (taken.message_id, taken.data) == (waiting, b"\x89older")
    [[_, [(_, fields)]]] = await redis.xreadgroup("g", "reader", {stream: ">"})
    assert fields == {"__data__": "newer"}


def runtime(service: str, unique_prefix: str, redis_url: str, **settings: object) -> Runtime:
    return make_runtime(
        BY_NAME[service],
        Settings(prefix=unique_prefix, redis_url=redis_url, **settings),  # type: ignore[arg-type]
        topology=TOPOLOGY,
    )


async def test_a_message_for_a_subscription_of_the_same_process_is_taken_and_run(
    redis_url: str, redis: Redis, unique_prefix: str
) -> None:
    """Two services' runtimes in one process: what the first commits for the second is run
    by the second as its delivery, acknowledged by it, without being read again; a taken
    message whose handler fails stays pending and the claimer delivers it again."""
    producer = runtime("faq", unique_prefix, redis_url)
    consumer = runtime("trial", unique_prefix, redis_url, reclaim_idle_ms=200)
    source, target = f"{unique_prefix}in", f"{unique_prefix}mid"
    for stream, group in ((source, "faq"), (target, "trial")):
        await redis.xgroup_create(stream, group, id="0", mkstream=True)
    received: list[str] = []
    done = asyncio.Event()
    fail_first = True

    async def produce(body: bytes) -> None:
        turn_id = body.decode()

        async def decide(snapshot: Snapshot) -> Decision:
            decision = Decision()
            part = Part(turn_id=turn_id, conversation_id="c1", source="faq", text=turn_id)
            decision.outbox.add(target, part)
            decision.journal.append(journal_entry("faq", turn_id, "faq.sent"))
            return decision

        await handle_once(producer, "c1", turn_id, decide, acknowledges=True)

    async def consume(body: bytes) -> None:
        nonlocal fail_first
        text = Part.model_validate_json(body).text or ""
        if text == "t-fails" and fail_first:
            fail_first = False
            raise RuntimeError("the first attempt fails")
        received.append(text)
        if len(received) == 2:
            done.set()

    producer.bus.subscribe(source, "faq", produce)
    consumer.bus.subscribe(target, "trial", consume)
    taken_before = TAKEN_ON_WRITE.labels("trial", target, "")._value.get()
    ok_before = HANDLED.labels("trial", target, "ok", "")._value.get()
    assert takers(consumer.settings, target) == ()  # not running yet: not a taker
    await consumer.bus.broker.start()
    await producer.bus.broker.start()
    try:
        assert takers(consumer.settings, target) == (("trial", consumer.bus.consumer),)
        await producer.bus.publish(source, "t-ok")
        await producer.bus.publish(source, "t-fails")
        async with asyncio.timeout(10):
            await done.wait()
        assert sorted(received) == ["t-fails", "t-ok"]
        # Both were taken on write; the failed one came back through the claimer.
        assert TAKEN_ON_WRITE.labels("trial", target, "")._value.get() == taken_before + 2
        assert HANDLED.labels("trial", target, "ok", "")._value.get() == ok_before + 2
        assert HANDLED.labels("trial", target, "retry", "")._value.get() >= 1
        for stream, group in ((source, "faq"), (target, "trial")):
            assert (await redis.xpending(stream, group))["pending"] == 0
        assert await redis.xlen(target) == 2
        # A subscription whose handlers are all busy takes nothing: its reader reads later.
        local = _LOCAL[target]["trial"]
        local.busy = local.capacity
        try:
            assert takers(consumer.settings, target) == ()
        finally:
            local.busy = 0
    finally:
        await producer.bus.broker.stop()
        await consumer.bus.broker.stop()
        for rt in (producer, consumer):
            await rt.redis.aclose()


async def test_a_cluster_takes_nothing_on_write(redis_url: str, unique_prefix: str) -> None:
    """On a Redis Cluster the streams are in other slots than the commit's keys."""
    rt = runtime("trial", unique_prefix, redis_url)
    stream = f"{unique_prefix}{new_id()}"
    rt.bus.subscribe(stream, "trial", lambda body: asyncio.sleep(0))
    await rt.bus.broker.start()
    try:
        assert takers(rt.settings, stream) == (("trial", rt.bus.consumer),)
        clustered = rt.settings.model_copy(update={"redis_mode": "cluster"})
        assert takers(clustered, stream) == ()
    finally:
        await rt.bus.broker.stop()
        await rt.redis.aclose()


async def test_a_message_taken_on_write_runs_with_its_state_and_the_stream_keeps_it_without(
    redis_url: str, redis: Redis, unique_prefix: str
) -> None:
    """A turn published for a subscription of the process, and the task a commit sends for
    another: the takers run them with the state they carry; the streams keep them without it
    (``stateless``), for a reader elsewhere or a redelivery to read the state itself."""
    producer = runtime("triage", unique_prefix, redis_url)
    consumer = runtime("trial", unique_prefix, redis_url)
    turns, tasks = f"{unique_prefix}turns-in", f"{unique_prefix}tasks-in"
    for stream, group in ((turns, "triage"), (tasks, "trial")):
        await redis.xgroup_create(stream, group, id="0", mkstream=True)
    state = {"trial": '{"stage": "ask_date", "_v": 3}'}
    now = datetime(2026, 3, 2, 12, tzinfo=UTC)
    said = InboundMessage(
        channel="http", conversation_id="c1", message_id="m1", text="oi", sent_at=now,
        received_at=now,
    )  # fmt: skip
    turn = Turn(
        turn_id="t1", conversation_id="c1", channel="http", seq=1, messages=[said], text="oi",
        now=now, state=state,
    )  # fmt: skip
    seen: asyncio.Queue[tuple[str, dict[str, str] | None]] = asyncio.Queue()

    async def triage(body: bytes) -> None:
        brought = Turn.model_validate_json(body)
        seen.put_nowait(("turn", brought.state))

        async def decide(snapshot: Snapshot) -> Decision:
            decision = Decision()
            task = SpecialistTask(turn=brought, route="trial", intents=[], text="oi")
            decision.outbox.add(tasks, task)
            return decision

        await handle_once(producer, "c1", "t1", decide, acknowledges=True)

    async def trial(body: bytes) -> None:
        seen.put_nowait(("task", SpecialistTask.model_validate_json(body).turn.state))

    producer.bus.subscribe(turns, "triage", triage)
    consumer.bus.subscribe(tasks, "trial", trial)
    await consumer.bus.broker.start()
    await producer.bus.broker.start()
    try:
        await producer.bus.publish(turns, turn)
        async with asyncio.timeout(10):
            assert [await seen.get(), await seen.get()] == [("turn", state), ("task", state)]
        raw = Redis.from_url(redis_url)  # FastStream's format is not text
        kept = [
            json.loads(decode_entry(fields))
            for stream in (turns, tasks)
            for _, fields in await raw.xrange(stream)
        ]
        await raw.aclose()
        assert [kept[0]["state"], kept[1]["turn"]["state"]] == [None, None]
        assert kept[1]["turn"]["turn_id"] == "t1"
    finally:
        await producer.bus.broker.stop()
        await consumer.bus.broker.stop()
        for rt in (producer, consumer):
            await rt.redis.aclose()
