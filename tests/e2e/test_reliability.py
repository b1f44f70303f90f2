"""The guarantees of docs/architecture/index.md ("Guarantees and how they hold"), each proven by
injecting its fault (issue 8)."""

from __future__ import annotations

import asyncio
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import httpx
import pytest
from redis import Redis

from orquestra.redis_server import free_port
from services.registry import TOPOLOGY
from shared.contracts import DeadLetter
from shared.keys import Keys
from shared.pack import load_pack
from tests.e2e.journey import eventually
from tests.system import System, decode_entry, service

FAST_RECOVERY = {
    "ORQ_RECLAIM_IDLE_MS": "1500",
    "ORQ_REPUBLISH_AFTER_MS": "2000",
}


def cid(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:8]}"


def journal_of(http: httpx.Client, conversation: str) -> list[dict]:
    entries: list[dict] = http.get(f"/v1/conversations/{conversation}/journal").json()["entries"]
    return entries


def started(system: System, conversation: str) -> list[dict]:
    return [e for e in system.journal(conversation) if e["event"] == "turn.started"]


def test_three_messages_200ms_apart_are_one_turn_and_one_reply(system: System) -> None:
    conversation = cid("burst")
    for text in ("oi", "quero agendar", "pra terça"):
        system.post(conversation, text)
        time.sleep(0.2)  # the input itself: a person typing three quick messages
    reply = system.next_reply(conversation)
    assert [e["messages"] for e in started(system, conversation)] == [
        ["oi", "quero agendar", "pra terça"]
    ]
    assert system.replies(conversation, after=reply["cursor"])["replies"] == []


def test_same_webhook_three_times_to_two_gateways_is_one_turn(
    system: System, redis_url: str, prefix: str
) -> None:
    conversation = cid("dup")
    port = free_port()
    body = {"conversation_id": conversation, "text": "onde fica a CT?", "message_id": "wamid.X"}
    with service("gateway", redis_url, prefix, "--port", str(port)):
        urls = [system.base_url, f"http://127.0.0.1:{port}"] * 3

        def post(url: str) -> dict:
            return httpx.post(f"{url}/v1/messages", json=body, timeout=10).json()

        with ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(post, urls))
        reply = system.next_reply(conversation)
    assert sorted(a["duplicate"] for a in answers) == [False] + [True] * 5
    assert len(started(system, conversation)) == 1
    assert system.replies(conversation, after=reply["cursor"])["replies"] == []


def test_poison_message_goes_to_the_dead_letter_stream_and_the_turn_is_answered(
    redis_url: str, unique_prefix: str
) -> None:
    env = {
        **FAST_RECOVERY,
        "ORQ_FAULT_INJECT": "trial:VENENO",
        "ORQ_MAX_ATTEMPTS": "3",
        "ORQ_MERGE_DEADLINE_MS": "6000",
    }
    with System.up(redis_url, unique_prefix, **env) as system:
        poisoned, healthy = cid("poison"), cid("healthy")
        system.post(poisoned, "quero agendar VENENO")
        fine = system.say(healthy, "quero agendar uma aula")
        reply = system.next_reply(poisoned, wait=30)
    texts = load_pack("ctsmash").sections["texts"]["fallback_missing_part_trial"]
    fallbacks = [texts] if isinstance(texts, str) else texts
    assert any(line in reply["text"] for line in fallbacks)
    assert not any(line in fine["text"] for line in fallbacks)
    client = Redis.from_url(redis_url)
    letters = [
        DeadLetter.model_validate_json(decode_entry(f))
        for _, f in client.xrange(Keys(unique_prefix, topology=TOPOLOGY).dlq)
    ]
    client.close()
    assert len(letters) == 1
    assert letters[0].group == "trial" and letters[0].attempts == 3
    assert "VENENO" in letters[0].payload and "InjectedFault" in letters[0].error


def test_specialist_down_gets_a_partial_reply_then_recovers(
    redis_url: str, unique_prefix: str
) -> None:
    port = free_port()
    env = {"ORQ_MERGE_DEADLINE_MS": "1500"}
    workers = ["triage", "faq", "mode_router", "merger"]
    conversation = cid("stuck")
    base = f"http://127.0.0.1:{port}"
    with ExitStack() as stack:
        stack.enter_context(
            service("gateway", redis_url, unique_prefix, "--port", str(port), **env)
        )
        for name in workers:
            stack.enter_context(service(name, redis_url, unique_prefix, **env))
        http = httpx.Client(base_url=base, timeout=30)
        http.post("/v1/messages", json={"conversation_id": conversation, "text": "quero agendar"})
        first = http.get(f"/v1/conversations/{conversation}/replies", params={"wait": 20}).json()
        assert first["replies"], "the deadline must answer without trial"
        journal = http.get(f"/v1/conversations/{conversation}/journal").json()["entries"]
        partial = [e for e in journal if e["event"] == "merge.partial"]
        assert partial and partial[0]["missing"] == ["trial"]
        assert [e["event"] for e in journal].count("reply.delivered") == 1
        with service("trial", redis_url, unique_prefix, **env):
            # Back, trial takes up the task it missed (the conversation's context) first; a
            # message sent before that would be triaged without it.
            eventually(
                lambda: [e for e in journal_of(http, conversation) if e["service"] == "trial"]
            )
            http.post(
                "/v1/messages",
                json={"conversation_id": conversation, "text": "me chamo Ana, 30 anos"},
            )
            second = http.get(
                f"/v1/conversations/{conversation}/replies",
                params={"after": first["cursor"], "wait": 20},
            ).json()
            assert second["replies"]
            journal = http.get(f"/v1/conversations/{conversation}/journal").json()["entries"]
        http.close()
    completes = [e for e in journal if e["event"] == "merge.complete"]
    assert completes and "trial" in completes[-1]["sources"]


@pytest.mark.heavy
def test_kill_9_any_worker_mid_load_every_turn_answered_once(
    redis_url: str, unique_prefix: str
) -> None:
    """kill -9 one replica of each worker in turn while conversations book classes."""
    import os
    import signal
    from datetime import datetime, timedelta

    from tests.load import BOOKING, booked_once, children, drive_while, load_size

    scale = "triage=2,trial=2,faq=2,mode_router=2,merger=2"
    n = load_size(24)
    env = {**FAST_RECOVERY, "ORQ_MERGE_DEADLINE_MS": "10000"}
    base = datetime.fromisoformat("2026-03-05T10:00:00-03:00")
    # Each person books in a week of their own: no class fills up.
    scripts = {f"crash-{i}": (BOOKING, base + timedelta(weeks=i)) for i in range(n)}
    kills: list[tuple[str, float]] = []
    with System.up(redis_url, unique_prefix, "--scale", scale, **env) as system:

        async def chaos() -> None:
            for name in ("triage", "trial", "faq", "mode_router", "merger"):
                await asyncio.sleep(0.6)
                pid = children(system.process.pid)[name][0]
                os.kill(pid, signal.SIGKILL)
                kills.append((name, time.perf_counter()))

        run = drive_while(chaos, system.base_url, scripts, n)
        owners = booked_once(system, redis_url, unique_prefix, scripts, run)
    assert len(kills) == 5
    worst = max(e.answered - e.sent for e in run.exchanges)
    print(f"\nkill -9 x5 under load: {n} conversations, {len(run.exchanges)} turns, "
          f"slowest turn {worst:.2f}s (recovery), bookings {len(owners)}")  # fmt: skip


@pytest.mark.heavy
def test_200_conversations_on_3_replicas_keep_their_order(
    redis_url: str, unique_prefix: str
) -> None:
    """Messages sent without waiting, 3 replicas of every worker: per-conversation order holds."""
    import random

    from tests.load import load_size

    n = load_size(200)
    scale = "triage=3,trial=3,faq=3,mode_router=3,merger=3"
    texts = ["oi", "onde fica a CT?", "quanto custa?", "tem estacionamento?"]
    rng = random.Random(7)

    async def person(client: httpx.AsyncClient, conversation: str) -> None:
        for i, text in enumerate(texts):
            body = {"conversation_id": conversation, "text": text, "message_id": f"m{i}"}
            assert (await client.post("/v1/messages", json=body)).status_code == 202
            await asyncio.sleep(rng.uniform(0, 0.4))  # the input: uneven typing

    async def settle(client: httpx.AsyncClient, conversation: str) -> list[dict]:
        """Long-poll replies until the turn holding the last message has been answered."""
        last_id = f"m{len(texts) - 1}"
        replies: list[dict] = []
        cursor = "0-0"
        while True:
            url = f"/v1/conversations/{conversation}/replies"
            got = (await client.get(url, params={"after": cursor, "wait": 30})).json()
            assert got["replies"], f"{conversation}: a turn was never answered"
            replies += got["replies"]
            cursor = got["cursor"]
            journal = (await client.get(f"/v1/conversations/{conversation}/journal")).json()
            final = [
                e["turn_id"]
                for e in journal["entries"]
                if e["event"] == "turn.started" and last_id in e["message_ids"]
            ]
            if final and any(r["turn_id"] == final[0] for r in replies):
                return replies

    with System.up(redis_url, unique_prefix, "--scale", scale) as system:

        async def main() -> dict[str, list[dict]]:
            limits = httpx.Limits(max_connections=2 * n)
            async with httpx.AsyncClient(
                base_url=system.base_url, timeout=60, limits=limits
            ) as client:
                conversations = [f"order-{i}" for i in range(n)]
                await asyncio.gather(*(person(client, c) for c in conversations))
                done = await asyncio.gather(*(settle(client, c) for c in conversations))
                return dict(zip(conversations, done, strict=True))

        replies = asyncio.run(main())
        for conversation, got in replies.items():
            turns = started(system, conversation)
            assert [m for t in turns for m in t["messages"]] == texts, conversation
            assert [t["seq"] for t in turns] == list(range(1, len(turns) + 1))
            assert [r["turn_id"] for r in got] == [t["turn_id"] for t in turns], conversation


def test_redis_restart_with_aof_loses_no_booking(tmp_path) -> None:
    from orquestra.redis_server import EmbeddedRedis

    redis_server = EmbeddedRedis(tmp_path / "redis", persist=True).start()
    conversation = cid("aof")
    try:
        with System.up(redis_server.url, "aof:", **FAST_RECOVERY) as system:
            cursor = "0-0"
            for text in (
                "quero agendar uma aula experimental",
                "me chamo Ana, 30 anos, iniciante",
                "terça que vem às 19h",
                "sim",
            ):
                reply = system.say(conversation, text, after=cursor,
                                   sent_at="2026-03-05T10:00:00-03:00")  # fmt: skip
                cursor = reply["cursor"]
            booking = system.conversation(conversation)["trial"]["booking_id"]
            assert booking and booking in reply["text"]
            redis_server.stop()  # a restart: SIGTERM flushes the append-only file
            redis_server.process = None
            redis_server.start()
            # Services reconnect by themselves; the booking is still there.
            again = system.say(conversation, "qual o status da minha aula?", after=cursor,
                               sent_at="2026-03-05T10:10:00-03:00")  # fmt: skip
            assert booking in again["text"]
            assert system.say(cid("after"), "onde fica a CT?")["text"]
    finally:
        redis_server.stop()


@pytest.mark.heavy
def test_soak_keeps_redis_memory_bounded(redis_url: str, unique_prefix: str) -> None:
    """Many turns over a fixed set of conversations: per-turn keys all carry a TTL of at most
    ORQ_TURN_TTL_S, and everything else grows only by what must be remembered longer (a
    message id for dedupe)."""
    from datetime import datetime, timedelta

    from tests.load import FAQ, Run, drive, load_size

    rounds = load_size(10)  # x 50 conversations x 4 turns = 2,000 turns (ORQ_LOAD_SCALE=10: 20,000)
    conversations = [f"soak-{c}" for c in range(50)]
    ttl = 8  # valid: longer than any redelivery (3 x 1 s) and the merge deadline (3 s)
    env = {
        "ORQ_TURN_TTL_S": str(ttl),
        "ORQ_RECLAIM_IDLE_MS": "1000",
        "ORQ_MAX_ATTEMPTS": "3",
        "ORQ_MERGE_DEADLINE_MS": "3000",
        "ORQ_JOURNAL_MAX": "50",
        "ORQ_REPLIES_KEPT": "20",
        "ORQ_HISTORY_KEPT": "20",
        "ORQ_SWEEP_INTERVAL_MS": "500",
        "ORQ_BURST_WINDOW_MS": "0",
    }
    client = Redis.from_url(redis_url, decode_responses=True)

    async def trimmed() -> None:
        """What the janitor does every sweep, done now so a sample never catches streams
        holding work that was acknowledged a moment ago."""
        from redis.asyncio import Redis as AsyncRedis

        from services.gateway.janitor import trim_once

        async_client = AsyncRedis.from_url(redis_url, decode_responses=True)
        await trim_once(async_client, Keys(unique_prefix, topology=TOPOLOGY))
        await async_client.aclose()

    def footprint() -> int:
        """Bytes of the long-lived keys. Per-turn keys are bounded by their TTL instead (their
        live count is rate x TTL, so they would make throughput swings look like growth)."""
        asyncio.run(trimmed())
        total = 0
        for key in client.scan_iter(match=f"{unique_prefix}*", count=5000):
            left = client.ttl(key)
            if 0 <= left <= ttl:
                continue
            total += client.memory_usage(key) or 0
        return total

    samples: list[tuple[float, int, int]] = []
    run = Run()
    with System.up(redis_url, unique_prefix, **env) as system:
        start = datetime.fromisoformat("2026-03-05T10:00:00-03:00")
        began = time.perf_counter()
        r = 0
        # At least `rounds` rounds, and long enough for two samples a TTL apart, both taken
        # after the first TTL period (steady state: per-turn keys expire as fast as they come).
        while r < rounds or time.perf_counter() - began < 3 * ttl:
            scripts = {c: (FAQ, start + timedelta(hours=r)) for c in conversations}
            asyncio.run(drive(system.base_url, scripts, concurrency=len(conversations), run=run))
            samples.append((time.perf_counter(), len(run.exchanges), footprint()))
            r += 1
        no_ttl = [k for k in client.scan_iter(match=f"{unique_prefix}*", count=5000)
                  if client.ttl(k) == -1]  # fmt: skip
        types = {k: client.type(k) for k in no_ttl}
    client.close()
    assert run.failures == []
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    bounded = {
        *keys.all_streams(),
        *keys.all_pending_starts(),
        *keys.all_merge_deadlines(),
        *keys.all_heartbeats(),
        keys.conversation_index,  # one entry per conversation, pruned after the state's TTL
    }
    assert set(no_ttl) <= bounded, sorted(set(no_ttl) - bounded)
    assert all(types[k] in ("stream", "zset") for k in no_ttl)
    # Two steady-state samples at least one TTL apart.
    last_time, last_turns, last_bytes = samples[-1]
    steady = [s for s in samples if s[0] - began >= ttl and last_time - s[0] >= ttl]
    assert steady, samples
    _, ref_turns, ref_bytes = steady[-1]
    per_turn = (last_bytes - ref_bytes) / max(1, last_turns - ref_turns)
    print(f"\nsoak: {last_turns} turns, {last_bytes} bytes at the end, "
          f"{per_turn:.0f} bytes/turn retained over the last {last_turns - ref_turns} turns, "
          f"{last_bytes / len(conversations):.0f} bytes per active conversation")  # fmt: skip
    # A dedupe record per message is kept (days); everything else per turn expires.
    assert per_turn < 300, samples
