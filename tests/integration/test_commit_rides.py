"""A handler's commit publishes its outbox and acknowledges its delivery in the same script,
on one Redis (``shared.bus.riding``): nothing is published or acknowledged by a commit that does not
happen, and what the script publishes is FastStream's own message, read like any other."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import cast
from zoneinfo import ZoneInfo

import pytest
from faststream.redis.message import DATA_KEY
from faststream.redis.parser.binary import BinaryMessageFormatV1
from redis import exceptions as redis_exceptions
from redis.asyncio import Redis

from services.registry import BY_NAME, TOPOLOGY
from shared import lua
from shared.bus import Bus, make_broker
from shared.contracts import FunnelStep, InboundMessage, MergeReady, Part, SpecialistTask, Turn
from shared.funnel import tally
from shared.keys import Keys
from shared.lua import register
from shared.process import make_tenancy, start, stop
from shared.service import Decision, Runtime, TurnDecision, handle_once, on_tasks
from shared.settings import Settings
from shared.state import (
    Committed,
    Outbox,
    Sent,
    Snapshot,
    StateConflict,
    StateStore,
    ToMerge,
    journal_entry,
)
from shared.tenants import Tenant
from tests.integration.test_bus_and_merger import read_entries
from tests.system import decode_entry


async def pending_delivery(redis: Redis, stream: str, group: str) -> str:
    """A message read by the group and not acknowledged: its id."""
    await redis.xgroup_create(stream, group, id="0", mkstream=True)
    await redis.xadd(stream, {"__data__": "x"})
    [(_, [(message_id, _)])] = await redis.xreadgroup(group, "c", {stream: ">"}, count=1)
    return str(message_id)


@asynccontextmanager
async def serving(
    build: Callable[[Runtime, Tenant], None], redis_url: str, prefix: str
) -> AsyncIterator[Bus]:
    """The FAQ service's runtime with ``build``'s subscriptions, served until the block ends;
    its bus, to publish with."""
    settings = Settings(redis_url=redis_url, prefix=prefix)
    base, tenancy, tenants = make_tenancy(BY_NAME["faq"], build, settings, topology=TOPOLOGY)
    await tenancy.serve(tenants)
    tasks = await start(base)
    try:
        yield base.bus
    finally:
        await tenancy.stop()
        await stop(base, tasks)


def answering(
    source: str,
    group: str,
    handled: asyncio.Queue[str],
    decision_of: Callable[[Runtime, str], Decision],
    brought: Snapshot | None = None,
) -> Callable[[Runtime, Tenant], None]:
    """A service's subscription to ``source`` whose handler commits ``decision_of`` once for
    each message (a turn id of conversation c1), on the ``brought`` state if any, then says
    which turn it handled."""

    def build(rt: Runtime, tenant: Tenant) -> None:
        async def handler(body: bytes) -> None:
            turn_id = body.decode()

            async def decide(_snapshot: object) -> Decision:
                return decision_of(rt, turn_id)

            await handle_once(rt, "c1", turn_id, decide, acknowledges=True, snapshot=brought)
            handled.put_nowait(turn_id)

        rt.bus.subscribe(source, group, handler)

    return build


def make_store(redis: Redis, keys: Keys) -> StateStore:
    return StateStore(redis, register(redis), keys, journal_max=50, state_ttl_s=60, outbox_ttl_s=60)


async def pending(redis: Redis, stream: str, group: str) -> int:
    return int((await redis.xpending(stream, group))["pending"])


async def test_a_commit_publishes_and_acknowledges_only_when_it_commits(
    redis: Redis, unique_prefix: str
) -> None:
    keys = Keys(unique_prefix)
    store = make_store(redis, keys)
    source, out = f"{unique_prefix}in", f"{unique_prefix}out"
    first = await pending_delivery(redis, source, "g")
    entry = journal_entry("trial", "t1", "x")

    assert await store.commit(
        "c1", "t1", "trial", snapshot=None, writes={"trial": {"stage": "ask_date"}},
        outbox=Outbox([(out, "{}")]), journal=[entry],
        publish=[Sent(out, b"one"), Sent(out, b"two")], maxlen=1000, ack=(source, "g", first),
    )  # fmt: skip
    assert [f["__data__"] for _, f in await redis.xrange(out)] == ["one", "two"]
    assert await pending(redis, source, "g") == 0

    # A redelivery of the committed turn: nothing published again, its delivery left to the
    # handler (which replays the stored outbox, then acknowledges).
    await redis.xadd(source, {"__data__": "y"})
    [(_, [(again, _)])] = await redis.xreadgroup("g", "c", {source: ">"}, count=1)
    assert not await store.commit(
        "c1", "t1", "trial", snapshot=None, writes={}, outbox=Outbox([]), journal=[],
        publish=[Sent(out, b"three")], maxlen=1000, ack=(source, "g", str(again)),
    )  # fmt: skip
    assert await redis.xlen(out) == 2
    assert await pending(redis, source, "g") == 1

    # A stale snapshot: refused, nothing published, the delivery still pending.
    with pytest.raises(StateConflict):
        await store.commit(
            "c1", "t2", "trial", snapshot=None, writes={"trial": {"stage": "booked"}},
            outbox=Outbox([]), journal=[], publish=[Sent(out, b"four")], maxlen=1000,
            ack=(source, "g", str(again)),
        )  # fmt: skip
    assert await redis.xlen(out) == 2
    assert await pending(redis, source, "g") == 1
    assert [e["event"] for e in await store.journal("c1")] == ["x"]


async def test_the_encoded_message_is_faststreams_own_with_the_tenants_header(
    redis: Redis, unique_prefix: str
) -> None:
    settings = Settings(prefix=unique_prefix)
    bus = Bus(make_broker(settings), redis, settings, Keys(unique_prefix), "test")
    acme = bus.for_tenant(Keys(unique_prefix, tenant="acme"))
    [(stream, data)] = await acme.encode([("s", '{"a": 1}')])
    body, headers = BinaryMessageFormatV1.parse(data)
    assert (stream, body, headers["tenant"]) == ("s", b'{"a": 1}', "acme")
    # The field the commit script writes the encoded message in is FastStream's.
    assert f"'{DATA_KEY}'" in lua.COMMIT
    [(_, data)] = await bus.encode([("s", "plain")])
    body, headers = BinaryMessageFormatV1.parse(data)
    assert body == b"plain" and "tenant" not in headers


async def test_a_handler_that_ends_in_its_commit_leaves_nothing_pending(
    redis_url: str, redis: Redis, unique_prefix: str
) -> None:
    """Through the real bus and a real FastStream subscriber: the decision's part arrives
    once, the delivery is acknowledged; a redelivered turn replays its stored outbox."""
    source, group = f"{unique_prefix}rides", "rides"
    out = Keys(unique_prefix).events
    handled: asyncio.Queue[str] = asyncio.Queue()

    def decide(rt: Runtime, turn_id: str) -> Decision:
        decision = Decision()
        decision.outbox.add(
            out, Part(turn_id=turn_id, conversation_id="c1", source="faq", text="oi")
        )
        decision.journal.append(journal_entry("faq", turn_id, "faq.answered"))
        return decision

    build = answering(source, group, handled, decide)
    await redis.xgroup_create(source, group, id="0", mkstream=True)
    async with serving(build, redis_url, unique_prefix) as bus:
        await bus.publish(source, "t1")
        async with asyncio.timeout(10):
            assert await handled.get() == "t1"
        # Acknowledged by the commit itself, before the handler returned.
        assert await pending(redis, source, group) == 0
        await bus.publish(source, "t1")  # the same turn again: its outbox replayed
        async with asyncio.timeout(10):
            assert await handled.get() == "t1"
        parts = [decode_entry(f) for f in await read_entries(redis_url, out, 2)]
    assert [Part.model_validate_json(p).text for p in parts] == ["oi", "oi"]
    journal = await redis.lrange(Keys(unique_prefix).journal("c1"), 0, -1)
    assert [json.loads(e)["event"] for e in journal] == ["faq.answered"]


async def test_a_commit_adds_a_merge_input_and_sends_the_turn_out_only_when_it_completes(
    redis: Redis, unique_prefix: str
) -> None:
    """The input that completes the turn sends it to the outbound stream (the gateway composes
    its reply), marks it published and takes it off the merge deadlines, in the same step:
    no merger hop, and no deadline left to expire it again."""
    keys = Keys(unique_prefix)
    store = make_store(redis, keys)
    merge = keys.merge_turn("t1")
    deadlines, member = keys.merge_deadlines("t1"), keys.qualified("t1")
    await redis.hset(merge, mapping={"turn": "{}", "plan": '{"expected": ["faq", "trial"]}'})
    await redis.zadd(deadlines, {member: 10**13, "another turn": 10**13})

    async def commit(source: str) -> None:
        part = f'{{"source": "{source}"}}'
        ready = MergeReady(turn_id="t1", conversation_id="c1", fields={}).model_dump_json()
        envelope = f"after {source}:".encode()
        target = ToMerge(merge, f"part:{source}", part, ready, deadlines, member)
        sent = Sent(keys.outbound, envelope, target)
        assert await store.commit(
            "c1", "t1", source, snapshot=None, writes={}, outbox=Outbox([]), journal=[],
            publish=[sent], maxlen=1000, merge_ttl_s=60,
        )  # fmt: skip

    await commit("faq")
    assert await redis.hget(merge, "part:faq") == '{"source": "faq"}'
    assert await redis.xlen(keys.outbound) == 0  # the turn still waits for the trial's part
    assert await redis.zscore(deadlines, member) is not None
    assert await redis.hget(merge, "_published") is None
    await commit("trial")
    [(_, published)] = await redis.xrange(keys.outbound)
    envelope, _, notice = published["__data__"].partition(":")
    assert envelope == "after trial"
    # The notice carries the merge hash as the completing commit read it.
    ready = MergeReady.model_validate_json(notice)
    assert ready.fields["part:faq"] == '{"source": "faq"}' and ready.fields["_done"] == "complete"
    assert ready.fields.items() <= (await redis.hgetall(merge)).items()
    assert await redis.hget(merge, "_published") == "1"
    assert await redis.zrange(deadlines, 0, -1) == ["another turn"]
    assert await redis.xlen(keys.merge) == 0


async def test_an_empty_bodys_envelope_then_a_body_reads_as_that_body() -> None:
    """What ``COMMIT`` relies on to publish a ``MergeReady`` it completes itself: FastStream's
    binary format puts the body last, so its envelope of an empty body followed by a body is
    the message of that body, headers included."""
    headers = {"tenant": "t1"}
    envelope = await BinaryMessageFormatV1.encode(
        message=b"", reply_to=None, headers=headers, correlation_id="c1"
    )
    body, read = BinaryMessageFormatV1.parse(envelope + '{"texto": "é"}'.encode())
    assert body == '{"texto": "é"}'.encode()
    assert read["tenant"] == "t1" and read["correlation_id"] == "c1"


async def test_the_merger_acknowledges_an_input_in_its_script_unless_the_turn_completes(
    redis: Redis, unique_prefix: str
) -> None:
    """An input that leaves the turn waiting (or a duplicate) is acknowledged by ``MERGE_ADD``;
    the one that completes it is not: the merger publishes the reply first."""
    scripts = register(redis)
    merge, source = f"{unique_prefix}merge:t1", f"{unique_prefix}parts"
    plan = '{"expected": ["faq", "trial"]}'
    await redis.hset(merge, mapping={"turn": "{}", "plan": plan})
    ids = [await pending_delivery(redis, source, "m")]
    for _ in range(2):
        await redis.xadd(source, {"__data__": "x"})
        [(_, [(message_id, _)])] = await redis.xreadgroup("m", "c", {source: ">"}, count=1)
        ids.append(str(message_id))

    async def add(field: str, message_id: str) -> str:
        result = await scripts.merge_add(
            keys=[merge, source], args=[field, "{}", 60, 1000, 5000, "m", message_id]
        )
        return str(result[0])

    assert await add("part:faq", ids[0]) == "wait"
    assert await add("part:faq", ids[1]) == "dup"
    assert await pending(redis, source, "m") == 1
    assert await add("part:trial", ids[2]) == "complete"
    assert await pending(redis, source, "m") == 1


async def test_a_commit_counts_a_funnel_step_once_per_conversation_on_its_business_day(
    redis: Redis, unique_prefix: str
) -> None:
    """A step counted by the commit script (nothing goes to the scheduler's stream): once for
    the conversation, not again for a redelivered turn or a later turn showing it again."""
    keys = Keys(unique_prefix)
    store = make_store(redis, keys)
    at = datetime(2026, 3, 3, 2, 30, tzinfo=UTC)  # still 2 March in São Paulo
    step = FunnelStep(conversation_id="c1", step="started", at=at, source="ctwa:9")
    sent = Sent(keys.funnel, b"", tally=tally(keys, step, "ctwa:9", ZoneInfo("America/Sao_Paulo")))

    async def commit(turn_id: str) -> Committed | None:
        return await store.commit(
            "c1", turn_id, "triage", snapshot=None, writes={}, outbox=Outbox([]), journal=[],
            publish=[sent], maxlen=1000,
        )  # fmt: skip

    assert await commit("t1") == Committed(("started",))
    assert await commit("t1") is None  # the same turn again: already committed
    assert await commit("t2") == Committed(())  # counted for this conversation already
    assert await redis.hgetall(keys.funnel_day("2026-03-02")) == {
        "started": "1",
        "started|ctwa:9": "1",
    }
    assert await redis.ttl(keys.funnel_seen("c1")) > 0
    assert await redis.exists(keys.funnel) == 0
    # Two steps in one commit: both counted, both keys given their TTL.
    await redis.delete(keys.funnel_day("2026-03-02"))
    steps = [
        Sent(keys.funnel, b"", tally=tally(
            keys, FunnelStep(conversation_id="c2", step=name, at=at, source="inbound"),
            "inbound", ZoneInfo("America/Sao_Paulo"),
        ))
        for name in ("started", "trial_asked")
    ]  # fmt: skip
    assert await store.commit(
        "c2", "t3", "triage", snapshot=None, writes={}, outbox=Outbox([]), journal=[],
        publish=steps, maxlen=1000,
    ) == Committed(("started", "trial_asked"))  # fmt: skip
    day = await redis.hgetall(keys.funnel_day("2026-03-02"))
    assert day == {"started": "1", "started|inbound": "1", "trial_asked": "1",
                   "trial_asked|inbound": "1"}  # fmt: skip
    assert await redis.ttl(keys.funnel_day("2026-03-02")) > 0
    assert await redis.ttl(keys.funnel_seen("c2")) > 0


async def test_a_commit_marked_by_its_merge_input_stores_no_outbox_and_is_found_by_it(
    redis: Redis, unique_prefix: str
) -> None:
    """A commit that publishes everything itself may store no outbox: its merge input marks
    it. A later commit of the same turn on a snapshot from before it finds that mark where it
    would find the outbox, writes nothing and leaves the delivery to its handler; a load that
    looks for the mark finds it too."""
    keys = Keys(unique_prefix)
    store = make_store(redis, keys)
    source = f"{unique_prefix}in"
    merge = keys.merge_turn("t1")
    await redis.hset(merge, mapping={"turn": "{}", "plan": '{"expected": ["faq", "trial"]}'})
    ready = MergeReady(turn_id="t1", conversation_id="c1", fields={}).model_dump_json()
    target = ToMerge(
        merge, "part:faq", '{"source": "faq"}', ready, keys.merge_deadlines("t1"), "t1"
    )

    async def commit(writes: dict[str, dict[str, str]], marked: bool = True) -> Committed | None:
        await redis.xadd(source, {"__data__": "turn"})
        [(_, [(delivery, _)])] = await redis.xreadgroup("g", "c", {source: ">"}, count=1)
        return await store.commit(
            "c1", "t1", "faq", snapshot=None, writes=writes, outbox=Outbox([(source, "{}")]),
            journal=[journal_entry("faq", "t1", "faq.answered")],
            publish=[Sent(keys.outbound, b"env:", target)], ack=(source, "g", str(delivery)),
            maxlen=1000, merge_ttl_s=60, marked=marked,
        )  # fmt: skip

    await redis.xgroup_create(source, "g", id="0", mkstream=True)
    first = await commit({"faq": {"topic": "preco"}})
    assert first is not None and not first.before
    assert await redis.exists(keys.outbox("c1", "t1", "faq")) == 0
    assert await redis.hget(merge, "part:faq") == '{"source": "faq"}'
    assert await pending(redis, source, "g") == 0

    # The same turn on the same (now stale) snapshot, and with no slice to write at all.
    for writes in ({"faq": {"topic": "horarios"}}, {}):
        again = await commit(writes)
        assert again is not None and again.before
        assert await pending(redis, source, "g") == 1  # the handler acknowledges it
        await redis.xack(source, "g", *[m for m, _ in await redis.xrange(source)])
    assert (await store.load("c1")).get("faq") == {"topic": "preco", "_v": 1}
    assert [e["event"] for e in await store.journal("c1")] == ["faq.answered"]

    stored, _ = await store.load_turn("c1", "t1", "faq", (merge, "part:faq"))
    assert stored is not None and stored.messages == []
    unmarked, _ = await store.load_turn("c1", "t1", "faq")
    assert unmarked is None
    # Only a commit that publishes a merge input itself may go without an outbox.
    await redis.hdel(merge, "part:faq")
    with pytest.raises(redis_exceptions.ResponseError, match="may store no outbox"):
        await store.commit(
            "c1", "t1", "faq", snapshot=None, writes={}, outbox=Outbox([]), journal=[],
            publish=[Sent(keys.outbound, b"env:", target)], maxlen=1000, marked=True,
        )  # fmt: skip


async def test_a_turn_handler_on_the_state_its_turn_brought_is_marked_by_its_part(
    redis_url: str, redis: Redis, unique_prefix: str
) -> None:
    """Through the real bus: a handler deciding on the state its turn brought commits its part
    without an outbox; the same turn again is found committed by that part, and nothing is
    written twice or left pending."""
    source, group = f"{unique_prefix}marked", "marked"
    keys = Keys(unique_prefix)
    merge = keys.merge_turn("t1")
    await redis.hset(merge, mapping={"turn": "{}", "plan": '{"expected": ["faq", "trial"]}'})
    handled: asyncio.Queue[str] = asyncio.Queue()

    def decide(rt: Runtime, turn_id: str) -> Decision:
        decision = Decision()
        decision.writes["faq"] = {"topic": "preco"}
        part = Part(turn_id=turn_id, conversation_id="c1", source="faq", text="oi")
        decision.outbox.add(rt.keys.route(rt.keys.merge, "c1"), part)
        decision.journal.append(journal_entry("faq", turn_id, "faq.answered"))
        return decision

    build = answering(source, group, handled, decide, Snapshot({"faq": None}))
    await redis.xgroup_create(source, group, id="0", mkstream=True)
    async with serving(build, redis_url, unique_prefix) as bus:
        for _ in range(2):
            await bus.publish(source, "t1")
            async with asyncio.timeout(10):
                assert await handled.get() == "t1"
            assert await redis.exists(keys.outbox("c1", "t1", "faq")) == 0
    assert await pending(redis, source, group) == 0
    part = json.loads(await redis.hget(merge, "part:faq"))
    assert part["text"] == "oi"
    state = await redis.hget(keys.state("c1"), "faq")
    assert json.loads(state) == {"topic": "preco", "_v": 1}
    # The decision's journal entry travels with its part, once, for the reply to write.
    assert [json.loads(e)["event"] for e in part["journal"]] == ["faq.answered"]
    assert await redis.llen(keys.journal("c1")) == 0


async def specialist_sees(
    redis_url: str, unique_prefix: str, before: Callable[[Keys], Awaitable[None]] | None = None
) -> Snapshot:
    """The snapshot a specialist (on the real bus) decides a task on: a task for turn t1 of c1
    that carries triage's state (its mode ``oferta``, version 1), while the state hash holds
    ``followup`` (version 2). ``before``: called, with the keys, before the task is sent."""
    keys = Keys(unique_prefix)
    seen: asyncio.Queue[Snapshot] = asyncio.Queue()

    def build(rt: Runtime, tenant: Tenant) -> None:
        async def decide(task: SpecialistTask, snapshot: Snapshot, decision: TurnDecision) -> None:
            decision.writes["faq"] = {"topic": "preco"}
            decision.reply("oi")
            seen.put_nowait(snapshot)

        on_tasks(rt, decide)

    now = datetime(2026, 3, 2, 12, tzinfo=UTC)
    said = InboundMessage(
        channel="http", conversation_id="c1", message_id="m1", text="quanto custa?",
        sent_at=now, received_at=now,
    )  # fmt: skip
    turn = Turn(
        turn_id="t1", conversation_id="c1", channel="http", seq=1, messages=[said],
        text=said.text, now=now,
    )  # fmt: skip
    triage = TurnDecision(rt=cast(Runtime, SimpleNamespace(keys=keys)), turn=turn)
    triage.writes["memory"] = {"facts": {}}
    triage.ask(SpecialistTask(turn=turn, route="faq", intents=["faq"], text=said.text))
    carried = Snapshot({"mode": {"mode": "oferta", "_v": 1}, "trial": {"stage": "ask_date"}})
    triage.complete(carried)
    [(stream, task)] = triage.outbox.messages
    assert stream == keys.route(keys.tasks("faq"), "c1")
    async with serving(build, redis_url, unique_prefix) as bus:
        if before is not None:
            await before(keys)
        await bus.publish(stream, task)
        async with asyncio.timeout(10):
            return await seen.get()


async def test_a_specialist_decides_on_the_state_its_task_carries_but_the_mode(
    redis_url: str, redis: Redis, unique_prefix: str
) -> None:
    """Through the real bus: a task triage hands over carries the state as triage's commit
    left it (``TurnDecision.complete``); the specialist decides on it without reading it, but
    for the mode router's slice (read fresh: the mode router decides the same turn beside
    triage), and its commit, marked by its part, stores no outbox."""
    keys = Keys(unique_prefix)
    await redis.hset(keys.merge_turn("t1"), mapping={"turn": "{}", "plan": '{"expected": []}'})
    await redis.hset(keys.state("c1"), mapping={
        "mode": json.dumps({"mode": "followup", "_v": 2}),
        "trial": json.dumps({"stage": "booked", "_v": 5}),
    })  # fmt: skip
    snapshot = await specialist_sees(redis_url, unique_prefix)
    assert snapshot.get("trial") == {"stage": "ask_date"}
    assert snapshot.get("memory") == {"facts": {}, "_v": 1}
    assert snapshot.mode() == "followup"
    assert await redis.exists(keys.outbox("c1", "t1", "faq")) == 0
    assert json.loads(await redis.hget(keys.state("c1"), "faq")) == {"topic": "preco", "_v": 1}


@pytest.mark.parametrize(("committed", "seen"), [("t1", "decidido"), ("t0", "followup")])
async def test_a_specialist_takes_the_mode_its_process_committed_for_the_turn(
    redis_url: str, redis: Redis, unique_prefix: str, committed: str, seen: str
) -> None:
    """Services run together: the mode router's commit of the turn (t1) in the same process
    is the mode the specialist goes by, without reading it. A commit of another turn (t0) is
    not: the specialist reads the state hash."""
    keys = Keys(unique_prefix)
    await redis.hset(keys.merge_turn("t1"), mapping={"turn": "{}", "plan": '{"expected": []}'})

    async def mode_router_commits(keys: Keys) -> None:
        assert await make_store(redis, keys).commit(
            "c1", committed, "mode_router", snapshot=None, writes={"mode": {"mode": "decidido"}},
            outbox=Outbox([]), journal=[],
        )  # fmt: skip
        # What the hash holds afterwards is what a read finds.
        await redis.hset(keys.state("c1"), "mode", json.dumps({"mode": "followup", "_v": 2}))

    snapshot = await specialist_sees(redis_url, unique_prefix, mode_router_commits)
    assert snapshot.mode() == seen


async def test_a_merge_input_that_comes_late_writes_the_journal_it_carries(
    redis: Redis, unique_prefix: str
) -> None:
    """A commit's journal entries travel in its merge input, for the turn's reply to write; an
    input added once its turn was done is in no reply, so its commit writes them itself."""
    keys = Keys(unique_prefix)
    store = make_store(redis, keys)
    ready = MergeReady(turn_id="t1", conversation_id="c1", fields={}).model_dump_json()
    merge = keys.merge_turn("t1")
    await redis.hset(merge, mapping={"turn": "{}", "plan": '{"expected": ["faq", "trial"]}'})

    async def commit(source: str) -> None:
        entry = journal_entry(source, "t1", f"{source}.answered")
        part = Part(turn_id="t1", conversation_id="c1", source=source, journal=[entry])
        target = ToMerge(
            merge, f"part:{source}", part.model_dump_json(), ready, keys.merge_deadlines("t1"), "t1"
        )
        assert await store.commit(
            "c1", "t1", source, snapshot=None, writes={}, outbox=Outbox([]), journal=[],
            publish=[Sent(keys.outbound, b"env:", target)], maxlen=1000,
        )  # fmt: skip

    await commit("faq")  # the turn waits for the trial's part: the entry waits in the hash
    assert await redis.llen(keys.journal("c1")) == 0
    await redis.hset(merge, mapping={"_done": "expired", "_published": "1"})  # its deadline
    await commit("trial")
    journal = await redis.lrange(keys.journal("c1"), 0, -1)
    assert [json.loads(e)["event"] for e in journal] == ["trial.answered"]
