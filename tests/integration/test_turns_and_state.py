"""The gateway's turn lifecycle and the services' effectively-once commits, on a real Redis."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import httpx
import pytest
from redis.asyncio import Redis
from redis.exceptions import MaxConnectionsError

from services.gateway.channels.http import HttpChannel
from services.gateway.egress import Composer, Egress
from services.gateway.handoff import Handoff
from services.gateway.history import History
from services.gateway.turns import TurnKeeper, sweep_once
from shared.contracts import (
    InboundMessage,
    MergeReady,
    MetaView,
    Part,
    Reply,
    TrialView,
    Turn,
    TurnPlan,
)
from shared.keys import Keys
from shared.logs import get_logger
from shared.lua import register
from shared.pack import load_pack
from shared.settings import Settings
from shared.state import (
    Outbox,
    Snapshot,
    StateConflict,
    StateStore,
    journal_entry,
    read_slices,
)

T0 = datetime(2026, 2, 10, 18, 0, tzinfo=UTC)


def message(cid: str, mid: str, text: str, at: datetime) -> InboundMessage:
    return InboundMessage(
        channel="http",
        conversation_id=cid,
        message_id=mid,
        text=text,
        sent_at=at,
        received_at=at,
        contact=cid,
    )


def publishing_keeper(
    redis: Redis, settings: Settings, **options: Any
) -> tuple[TurnKeeper, asyncio.Queue[Turn]]:
    """A turn keeper on ``settings``' prefix whose published turns land in the queue."""
    keys = Keys(settings.prefix)
    scripts = register(redis)
    store = StateStore(redis, scripts, keys, journal_max=50, state_ttl_s=3600, outbox_ttl_s=60)
    published: asyncio.Queue[Turn] = asyncio.Queue()

    async def publish(
        stream: str, turn: str, *, pipeline: object = None, taking: object = None
    ) -> None:
        published.put_nowait(Turn.model_validate_json(turn))

    keeper = TurnKeeper(
        redis, scripts, keys, settings, store, publish, get_logger("test"), **options
    )
    return keeper, published


async def start_now(turns: TurnKeeper, cid: str) -> None:
    score = await turns.redis.zscore(turns.keys.pending_starts(cid), cid)
    await turns.try_start(cid, int(score))


async def test_duplicate_delivery_is_dropped(keeper) -> None:
    turns, _, _ = keeper
    assert await turns.ingest(message("c1", "m1", "oi", T0)) is True
    assert await turns.ingest(message("c1", "m1", "oi", T0)) is False
    assert await turns.redis.llen(turns.keys.inbox("c1")) == 1


async def test_one_turn_at_a_time_and_waiting_messages_form_the_next(keeper) -> None:
    turns, published, _ = keeper
    await turns.ingest(message("c2", "m1", "quero agendar", T0))
    await start_now(turns, "c2")
    assert [t.text for t in published] == ["quero agendar"]
    first = published[0]
    assert first.seq == 1 and first.now == T0 and first.previous_message_at is None

    await turns.ingest(message("c2", "m2", "pra terça", T0 + timedelta(seconds=5)))
    await turns.ingest(message("c2", "m3", "às 19h", T0 + timedelta(seconds=6)))
    await start_now(turns, "c2")  # lease held: nothing starts
    assert len(published) == 1

    await turns.release("c2", first.turn_id)
    second = published[1]
    assert second.text == "pra terça\nàs 19h" and second.seq == 2
    assert second.now == T0 + timedelta(seconds=6)
    assert second.previous_message_at == T0

    await turns.release("c2", first.turn_id)  # a late, repeated release changes nothing
    assert await turns.redis.get(turns.keys.lease("c2")) == second.turn_id


async def test_expired_lease_is_recovered_by_the_sweeper(keeper) -> None:
    turns, published, _ = keeper
    await turns.ingest(message("c3", "m1", "oi", T0))
    await start_now(turns, "c3")
    lost = published[0]
    # Every consumer of the turn died: the lease expires, its messages are still in flight.
    await turns.redis.delete(turns.keys.lease("c3"))
    await turns.redis.zadd(turns.keys.pending_starts("c3"), {"c3": 0})
    await sweep_once(turns.redis, turns.keys, lambda _tenant: turns)
    again = published[1]
    assert again.turn_id != lost.turn_id
    assert [m.message_id for m in again.messages] == ["m1"]


async def test_a_delivered_turn_whose_release_was_lost_is_not_answered_again(keeper) -> None:
    """The gateway died between delivering a reply and releasing its turn (or a failover lost
    the release): the messages in flight were answered, so the sweeper does not take them
    again; a message that waited meanwhile starts the next turn alone."""
    turns, published, store = keeper
    await turns.ingest(message("c5", "m1", "oi", T0))
    await start_now(turns, "c5")
    answered = published[0]
    await turns.redis.set(turns.keys.sent("c5", answered.turn_id), "1")  # the reply went out
    await turns.ingest(message("c5", "m2", "tudo bem?", T0 + timedelta(seconds=9)))
    await turns.redis.delete(turns.keys.lease("c5"))  # ...and the release never ran
    await turns.redis.zadd(turns.keys.pending_starts("c5"), {"c5": 0})
    await sweep_once(turns.redis, turns.keys, lambda _tenant: turns)
    assert [m.message_id for m in published[1].messages] == ["m2"]
    journal = await store.journal("c5")
    [dropped] = [e for e in journal if e["event"] == "turn.answered_before"]
    assert dropped["answered_by"] == answered.turn_id
    assert dropped["message_ids"] == ["m1"]


async def test_a_delivered_turn_with_nothing_waiting_starts_nothing(keeper) -> None:
    turns, published, _ = keeper
    await turns.ingest(message("c6", "m1", "oi", T0))
    await start_now(turns, "c6")
    # A WhatsApp reply claims its bubbles one by one: the first went out.
    await turns.redis.set(turns.keys.sent("c6", published[0].turn_id, 0), "sent:wamid.HBg1")
    await turns.redis.delete(turns.keys.lease("c6"))
    await turns.redis.zadd(turns.keys.pending_starts("c6"), {"c6": 0})
    await sweep_once(turns.redis, turns.keys, lambda _tenant: turns)
    assert len(published) == 1
    assert await turns.store.in_flight("c6") == []
    assert await turns.redis.zscore(turns.keys.pending_starts("c6"), "c6") is None


async def test_a_message_whose_pending_start_a_racing_release_removed_still_starts(
    keeper,
) -> None:
    """A release that found the inbox empty removes the pending start it read; on a cluster the
    ingest's score and inbox append run on different nodes, so that score can be the new
    message's, appended just after the release looked. The message's own timer starts it."""
    turns, published, _ = keeper
    await turns.ingest(message("c7", "m1", "onde fica?", T0))
    await turns.redis.zrem(turns.keys.pending_starts("c7"), "c7")  # the racing release's zrem
    await turns._start_due("c7")  # the message's timer
    assert [m.message_id for m in published[0].messages] == ["m1"]


async def test_a_message_that_calls_for_no_wait_starts_its_turn_in_the_ingest_script(
    redis: Redis, unique_prefix: str
) -> None:
    """With no quiet window, the ingest's own script takes the lease and moves the message in
    flight (no timer, no second round trip); a message arriving while that turn is in flight
    waits in the inbox for the release, which starts the next turn with it."""
    settings = Settings(prefix=unique_prefix, burst_window_ms=0, burst_fragment_ms=0)
    turns, published = publishing_keeper(redis, settings)
    keys = turns.keys
    before_ms = int(datetime.now(UTC).timestamp() * 1000)
    assert await turns.ingest(message("c8", "m1", "quero agendar", T0))
    # Already started when ingest returns: the lease taken, the message in flight, and the
    # sweeper's next look at the conversation set for when that lease would expire.
    lease = await redis.get(keys.lease("c8"))
    assert lease is not None
    score = await redis.zscore(keys.pending_starts("c8"), "c8")
    assert score is not None and score >= before_ms + settings.lease_ttl_ms
    assert await redis.lrange(keys.inbox("c8"), 0, -1) == []
    assert len(await turns.store.in_flight("c8")) == 1
    async with asyncio.timeout(10):
        first = await published.get()
    assert (first.turn_id, first.text, first.seq) == (lease, "quero agendar", 1)

    assert await turns.ingest(message("c8", "m2", "pra terça", T0 + timedelta(seconds=5)))
    assert await redis.get(keys.lease("c8")) == lease  # busy: m2 waits
    assert await redis.llen(keys.inbox("c8")) == 1
    await turns.release("c8", first.turn_id)
    second = published.get_nowait()
    assert (second.text, second.seq) == ("pra terça", 2)
    assert published.empty()


async def test_sweeper_forgets_conversations_with_nothing_to_do(keeper) -> None:
    turns, published, _ = keeper
    await turns.ingest(message("c4", "m1", "oi", T0))
    await start_now(turns, "c4")
    await turns.release("c4", published[0].turn_id)
    await turns.redis.zadd(turns.keys.pending_starts("c4"), {"c4": 0})
    await sweep_once(turns.redis, turns.keys, lambda _tenant: turns)
    assert await turns.redis.zscore(turns.keys.pending_starts("c4"), "c4") is None
    assert len(published) == 1


async def test_a_commit_gives_a_ttl_only_to_what_it_creates(keeper) -> None:
    """The TTLs of the state and journal are set by inbound messages (once a day at most) and
    turn starts; a commit sets them only on keys it creates (a conversation erased mid-turn),
    so no key of the conversation is ever left without one."""
    _, _, store = keeper
    redis, keys = store.redis, store.keys
    snap = await store.load("c9")
    entries = [journal_entry("trial", "t1", "x"), journal_entry("trial", "t1", "y")]
    assert await store.commit(
        "c9", "t1", "trial", snapshot=snap, writes={"trial": {"stage": "ask_date"}},
        outbox=Outbox([]), journal=entries,
    )  # fmt: skip
    assert 0 < await redis.ttl(keys.state("c9")) <= 3600
    assert 0 < await redis.ttl(keys.journal("c9")) <= 3600
    assert len(await store.journal("c9")) == 2
    # A state with its meta slice and an existing journal keep the TTL they had.
    await redis.hset(keys.state("c9"), "meta", "{}")
    await redis.expire(keys.state("c9"), 100)
    await redis.expire(keys.journal("c9"), 100)
    assert await store.commit(
        "c9", "t2", "trial", snapshot=await store.load("c9"),
        writes={"trial": {"stage": "booked"}}, outbox=Outbox([]), journal=entries[:1],
    )  # fmt: skip
    assert 0 < await redis.ttl(keys.state("c9")) <= 100
    assert 0 < await redis.ttl(keys.journal("c9")) <= 100
    assert len(await store.journal("c9")) == 3


async def test_the_journal_keeps_its_newest_entries_up_to_journal_max(redis, unique_prefix) -> None:
    keys = Keys(unique_prefix)
    store = StateStore(
        redis, register(redis), keys, journal_max=3, state_ttl_s=3600, outbox_ttl_s=60
    )
    for n in range(5):
        entries = [
            journal_entry("trial", f"t{n}", f"e{n}a"),
            journal_entry("trial", f"t{n}", f"e{n}b"),
        ]
        assert await store.commit(
            "c10", f"t{n}", "trial", snapshot=None, writes={}, outbox=Outbox([]), journal=entries
        )
        assert len(await store.journal("c10")) == min(3, 2 * (n + 1))
    assert [e["event"] for e in await store.journal("c10")] == ["e3b", "e4a", "e4b"]


async def test_a_release_journals_the_turns_last_entries_whoever_holds_the_lease(keeper) -> None:
    """The reply's delivery is journaled in the release's own script, also by a late release
    that no longer holds the lease (the delivery happened); the journal keeps its TTL."""
    turns, published, store = keeper
    redis, keys = store.redis, store.keys
    await turns.ingest(message("c11", "m1", "oi", T0))
    await start_now(turns, "c11")
    await redis.expire(keys.journal("c11"), 100)
    first = published[0].turn_id
    await turns.release("c11", first, journal_entry("gateway", first, "reply.delivered"))
    await turns.release("c11", first, journal_entry("gateway", first, "reply.late"))
    events = [e["event"] for e in await store.journal("c11")]
    assert events == ["turn.started", "reply.delivered", "reply.late"]
    assert 0 < await redis.ttl(keys.journal("c11")) <= 100
    assert await redis.exists(keys.lease("c11")) == 0


async def test_a_message_sets_the_conversations_ttls_at_most_once_a_day(keeper) -> None:
    """The TTLs of the state, the history and the reply stream count from the person's last
    message, set again by a message's ingest once a day at most (the meta slice's
    ``ttl_set_ms``, by the wall clock): a conversation is forgotten up to a day early, never
    late, and most messages set no TTL."""
    turns, _, _ = keeper
    redis, keys = turns.redis, turns.keys
    kept = [keys.state("c20"), keys.history("c20"), keys.replies("c20")]
    await turns.ingest(message("c20", "m1", "oi", T0))
    await redis.xadd(keys.replies("c20"), {"reply": "{}"})
    for key in kept:
        await redis.expire(key, 100)
    await turns.ingest(message("c20", "m2", "tudo bem?", T0 + timedelta(minutes=1)))
    assert [0 < await redis.ttl(key) <= 100 for key in kept] == [True] * 3
    meta = json.loads(await redis.hget(keys.state("c20"), "meta"))
    meta["ttl_set_ms"] -= 86_400_000
    await redis.hset(keys.state("c20"), "meta", json.dumps(meta))
    await turns.ingest(message("c20", "m3", "oi?", T0 + timedelta(minutes=2)))
    assert [await redis.ttl(key) > 100 for key in kept] == [True] * 3


async def test_commit_is_once_per_turn_and_compare_and_set(keeper) -> None:
    _, _, store = keeper
    outbox = Outbox([("s", "{}")])
    snap = await store.load("c5")
    entry = journal_entry("trial", "t1", "x")
    assert await store.commit(
        "c5",
        "t1",
        "trial",
        snapshot=snap,
        writes={"trial": {"stage": "ask_date"}},
        outbox=outbox,
        journal=[entry],
    )
    # Redelivery of the same turn: already committed, nothing written twice.
    assert not await store.commit(
        "c5",
        "t1",
        "trial",
        snapshot=snap,
        writes={"trial": {"stage": "booked"}},
        outbox=outbox,
        journal=[entry],
    )
    assert (await store.outbox("c5", "t1", "trial")).messages == [("s", "{}")]
    # A later turn decided on a stale snapshot: the version moved, the write is refused.
    with pytest.raises(StateConflict):
        await store.commit(
            "c5",
            "t2",
            "trial",
            snapshot=snap,
            writes={"trial": {"stage": "booked"}},
            outbox=outbox,
            journal=[],
        )
    fresh = await store.load("c5")
    assert fresh.get("trial") == {"stage": "ask_date", "_v": 1}
    assert [e["event"] for e in await store.journal("c5")] == ["x"]


@pytest.mark.parametrize(
    "stored",
    [
        '{"stage": "ask_date", "nome": "Ana", "_v": 7}',  # as Python writes a slice: _v last
        '{"_v": 7, "stage": "ask_date", "nome": "Ana"}',  # anywhere else (decoded)
        '{"_v": 7, "stage": "ask_date", "extra": {"_v": 2}}',
        '{"_v": 7, "stage": "ask_date", "note": "\\"_v\\": 2}"}',
    ],
)
async def test_a_commit_compares_the_stored_version_wherever_the_slice_keeps_it(
    keeper, stored: str
) -> None:
    """``COMMIT`` reads a stored slice's version from its end, where Python writes it, without
    decoding the slice; a slice that keeps it elsewhere is decoded. Either way a snapshot of
    version 7 commits once and a stale one (6) is refused."""
    _, _, store = keeper
    await store.redis.hset(store.keys.state("c30"), mapping={"meta": '{"turn_id": "t1"}'})
    await store.redis.hset(store.keys.state("c30"), "trial", stored)

    async def commit(turn_id: str, version: int) -> Any:
        snapshot = Snapshot({"trial": {"stage": "ask_date", "_v": version}})
        return await store.commit(
            "c30",
            turn_id,
            "trial",
            snapshot=snapshot,
            writes={"trial": {"stage": "booked"}},
            outbox=Outbox(),
            journal=[],
        )

    with pytest.raises(StateConflict):
        await commit("t1", 6)
    assert await commit("t1", 7)
    assert (await store.load("c30")).get("trial") == {"stage": "booked", "_v": 8}


async def test_a_commit_of_the_current_turn_finds_itself_by_its_versions(keeper) -> None:
    """The conversation's current turn is committed once without looking for its outbox first:
    a redelivery on the snapshot it decided on finds the versions moved, and then the outbox.
    A turn an erase marked is refused even when its versions match the state a new message
    started since (its outbox is looked for: the current turn is another)."""
    _, _, store = keeper
    redis, keys = store.redis, store.keys
    await redis.hset(keys.state("c12"), "meta", '{"turn_id": "t1"}')
    snap = await store.load("c12")
    outbox = Outbox([("s", "{}")])
    writes = {"trial": {"stage": "ask_date"}}
    first = dict(snapshot=snap, writes=writes, outbox=outbox, journal=[])
    assert await store.commit("c12", "t1", "trial", **first)  # type: ignore[arg-type]
    assert not await store.commit("c12", "t1", "trial", **first)  # type: ignore[arg-type]
    assert (await store.load("c12")).get("trial") == {"stage": "ask_date", "_v": 1}

    # Erased with t2 in flight: its outbox stored empty, the state gone; then a new message
    # started t3, whose state has no trial slice, as t2's snapshot had none.
    await store.redis.set(keys.outbox("c12", "t2", "trial"), Outbox().dump())
    await redis.delete(keys.state("c12"))
    await redis.hset(keys.state("c12"), "meta", '{"turn_id": "t3"}')
    empty = await store.load("c12")
    late = dict(snapshot=empty, writes=writes, outbox=outbox, journal=[])
    assert not await store.commit("c12", "t2", "trial", **late)  # type: ignore[arg-type]
    assert (await store.load("c12")).get("trial") is None


async def test_a_reader_loads_only_the_slices_it_names(keeper) -> None:
    """A service that commits nothing (the scheduler) reads other services' slices through
    their views, without loading the whole state hash."""
    _, _, store = keeper
    redis, keys = store.redis, store.keys
    assert await store.commit(
        "c6", "t1", "trial", snapshot=None, writes={"trial": {"stage": "booked", "nome": "Ana"},
        "context": {"entries": {}}}, outbox=Outbox([]), journal=[],
    )  # fmt: skip
    await redis.hset(keys.state("c6"), "meta", '{"channel": "whatsapp", "contact": "5511"}')
    slices = await read_slices(redis, keys, "c6", "meta", "trial", "mode")
    assert set(slices.slices) == {"meta", "trial", "mode"}
    assert slices.trial() == TrialView(stage="booked", nome="Ana")
    assert slices.meta() == MetaView(channel="whatsapp", contact="5511")
    assert slices.get("mode") is None and slices.get("context") is None
    nothing = await read_slices(redis, keys, "c-none", "meta", "trial")
    assert nothing.meta() is None and nothing.trial() is None


async def test_a_late_reply_is_dropped_when_a_human_owns_the_conversation(keeper) -> None:
    turns, published, store = keeper
    delivered: list[Reply] = []

    class Recorder:
        name = "http"
        writes_history = False
        guards_owner = False  # egress reads the owner first

        async def deliver(self, reply: Reply):
            from services.gateway.channels.base import Delivery

            delivered.append(reply)
            return Delivery("sent")

    async with httpx.AsyncClient() as client:
        pack = load_pack("ctsmash")
        handoff = Handoff(
            turns.scripts, turns.keys, store, client, turns.settings, pack, get_logger("t")
        )
        history = History(turns.redis, turns.scripts, turns.keys, 100, 3600, 3600)
        channels = {"http": Recorder()}
        egress = Egress(channels, turns, handoff, history, get_logger("t"), Composer(pack))
        await turns.ingest(message("c6", "m1", "quero agendar", T0))
        await start_now(turns, "c6")
        in_flight = published[0]
        await handoff.assign("c6", "human", by="maria")
        reply = Reply(
            turn_id=in_flight.turn_id,
            conversation_id="c6",
            channel="http",
            text="oi",
            bubbles=["oi"],
        )
        await egress.handle(reply.model_dump_json().encode())
    assert delivered == []
    assert await turns.redis.get(turns.keys.lease("c6")) is None
    journal = [e["event"] for e in await store.journal("c6")]
    assert "reply.dropped" in journal and "handoff.human" in journal


@asynccontextmanager
async def http_egress(
    keeper: tuple[TurnKeeper, list[Turn], StateStore], redis_url: str
) -> AsyncIterator[tuple[Egress, HttpChannel, Handoff]]:
    """The gateway's egress over the real HTTP channel, whose long-polls read through their
    own client on the test's Redis."""
    turns, _, store = keeper
    keys = turns.keys
    history = History(turns.redis, turns.scripts, keys, 100, 3600, 3600)
    settings = turns.settings.model_copy(update={"redis_url": redis_url})
    channel = HttpChannel(turns.redis, turns.scripts, keys, settings, 3600, 2, 50, history)
    try:
        async with httpx.AsyncClient() as client:
            pack = load_pack("ctsmash")
            handoff = Handoff(
                turns.scripts, keys, store, client, turns.settings, pack, get_logger("t")
            )
            composer = Composer(pack)
            yield (
                Egress({"http": channel}, turns, handoff, history, get_logger("t"), composer),
                channel,
                handoff,
            )
    finally:
        await channel.aclose()


async def test_the_http_channel_refuses_a_bot_reply_a_person_owns_in_its_delivery_script(
    keeper, redis_url: str
) -> None:
    """The HTTP channel checks the owner in the script that delivers (no read before it): a
    late bot reply is dropped and its turn released; a staff member's message still goes."""
    turns, published, store = keeper
    keys = turns.keys
    async with http_egress(keeper, redis_url) as (egress, channel, handoff):
        await turns.ingest(message("c10", "m1", "quero agendar", T0))
        await start_now(turns, "c10")
        in_flight = published[0]
        await handoff.assign("c10", "human", by="maria")
        late = Reply(
            turn_id=in_flight.turn_id, conversation_id="c10", channel="http", text="oi",
            bubbles=["oi"],
        )  # fmt: skip
        await egress.handle(late.model_dump_json().encode())
        staff = Reply(
            turn_id="staff-1", conversation_id="c10", channel="http", text="Oi, aqui é a Maria",
            bubbles=["Oi, aqui é a Maria"], author="agent", agent="maria",
        )  # fmt: skip
        await egress.handle(staff.model_dump_json().encode())
        replies, _ = await channel.read("c10", "0-0", 0)
    assert [r["text"] for r in replies] == ["Oi, aqui é a Maria"]
    assert await turns.redis.get(keys.lease("c10")) is None
    journal = [e["event"] for e in await store.journal("c10")]
    assert "reply.dropped" in journal and "agent.delivered" in journal


async def test_long_polls_past_the_limit_are_refused_and_served_once_a_place_frees(
    keeper, redis_url: str
) -> None:
    """The channel's long-polls have their own connections (2 here): a third wait is refused
    at once (``MaxConnectionsError``: the API's 503 with Retry-After) instead of queueing
    behind the others, and is served once a wait returns its connection."""
    turns, _, _ = keeper
    keys = turns.keys
    async with http_egress(keeper, redis_url) as (_, channel, _):
        waits = [asyncio.ensure_future(channel.read(c, "0-0", 20)) for c in ("c40", "c41")]
        pool: Any = cast(Redis, channel.polling).connection_pool
        while len(pool._in_use_connections) < 2:
            await asyncio.sleep(0.01)  # no event says that both waits hold their connection
        with pytest.raises(MaxConnectionsError):
            await channel.read("c42", "0-0", 20)
        for conversation in ("c40", "c41"):
            reply = {"turn_id": "t", "text": "oi", "author": "bot"}
            await turns.redis.xadd(keys.replies(conversation), {"reply": json.dumps(reply)})
        answered = await asyncio.gather(*waits)
        await turns.redis.xadd(keys.replies("c42"), {"reply": json.dumps(reply)})
        third, _ = await channel.read("c42", "0-0", 20)
    assert [[r["text"] for r in replies] for replies, _ in answered] == [["oi"], ["oi"]]
    assert [r["text"] for r in third] == ["oi"]


async def test_the_delivery_that_releases_a_turn_starts_the_next_with_what_waited(
    keeper, redis_url: str
) -> None:
    """The HTTP channel's delivery releases its turn in the same script, which reads the inbox
    only when the meta slice says a message was queued since the turn started: one that waited
    starts the next turn; after that turn, nothing waits and nothing starts."""
    turns, published, _ = keeper
    keys = turns.keys
    async with http_egress(keeper, redis_url) as (egress, channel, _):
        await turns.ingest(message("c12", "m1", "quero agendar", T0))
        await start_now(turns, "c12")
        await turns.ingest(message("c12", "m2", "pra terça", T0 + timedelta(seconds=5)))

        async def answer(turn: Turn, text: str) -> None:
            reply = Reply(
                turn_id=turn.turn_id, conversation_id="c12", channel="http", text=text,
                bubbles=[text],
            )  # fmt: skip
            await egress.handle(reply.model_dump_json().encode())

        await answer(published[0], "primeira")
        assert len(published) == 2
        await answer(published[1], "segunda")
        replies, _ = await channel.read("c12", "0-0", 0)
    assert [t.text for t in published] == ["quero agendar", "pra terça"]
    assert [r["text"] for r in replies] == ["primeira", "segunda"]
    assert await turns.redis.get(keys.lease("c12")) is None
    assert await turns.redis.llen(keys.inbox("c12")) == 0


async def test_a_reply_keeps_the_history_for_as_long_as_the_persons_last_message(
    keeper, redis_url: str
) -> None:
    """A reply to a turn goes into the history the turn's ingest gave its TTL (counted from the
    person's last message); a history gone meanwhile is created again with one, never
    without."""
    turns, published, _ = keeper
    keys = turns.keys
    async with http_egress(keeper, redis_url) as (egress, _, _):
        for n, gone in ((1, False), (2, True)):
            await turns.ingest(message("c14", f"m{n}", "onde fica?", T0 + timedelta(minutes=n)))
            await start_now(turns, "c14")
            if gone:
                await turns.redis.delete(keys.history("c14"))
            reply = Reply(
                turn_id=published[-1].turn_id, conversation_id="c14", channel="http",
                text=f"resposta {n}", bubbles=[f"resposta {n}"],
            )  # fmt: skip
            await egress.handle(reply.model_dump_json().encode())
            lines = [json.loads(f["m"]) for _, f in await turns.redis.xrange(keys.history("c14"))]
            assert lines[-1]["text"] == f"resposta {n}"
            ttl = turns.settings.state_ttl_days * 86_400
            assert 0 < await turns.redis.ttl(keys.history("c14")) <= ttl


async def test_a_turn_whose_messages_another_turn_took_up_again_is_not_answered(
    keeper, redis_url: str
) -> None:
    """A turn that outlived its lease (a failover stalled it) has its messages taken up again by
    a second turn. Both run to the end; only the turn holding the lease is answered, so the
    person sees one answer. The first reply is dropped in the delivery script itself."""
    turns, published, store = keeper
    keys = turns.keys
    async with http_egress(keeper, redis_url) as (egress, channel, _):
        await turns.ingest(message("c11", "m1", "onde fica a CT?", T0))
        await start_now(turns, "c11")
        await turns.redis.delete(keys.lease("c11"))  # what its expiry does
        await start_now(turns, "c11")
        first, second = published
        assert first.messages == second.messages
        for turn, text in ((first, "primeira"), (second, "segunda")):
            reply = Reply(
                turn_id=turn.turn_id, conversation_id="c11", channel="http", text=text,
                bubbles=[text],
            )  # fmt: skip
            await egress.handle(reply.model_dump_json().encode())
        replies, _ = await channel.read("c11", "0-0", 0)
    assert [r["text"] for r in replies] == ["segunda"]
    assert await turns.redis.get(keys.lease("c11")) is None
    dropped = [e for e in await store.journal("c11") if e["event"] == "reply.dropped"]
    assert [(e["turn_id"], e["reason"]) for e in dropped] == [(first.turn_id, "superseded")]


async def test_a_message_that_starts_its_turn_takes_the_fragments_that_waited(
    redis: Redis, unique_prefix: str
) -> None:
    """Fragments wait in the inbox for their quiet window; a complete message after them starts
    the turn in its ingest script with all of them (the script reads the inbox only when the
    meta slice says something was queued since the last start)."""
    from shared.nlu.fragment import fragments_of
    from shared.pack import load_pack

    settings = Settings(prefix=unique_prefix, burst_window_ms=0, burst_fragment_ms=600_000)
    turns, published = publishing_keeper(
        redis, settings, fragments=fragments_of(load_pack("ctsmash"))
    )
    keys = turns.keys
    at = T0
    for message_ids in (["m1"], ["m2", "m3", "m4"], ["m5"]):
        for message_id in message_ids:
            at += timedelta(seconds=1)
            text = "onde fica?" if message_id == message_ids[-1] else "oi"
            await turns.ingest(message("c13", message_id, text, at))
            if message_id != message_ids[-1]:
                assert await redis.llen(keys.inbox("c13")) > 0 and published.empty()
        async with asyncio.timeout(10):
            turn = await published.get()
        assert [m.message_id for m in turn.messages] == message_ids
        assert await redis.llen(keys.inbox("c13")) == 0
        await turns.release("c13", turn.turn_id)


async def test_the_latest_message_sets_the_wait_and_a_fragment_calls_the_channel_hook(
    redis: Redis, unique_prefix: str
) -> None:
    """A fragment schedules the longer wait and tells the channel (WhatsApp shows "typing...");
    a complete message after it brings the start forward to the short window."""
    from shared.nlu.fragment import fragments_of
    from shared.pack import load_pack

    settings = Settings(prefix=unique_prefix, burst_window_ms=300_000, burst_fragment_ms=600_000)
    keys = Keys(unique_prefix)
    scripts = register(redis)
    store = StateStore(redis, scripts, keys, journal_max=50, state_ttl_s=3600, outbox_ttl_s=60)
    waiting: list[str] = []

    async def publish(
        stream: str, turn: str, *, pipeline: object = None, taking: object = None
    ) -> None:
        """Turns are started by hand here; nothing is published before the test looks."""

    turns = TurnKeeper(
        redis,
        scripts,
        keys,
        settings,
        store,
        publish,
        get_logger("test"),
        fragments=fragments_of(load_pack("ctsmash")),
        on_fragment=lambda m: waiting.append(m.message_id),
    )
    try:
        await turns.ingest(message("c7", "m1", "oi", T0))
        after_fragment = await redis.zscore(keys.pending_starts("c7"), "c7")
        await turns.ingest(message("c7", "m2", "queria saber", T0 + timedelta(seconds=1)))
        await turns.ingest(message("c7", "m3", "onde fica?", T0 + timedelta(seconds=2)))
        after_question = await redis.zscore(keys.pending_starts("c7"), "c7")
        assert waiting == ["m1", "m2"]
        # Rescored by the complete message: due well before the fragment's deadline.
        assert after_question < after_fragment
        assert turns.quiet_after("cancelar").rule == "control"

        await start_now(turns, "c7")
        (entry,) = [e for e in await store.journal("c7") if e["event"] == "turn.started"]
        assert entry["messages"] == ["oi", "queria saber", "onde fica?"]
        assert (entry["quiet_ms"], entry["quiet_rule"]) == (300_000, "window")
    finally:
        turns.cancel_timers()


async def test_a_fragment_during_a_turn_is_held_at_release_until_its_window_ends(
    redis: Redis, unique_prefix: str
) -> None:
    """Releasing a turn starts the next one at once, except when the latest waiting message is
    a fragment: then the fragment's own window (its timer, or the sweeper) starts it, so the
    question typed after "oi" joins it. A complete message after the fragment lifts the hold."""
    from shared.nlu.fragment import fragments_of
    from shared.pack import load_pack

    settings = Settings(prefix=unique_prefix, burst_window_ms=300_000, burst_fragment_ms=600_000)
    keys = Keys(unique_prefix)
    scripts = register(redis)
    store = StateStore(redis, scripts, keys, journal_max=50, state_ttl_s=3600, outbox_ttl_s=60)
    published: list[Turn] = []

    async def publish(
        stream: str, turn: str, *, pipeline: object = None, taking: object = None
    ) -> None:
        published.append(Turn.model_validate_json(turn))

    turns = TurnKeeper(
        redis,
        scripts,
        keys,
        settings,
        store,
        publish,
        get_logger("test"),
        fragments=fragments_of(load_pack("ctsmash")),
    )
    try:
        await turns.ingest(message("c8", "m1", "quero agendar", T0))
        await start_now(turns, "c8")
        await turns.ingest(message("c8", "m2", "oi", T0 + timedelta(seconds=1)))
        await turns.release("c8", published[0].turn_id)
        assert len(published) == 1  # held: "oi" waits for the rest
        assert await redis.get(keys.lease("c8")) is None

        await start_now(turns, "c8")  # what the fragment's timer does when its window ends
        assert [m.text for m in published[1].messages] == ["oi"]

        await turns.ingest(message("c8", "m3", "queria saber", T0 + timedelta(seconds=3)))
        assert await redis.exists(keys.burst_hold("c8"))
        await turns.ingest(message("c8", "m4", "onde fica?", T0 + timedelta(seconds=4)))
        assert not await redis.exists(keys.burst_hold("c8"))
        # A redelivered fragment is a duplicate: it holds nothing.
        assert await turns.ingest(message("c8", "m3", "queria saber", T0)) is False
        assert not await redis.exists(keys.burst_hold("c8"))
        await turns.release("c8", published[1].turn_id)
        assert [m.text for m in published[2].messages] == ["queria saber", "onde fica?"]
    finally:
        turns.cancel_timers()


async def test_ingest_stores_a_reply_window_only_for_a_channel_that_has_one(
    redis: Redis, unique_prefix: str
) -> None:
    """The expiry comes from the message's own adapter: WhatsApp's 24 hours after the
    customer's message; null for an HTTP conversation."""
    from services.gateway.channels.base import ChannelSet
    from services.gateway.channels.console import ConsoleChannel
    from services.gateway.whatsapp.gateway import LIMITS

    settings = Settings(prefix=unique_prefix, burst_window_ms=600_000)
    keys = Keys(unique_prefix)
    scripts = register(redis)
    store = StateStore(redis, scripts, keys, journal_max=50, state_ttl_s=3600, outbox_ttl_s=60)

    async def publish(
        stream: str, turn: str, *, pipeline: object = None, taking: object = None
    ) -> None:
        """No timer fires during the test: nothing is published."""

    class WhatsAppLike(ConsoleChannel):
        name = "whatsapp"
        limits = LIMITS

    channels = ChannelSet([ConsoleChannel(redis, keys, 60), WhatsAppLike(redis, keys, 60)])
    turns = TurnKeeper(
        redis,
        scripts,
        keys,
        settings,
        store,
        publish,
        get_logger("test"),
        reply_window=channels.reply_window,
    )
    try:
        await turns.ingest(message("c10", "m1", "oi", T0))
        whatsapp = message("wa:1:2", "m1", "oi", T0).model_copy(update={"channel": "whatsapp"})
        await turns.ingest(whatsapp)
    finally:
        turns.cancel_timers()
    http_meta = (await store.load("c10")).get("meta")
    assert http_meta["window_expires_at"] is None
    whatsapp_meta = (await store.load("wa:1:2")).get("meta")
    assert whatsapp_meta["window_expires_at"] == (T0 + timedelta(hours=24)).isoformat()
    # Other services read the same slice through its public view (trial's staff messages).
    view = (await store.load("wa:1:2")).meta()
    assert view is not None and view.channel == "whatsapp"
    assert view.window_expires_at == T0 + timedelta(hours=24)
    assert not view.window_closed(T0 + timedelta(hours=23))
    assert view.window_closed(T0 + timedelta(hours=24))


async def test_a_meta_patch_that_creates_the_state_gives_it_the_states_ttl(
    redis: Redis, unique_prefix: str
) -> None:
    """A handoff event or a staff mark arriving after a conversation was erased (or expired)
    recreates its state hash: it must expire like any state, not stay forever."""
    scripts = register(redis)
    keys = Keys(unique_prefix)
    gone = keys.state("erased-conv")
    await scripts.meta_patch(keys=[gone], args=['{"handoff": "pending_human"}', "", "", 600])
    assert 0 < await redis.ttl(gone) <= 600

    kept = keys.state("live-conv")
    await redis.hset(kept, "meta", '{"handoff": "bot"}')
    await redis.expire(kept, 9000)
    await scripts.meta_patch(keys=[kept], args=['{"last_staff_at": "x"}', "", "", 600])
    assert await redis.ttl(kept) > 600  # an existing state keeps its own expiry


async def test_a_release_that_finds_nothing_to_start_takes_the_pending_start_off(keeper) -> None:
    """On one Redis ``RELEASE`` removes the conversation from the pending starts itself when
    nothing waits; when a message waits, the next turn starts and its entry stays (the sweeper
    restarts that turn if its lease expires)."""
    turns, published, _ = keeper
    pending = turns.keys.pending_starts("c12")
    await turns.ingest(message("c12", "m1", "oi", T0))
    await start_now(turns, "c12")
    assert await turns.redis.zscore(pending, "c12") is not None  # the turn in flight
    await turns.release("c12", published[0].turn_id)
    assert await turns.redis.zscore(pending, "c12") is None
    await turns.ingest(message("c12", "m2", "quero agendar", T0 + timedelta(minutes=1)))
    await start_now(turns, "c12")
    await turns.ingest(message("c12", "m3", "pra terça", T0 + timedelta(minutes=2)))
    await turns.release("c12", published[1].turn_id)
    assert [t.text for t in published[2:]] == ["pra terça"]
    assert await turns.redis.zscore(pending, "c12") is not None


async def test_the_gateway_composes_a_completed_turn_and_answers_it_once(
    keeper, redis_url: str
) -> None:
    """A turn its last producer's commit completed reaches the gateway as its merge hash (a
    ``MergeReady``): the reply is composed there, with the merger's rules, delivered and
    journaled once, even when the notice is handled twice (redelivered after a crash). The
    HTTP channel's delivery script releases the turn in the same step: the message that waited
    meanwhile starts the next turn, and the journal names the reply's stream id."""
    turns, published, store = keeper
    keys = turns.keys
    async with http_egress(keeper, redis_url) as (egress, channel, _):
        await turns.ingest(message("c12", "m1", "quero agendar e onde fica?", T0))
        await start_now(turns, "c12")
        turn = published[0]
        await turns.ingest(message("c12", "m2", "pode ser terça", T0 + timedelta(seconds=5)))
        parts = {
            source: Part(
                turn_id=turn.turn_id,
                conversation_id="c12",
                source=source,
                text=text,
                asks_question=asks,
            )
            for source, text, asks in (
                ("trial", "Qual dia fica melhor?", True),
                ("faq", "Ficamos na Rua das Palmeiras, 250.", False),
            )
        }
        plan = TurnPlan(turn_id=turn.turn_id, conversation_id="c12", expected=["trial", "faq"])
        fields = {
            "turn": turn.model_dump_json(exclude={"state"}),
            "plan": plan.model_dump_json(),
            **{f"part:{s}": p.model_dump_json() for s, p in parts.items()},
            "_done": "complete",
        }
        ready = MergeReady(turn_id=turn.turn_id, conversation_id="c12", fields=fields)
        await egress.handle(ready.model_dump_json().encode())
        await egress.handle(ready.model_dump_json().encode())
        replies, cursor = await channel.read("c12", "0-0", 0)
    # The merger's order: the answer before the question that asks for the next step.
    assert [r["text"] for r in replies] == [
        "Ficamos na Rua das Palmeiras, 250.\n\nQual dia fica melhor?"
    ]
    # Released as delivered: the waiting message's turn holds the lease now.
    assert [t.text for t in published] == ["quero agendar e onde fica?", "pode ser terça"]
    assert await turns.redis.get(keys.lease("c12")) == published[1].turn_id
    journal = await store.journal("c12")
    [merged] = [e for e in journal if e["event"] == "merge.complete"]
    assert merged["service"] == "gateway" and merged["sources"] == ["faq", "trial"]
    [delivered] = [e for e in journal if e["event"] == "reply.delivered"]
    assert (delivered["status"], delivered["detail"]) == ("sent", cursor)
    events = [e["event"] for e in journal]
    assert events.index("merge.complete") + 1 == events.index("reply.delivered")
