"""Worker processes on a real Redis: replicas share a stream; the merger completes once; one
merger or scheduler process serves every tenant's deadlines or due messages."""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml
from faststream.redis import RedisBroker
from faststream.redis.parser.binary import BinaryMessageFormatV1
from redis.asyncio import Redis

from services.registry import TOPOLOGY
from shared.bus import ensure_groups
from shared.clock import Clock
from shared.contracts import (
    InboundMessage,
    MergeReady,
    Part,
    Reply,
    SpecialistTask,
    Turn,
    TurnPlan,
)
from shared.keys import Keys
from shared.lua import register
from shared.merge import queue_open
from shared.pack import PACKS_DIR, load_pack
from shared.scheduled import Scheduled, ScheduleStore
from shared.state import journal_entry
from tests.system import decode_entry, service

NOW = datetime(2026, 2, 10, 18, 0, tzinfo=UTC)


def make_turn(i: int, conversation: str | None = None) -> Turn:
    cid = conversation or f"conv-{i}"
    message = InboundMessage(
        channel="http",
        conversation_id=cid,
        message_id=f"m-{i}",
        text="quero agendar",
        sent_at=NOW,
        received_at=NOW,
        contact=cid,
    )
    return Turn(
        turn_id=f"turn-{i}",
        conversation_id=cid,
        channel="http",
        seq=1,
        messages=[message],
        text=message.text,
        now=NOW,
    )


async def read_entries(
    redis_url: str, stream: str, count: int, timeout_s: float = 30
) -> list[dict[bytes, bytes]]:
    """Block on ``stream`` until ``count`` entries arrived (no sleeping); their fields."""
    client = Redis.from_url(redis_url)
    found: list[dict[bytes, bytes]] = []
    last = "0-0"
    try:
        async with asyncio.timeout(timeout_s):
            while len(found) < count:
                result = await client.xread({stream: last}, count=500, block=1000)
                for _, entries in result or []:
                    for entry_id, fields in entries:
                        found.append(fields)
                        last = entry_id
    finally:
        await client.aclose()
    return found


async def read_all(redis_url: str, stream: str, count: int, timeout_s: float = 30) -> list[bytes]:
    """The bodies of the first ``count`` entries of ``stream`` (blocking until they arrive)."""
    return [decode_entry(f) for f in await read_entries(redis_url, stream, count, timeout_s)]


async def open_turn(redis_url: str, keys: Keys, turn: Turn, deadline_ms: int = 8_000) -> None:
    """What the gateway does as a turn starts, for the merger: its record and deadline."""
    client = Redis.from_url(redis_url)
    async with client.pipeline(transaction=False) as pipe:
        queue_open(
            pipe, keys, turn.turn_id, turn.model_dump_json(), ttl_s=600, deadline_ms=deadline_ms
        )
        await pipe.execute()
    await client.aclose()


async def settled(redis_url: str, stream: str, group: str, timeout_s: float = 10) -> int:
    """The group's pending count once it has read the whole stream and acknowledged it all,
    or when ``timeout_s`` passed (the count then says what stayed pending)."""
    client = Redis.from_url(redis_url)
    pending = -1
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                last = (await client.xinfo_stream(stream))["last-generated-id"]
                [info] = [
                    g for g in await client.xinfo_groups(stream) if g["name"] == group.encode()
                ]
                pending = int(info["pending"])
                if info["last-delivered-id"] == last and pending == 0:
                    return 0
                await asyncio.sleep(0.05)
    except TimeoutError:
        return pending
    finally:
        await client.aclose()


async def publisher(redis_url: str, keys: Keys) -> RedisBroker:
    client = Redis.from_url(redis_url)
    await ensure_groups(client, keys)
    await client.aclose()
    broker = RedisBroker(redis_url, logger=None)
    await broker.connect()
    return broker


async def test_two_replicas_share_a_stream_without_double_processing(
    redis_url: str, unique_prefix: str
) -> None:
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    broker = await publisher(redis_url, keys)
    writer = Redis.from_url(redis_url)
    n = 200
    with (
        service("trial", redis_url, unique_prefix, ORQ_WORKERS="4"),
        service("trial", redis_url, unique_prefix, ORQ_WORKERS="4"),
    ):
        for i in range(n):
            turn = make_turn(i)
            # The turn's merge record waits for the trial's part alone, so each part completes
            # its turn and the trial's commit sends it out (one Redis: a MergeReady on the
            # outbound stream, for the gateway to compose).
            await open_turn(redis_url, keys, turn)
            plan = TurnPlan(turn_id=turn.turn_id, conversation_id=turn.conversation_id,
                            expected=["trial"])  # fmt: skip
            await writer.hset(keys.merge_turn(turn.turn_id), "plan", plan.model_dump_json())
            task = SpecialistTask(turn=turn, route="trial", intents=["trial"], text=turn.text)
            await broker.publish(task.model_dump_json().encode(), stream=keys.tasks("trial"))
        bodies = await read_all(redis_url, keys.outbound, n)
    await broker.stop()
    await writer.aclose()
    readies = [MergeReady.model_validate_json(b) for b in bodies]
    assert sorted(r.turn_id for r in readies) == sorted(f"turn-{i}" for i in range(n))
    for ready in readies:
        assert Part.model_validate_json(ready.fields["part:trial"]).source == "trial"
    client = Redis.from_url(redis_url, decode_responses=True)
    consumers = await client.xinfo_consumers(keys.tasks("trial"), "trial")
    pending = await client.xpending(keys.tasks("trial"), "trial")
    await client.aclose()
    assert len(consumers) == 2
    assert pending["pending"] == 0
    # Each commit's journal entry travels with its part, for the reply to write.
    for ready in readies:
        journal = Part.model_validate_json(ready.fields["part:trial"]).journal
        assert [json.loads(e)["service"] for e in journal] == ["trial"]


async def test_merger_deadline_sends_partial_reply_with_fallback_line(
    redis_url: str, unique_prefix: str
) -> None:
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    broker = await publisher(redis_url, keys)
    turn = make_turn(1, "deadline-conv")
    plan = TurnPlan(
        turn_id=turn.turn_id,
        conversation_id=turn.conversation_id,
        expected=["trial", "faq", "mode_router"],
    )
    faq = Part(
        turn_id=turn.turn_id,
        conversation_id=turn.conversation_id,
        source="faq",
        text="Ficamos na Rua das Palmeiras, 250.",
    )
    with service("merger", redis_url, unique_prefix):
        await open_turn(redis_url, keys, turn, deadline_ms=300)
        await broker.publish(plan.model_dump_json().encode(), stream=keys.merge)
        await broker.publish(faq.model_dump_json().encode(), stream=keys.merge)
        [body] = await read_all(redis_url, keys.outbound, 1)
    await broker.stop()
    reply = Reply.model_validate_json(body)
    pack = load_pack("ctsmash")
    trial_fallbacks = pack.sections["texts"]["fallback_missing_part_trial"]
    if isinstance(trial_fallbacks, str):
        trial_fallbacks = [trial_fallbacks]
    assert reply.partial is True
    # The fallback line stands where the missing part would have been (trial before faq).
    fallback, answer = reply.text.split("\n\n")
    assert fallback in trial_fallbacks
    assert answer == "Ficamos na Rua das Palmeiras, 250."
    client = Redis.from_url(redis_url, decode_responses=True)
    journal = [json.loads(e) for e in await client.lrange(keys.journal("deadline-conv"), 0, -1)]
    await client.aclose()
    merge = [e for e in journal if e["event"] == "merge.partial"]
    assert merge and merge[0]["missing"] == ["trial"]


async def test_the_merger_answers_a_completed_turn_from_its_notice_alone(
    redis_url: str, unique_prefix: str
) -> None:
    """A ``MergeReady`` carries the merge hash its commit read: the merger composes the reply
    from it (the turn's own hash is gone here, as after its TTL), and its mark gets a TTL."""
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    broker = await publisher(redis_url, keys)
    turn = make_turn(1)
    cid = turn.conversation_id
    plan = TurnPlan(turn_id=turn.turn_id, conversation_id=cid, expected=["faq"])
    part = Part(turn_id=turn.turn_id, conversation_id=cid, source="faq", text="Abrimos às 7h.")
    fields = {"turn": turn.model_dump_json(), "plan": plan.model_dump_json(),
              "part:faq": part.model_dump_json(), "_done": "complete", "_done_at": "1"}  # fmt: skip
    ready = MergeReady(turn_id=turn.turn_id, conversation_id=cid, fields=fields)
    with service("merger", redis_url, unique_prefix):
        await broker.publish(ready.model_dump_json().encode(), stream=keys.merge)
        [body] = await read_all(redis_url, keys.outbound, 1)
        left = await settled(redis_url, keys.merge, "merger")
    await broker.stop()
    reply = Reply.model_validate_json(body)
    assert (reply.turn_id, reply.partial) == (turn.turn_id, False)
    assert "Abrimos às 7h." in reply.text
    assert left == 0
    client = Redis.from_url(redis_url, decode_responses=True)
    assert await client.hgetall(keys.merge_turn(turn.turn_id)) == {"_published": "1"}
    assert await client.ttl(keys.merge_turn(turn.turn_id)) > 0
    await client.aclose()


async def test_two_mergers_complete_each_turn_exactly_once(
    redis_url: str, unique_prefix: str
) -> None:
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    broker = await publisher(redis_url, keys)
    n = 100
    with (
        service("merger", redis_url, unique_prefix),
        service("merger", redis_url, unique_prefix),
    ):
        for i in range(n):
            turn = make_turn(i)
            plan = TurnPlan(
                turn_id=turn.turn_id,
                conversation_id=turn.conversation_id,
                expected=["trial", "mode_router"],
            )
            parts = [
                Part(
                    turn_id=turn.turn_id,
                    conversation_id=turn.conversation_id,
                    source="trial",
                    text=f"resposta {i}",
                ),
                Part(
                    turn_id=turn.turn_id, conversation_id=turn.conversation_id, source="mode_router"
                ),
            ]
            # Inputs in varying order, and one part delivered twice.
            items = [plan, *parts, parts[0]] if i % 2 else [*parts, plan, parts[0]]
            await open_turn(redis_url, keys, turn)
            for item in items:
                await broker.publish(item.model_dump_json().encode(), stream=keys.merge)
        bodies = await read_all(redis_url, keys.outbound, n)
        replies = [Reply.model_validate_json(b) for b in bodies]
        # Nothing more arrives: the next entry would have been another reply.
        extra = await Redis.from_url(redis_url).xlen(keys.outbound)
        # Every input acknowledged: by MERGE_ADD, with the reply (one Redis) or by the bus.
        left = await settled(redis_url, keys.merge, "merger")
    await broker.stop()
    assert left == 0
    assert extra == n
    assert sorted(r.turn_id for r in replies) == sorted(f"turn-{i}" for i in range(n))
    expected = {f"turn-{i}": f"resposta {i}" for i in range(n)}
    wrong = [(r.turn_id, r.partial) for r in replies if r.partial or r.text != expected[r.turn_id]]
    assert wrong == []


async def test_one_merger_process_expires_every_tenants_turns_each_with_its_own_pack(
    redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    """With several tenants the deadlines are one sorted set per partition, whatever their
    number, watched by one loop per merger process: each due turn is expired by its tenant's
    merger (its pack's fallback line, its tenant's keys, its tenant on the reply)."""
    beta_pack = tmp_path / "beta-pack"
    shutil.copytree(PACKS_DIR / "ctsmash", beta_pack)
    texts_file = beta_pack / "texts.yaml"
    beta_fallback = "Beta: não consegui consultar isso agora."
    texts = yaml.safe_load(texts_file.read_text(encoding="utf-8"))
    texts["texts"]["fallback_missing_part_faq"] = beta_fallback
    texts_file.write_text(yaml.safe_dump(texts, allow_unicode=True), encoding="utf-8")
    tenants_file = tmp_path / "tenants.yaml"
    listed = [
        {"id": "alpha", "pack": "ctsmash", "admin_token": "alpha-admin-0123456789"},
        {"id": "beta", "pack": str(beta_pack), "admin_token": "beta-admin-01234567890"},
    ]
    tenants_file.write_text(yaml.safe_dump({"tenants": listed}), encoding="utf-8")
    keys = {t: Keys(unique_prefix, tenant=t, topology=TOPOLOGY) for t in ("alpha", "beta")}
    shared = keys["alpha"]
    broker = await publisher(redis_url, shared)
    with service("merger", redis_url, unique_prefix, ORQ_TENANTS=str(tenants_file)):
        for tenant, tenant_keys in keys.items():
            turn = make_turn(1, "same-conv")  # the same ids under both tenants
            await open_turn(redis_url, tenant_keys, turn, deadline_ms=300)
            plan = TurnPlan(turn_id=turn.turn_id, conversation_id="same-conv", expected=["faq"])
            await broker.publish(
                plan.model_dump_json().encode(), stream=shared.merge, headers={"tenant": tenant}
            )
        replies = {}
        for fields in await read_entries(redis_url, shared.outbound, 2):
            body, headers = BinaryMessageFormatV1.parse(fields[b"__data__"])
            replies[headers["tenant"]] = Reply.model_validate_json(body)
    await broker.stop()
    client = Redis.from_url(redis_url)
    left = [await client.zcard(key) for key in shared.all_merge_deadlines()]
    await client.aclose()
    alpha = load_pack("ctsmash").sections["texts"]["fallback_missing_part_faq"]
    assert replies["alpha"].partial and replies["alpha"].text in [alpha, *alpha]
    assert replies["beta"].partial and replies["beta"].text == beta_fallback
    assert left == [0]


async def test_due_turns_of_a_tenant_not_served_here_do_not_hide_a_served_one(
    redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    """More due turns of a tenant this merger does not serve than one reading takes, all due
    before a served tenant's turn: they are left for a process that serves them, and the
    served turn still gets its partial reply."""
    tenants_file = tmp_path / "tenants.yaml"
    listed = [{"id": "alpha", "pack": "ctsmash", "admin_token": "alpha-admin-0123456789"}]
    tenants_file.write_text(yaml.safe_dump({"tenants": listed}), encoding="utf-8")
    alpha = Keys(unique_prefix, tenant="alpha", topology=TOPOLOGY)
    ghost = Keys(unique_prefix, tenant="ghost", topology=TOPOLOGY)
    for i in range(150):
        await open_turn(redis_url, ghost, make_turn(1000 + i, f"ghost-{i}"), deadline_ms=-60_000)
    served = make_turn(1, "alpha-conv")
    await open_turn(redis_url, alpha, served, deadline_ms=0)
    with service("merger", redis_url, unique_prefix, ORQ_TENANTS=str(tenants_file)):
        [fields] = await read_entries(redis_url, alpha.outbound, 1)
    body, headers = BinaryMessageFormatV1.parse(fields[b"__data__"])
    reply = Reply.model_validate_json(body)
    assert (headers["tenant"], reply.turn_id, reply.partial) == ("alpha", served.turn_id, True)
    client = Redis.from_url(redis_url)
    [left] = [await client.zcard(key) for key in alpha.all_merge_deadlines()]
    await client.aclose()
    assert left == 150


async def test_one_scheduler_process_sends_every_tenants_due_messages_each_as_its_tenant(
    redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    """With several tenants the scheduler's buckets and their index are one set of keys,
    whatever their number, claimed by one loop per scheduler process: each due message is sent
    by its tenant's sender (its tenant on the reply, its tenant's item and journal)."""
    tenants_file = tmp_path / "tenants.yaml"
    listed = [
        {"id": tenant, "pack": "ctsmash", "admin_token": f"{tenant}-admin-0123456789"}
        for tenant in ("alpha", "beta")
    ]
    tenants_file.write_text(yaml.safe_dump({"tenants": listed}), encoding="utf-8")
    keys = {t: Keys(unique_prefix, tenant=t, topology=TOPOLOGY) for t in ("alpha", "beta")}
    shared = keys["alpha"]
    client = Redis.from_url(redis_url, decode_responses=True)
    stores = {
        tenant: ScheduleStore(client, register(client), tenant_keys, journal_max=100, ttl_s=3600)
        for tenant, tenant_keys in keys.items()
    }
    await Clock(client, shared, movable=True).set(NOW + timedelta(seconds=1))
    for tenant, store in stores.items():
        reminder = Scheduled(
            id="e1-day_before",  # the same ids under both tenants
            conversation_id="same-conv",
            kind="day_before",
            booking_id="AE-1",
            due_at=NOW,
            class_at=NOW + timedelta(days=1),
            text=f"lembrete de {tenant}",
            channel="http",
        )
        await store.add(reminder, "pending", NOW, journal_entry("scheduler", None, "created"))
    with service(
        "scheduler", redis_url, unique_prefix, ORQ_TENANTS=str(tenants_file), ORQ_TEST_CLOCK="1"
    ) as (_, watcher):
        replies = {}
        outbound = shared.route(shared.outbound, "same-conv")
        for fields in await read_entries(redis_url, outbound, 2):
            body, headers = BinaryMessageFormatV1.parse(fields[b"__data__"])
            replies[headers["tenant"]] = Reply.model_validate_json(body)
        for tenant in keys:  # logged once its item is marked sent
            sent = f'"tenant": "{tenant}", "id": "e1-day_before", "kind": "day_before", "event": '
            assert watcher.wait_for(sent + '"scheduled message sent"', 30), watcher.tail()
    statuses = {t: (await store.items("same-conv"))[0][1] for t, store in stores.items()}
    journals = {
        t: [json.loads(e)["event"] for e in await client.lrange(k.journal("same-conv"), 0, -1)]
        for t, k in keys.items()
    }
    indexes = {k.sched_buckets for k in keys.values()}
    indexed = await client.zcard(shared.sched_buckets)
    await client.aclose()
    assert {t: r.text for t, r in replies.items()} == {
        "alpha": "lembrete de alpha",
        "beta": "lembrete de beta",
    }
    assert all(r.scheduled and r.turn_id == "sched-e1-day_before" for r in replies.values())
    assert statuses == {"alpha": "sent", "beta": "sent"}
    assert all(events[-1] == "scheduled.sent" for events in journals.values()), journals
    assert indexes == {f"{unique_prefix}sched:{{buckets}}"} and indexed == 1
