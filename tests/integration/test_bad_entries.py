"""Bad arguments and bad inbox entries on a real Redis: scripts refuse before writing, and a
conversation whose inbox holds something unusable dead-letters it and goes on."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from services.gateway.turns import ZREM_IF_SCORE, MessageRefused, TurnKeeper, sweep_once
from services.gateway.whatsapp.records import HOLD, UPDATE_RECORD
from shared import lua
from shared.contracts import DeadLetter, InboundMessage, Turn, utcnow
from shared.keys import Keys
from shared.logs import get_logger
from shared.settings import Settings
from shared.state import StateStore
from shared.trial import bookings

NOW = utcnow().replace(microsecond=0)


@pytest.fixture
async def keeper(redis: Redis, unique_prefix: str):
    # A long burst window: no timer fires during a test; the test starts turns itself.
    settings = Settings(prefix=unique_prefix, burst_window_ms=600_000)
    keys = Keys(unique_prefix)
    scripts = lua.register(redis)
    store = StateStore(redis, scripts, keys, journal_max=50, state_ttl_s=3600, outbox_ttl_s=60)
    published: list[tuple[str, str]] = []

    async def publish(
        stream: str, payload: object, *, pipeline: object = None, taking: object = None
    ) -> None:
        body = payload if isinstance(payload, str) else payload.model_dump_json()  # type: ignore[attr-defined]
        published.append((stream, body))

    turns = TurnKeeper(redis, scripts, keys, settings, store, publish, get_logger("test"))
    yield turns, published, store
    turns.cancel_timers()


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


def turns_of(turns: TurnKeeper, published: list[tuple[str, str]]) -> list[Turn]:
    return [Turn.model_validate_json(body) for s, body in published if s == turns.keys.turns]


def letters_of(turns: TurnKeeper, published: list[tuple[str, str]]) -> list[DeadLetter]:
    return [DeadLetter.model_validate_json(body) for s, body in published if s == turns.keys.dlq]


async def keys_under(redis: Redis, prefix: str) -> list[str]:
    return [k async for k in redis.scan_iter(match=f"{prefix}*")]


PATCH = '{"always":{},"latest":{},"first":{}}'
# INGEST's arguments before those of the start.
INGESTED = ["5|{}", 60, PATCH, 5, 60, "{}", 10, "", 0, 60]
# COMMIT's arguments after its writes: outbox, TTLs, no acknowledgement, no item.
COMMIT_TAIL = ["[]", 60, 50, 60, "", "", 0, 9, 60, 5, 0]
# COMMIT's arguments before its one item: no writes, no acknowledgement.
ONE_ITEM = [0, "[]", 60, 50, 60, "", "", 1, 9, 60, 5, 0]
# DELIVER_RELEASE's release arguments (no acknowledgement, no pending start) and delivery's.
RELEASED = ["t1", "t2", 1000, 10**13, 50, 60, "", "", ""]
DELIVERED = ["{}", 60, 60, 10, "{}", 60, 10, 0]
CASES = [
    # The 1970 message that wedged its conversation: a negative stamp.
    (lua.INGEST, 6, ["-5|{}", 60, PATCH, -5, 60, "{}", 10, "", 0, 60], "ts_ms"),
    (lua.INGEST, 6, ["6|{}", 60, PATCH, 5, 60, "{}", 10, "", 0, 60], "entry"),
    (lua.INGEST, 6, ["5|{}", 60, "not json", 5, 60, "{}", 10, "", 0, 60], "meta_patch_json"),
    (lua.INGEST, 6, ["5|{}", 60, '{"always":{},"latest":{}}', 5, 60, "{}", 10, ""], "first"),
    (lua.INGEST, 6, ["5|{}", "abc", PATCH, 5, 60, "{}", 10, "", 0, 60], "dedupe"),
    (lua.INGEST, 6, ["5|{}", 60, PATCH, 5, 60, "{}"], "history_kept"),
    (lua.INGEST, 6, ["5|{}", 60, PATCH, 5, 60, "{}", 10, "soon", 0, 60], "hold_ms"),
    (lua.INGEST, 6, ["5|{}", 60, PATCH, 5, 60, "{}", 10, ""], "now_ms"),
    (lua.INGEST, 6, ["5|{}", 60, PATCH, 5, 60, "{}", 10, "", 0, 0], "replies_ttl_s"),
    (lua.INGEST, 5, ["5|{}", 60, PATCH, 5, 60, "{}", 10, "", 0, 60], "keys"),
    (lua.INGEST, 8, [*INGESTED, ""], "turn_id"),
    (lua.INGEST, 8, [*INGESTED, "t1", 0, 10**13], "lease_ttl_ms"),
    (lua.INGEST, 8, [*INGESTED, "t1", 1000], "max_ts_ms"),
    (lua.META_PATCH, 1, ["[1", "", "", 60], "patch_json"),
    (lua.META_PATCH, 1, ["{}", "", ""], "state_ttl_s"),
    (lua.TRY_START, 4, ["t1", "abc", 10**13], "lease_ttl_ms"),
    (lua.TRY_START, 4, ["t1", 1000], "max_ts_ms"),
    (lua.TRY_START, 4, ["", 1000, 10**13], "turn_id"),
    (lua.DROP_IN_FLIGHT, 2, ["x"], "keys"),
    (lua.RELEASE, 5, ["t1", "", 1000, 10**13, 50, 60], "next_turn_id"),
    (lua.RELEASE, 5, ["t1", "t2", 1000], "max_ts_ms"),
    (lua.RELEASE, 5, ["t1", "t2", 1000, 10**13, 0, 60, "{}"], "journal_max"),
    (lua.RELEASE, 5, ["t1", "t2", 1000, 10**13, 50, "day", "{}"], "state_ttl_s"),
    (lua.RELEASE, 4, ["t1", "t2", 1000, 10**13, 50, 60], "keys"),
    (lua.RELEASE, 5, ["t1", "t2", 1000, 10**13, 50, 60], "ack_group"),
    (lua.RELEASE, 5, ["t1", "t2", 1000, 10**13, 50, 60, "g", ""], "ack_id"),
    (lua.RELEASE, 5, ["t1", "t2", 1000, 10**13, 50, 60, "g", "1-0", ""], "keys"),
    (lua.RELEASE, 5, ["t1", "t2", 1000, 10**13, 50, 60, "", ""], "pending_member"),
    (lua.RELEASE, 5, ["t1", "t2", 1000, 10**13, 50, 60, "", "", "c1"], "keys"),
    (lua.COMMIT, 3, ["x"], "n_writes"),
    (lua.COMMIT, 3, [1, "trial", "nan", "{}", *COMMIT_TAIL], "expected_v"),
    (lua.COMMIT, 3, [1, "trial", 0, "{bad", *COMMIT_TAIL], "slice json"),
    (lua.COMMIT, 3, [1, "trial", 0, "{}", "[]", 60], "arguments"),
    (lua.COMMIT, 3, [0, "[]", 60, 50, 60, "", "", "one", 9, 60, 5, 0], "n_items"),
    (lua.COMMIT, 3, [0, "[]", 60, 50, 60, "", "", 0, 0, 60, 5, 0], "maxlen"),
    (lua.COMMIT, 3, [0, "[]", 60, 50, 60, "", "", 0, 9, 0, 5, 0], "merge_ttl_s"),
    (lua.COMMIT, 3, [0, "[]", 60, 50, 60, "g", "", 0, 9, 60, 5, 0], "ack_id"),
    (lua.COMMIT, 4, [0, "[]", 60, 50, 60, "", "", 1, 9, 60, 5, 0, "z", "data"], "item 1"),
    (lua.COMMIT, 4, [0, "[]", 60, 50, 60, "", "", 1, 9, 60, 5, 0, "x"], "message"),
    (lua.COMMIT, 5, [0, "[]", 60, 50, 60, "", "", 1, 9, 60, 5, 0, "m", "part:a", "{}"], "ready"),
    (lua.COMMIT, 5, [*ONE_ITEM, "m", "part:a", "{}", "envelope", "nope"], "ready json"),
    (lua.COMMIT, 4, [0, "[]", 60, 50, 60, "", "", 1, 9, 60, 5, 0, "x", "data"], "n_takes"),
    (lua.COMMIT, 4, [*ONE_ITEM, "x", "data", 1, "group"], "taking group or consumer"),
    (lua.COMMIT, 3, [0, "[]", 60, 50, 60, "", "", 1, 9, 60, 5, 0, "x", "data", 0], "keys"),
    (lua.COMMIT, 5, [*ONE_ITEM, "f", "started", "d", "started", "", 60, 60], "funnel source"),
    (lua.COMMIT, 5, [*ONE_ITEM, "f", "started", "d", "started", "src", 60, 0], "day_ttl_s"),
    (lua.COMMIT, 4, [*ONE_ITEM, "f", "started", "d", "started", "src", 60, 60], "keys"),
    (lua.COMMIT, 4, [0, "[]", 60, 50, 60, "g", "1-0", 1, 9, 60, 5, 0, "x", "data", 0], "keys"),
    (lua.MERGE_ADD, 1, ["part:x", "{}", 0, 5, 5], "ttl_s"),
    (lua.MERGE_ADD, 2, ["part:x", "{}", 60, 5, 5, "g"], "ack_id"),
    (lua.MERGE_ADD, 3, ["part:x", "{}", 60, 5, 5, "g", "1-0"], "keys"),
    (lua.MERGE_EXPIRE, 1, ["later", 5], "now_ms"),
    (lua.DELIVER_ONCE, 3, ["{}", 60, 60, "1e400", "{}", 60, 10], "maxlen"),
    (lua.DELIVER_ONCE, 3, ["{}", 60, 60, 10, "{}", 60], "history_kept"),
    (lua.DELIVER_ONCE, 3, ["{}", 60, 60, 10, "{}", 60, 10], "now_ms"),
    (lua.DELIVER_ONCE, 6, DELIVERED, "keys"),
    (lua.DELIVER_ONCE, 5, DELIVERED, "turn_id"),
    (lua.DELIVER_RELEASE, 7, [*RELEASED, *DELIVERED, "{}"], "keys"),
    (lua.DELIVER_RELEASE, 8, [*RELEASED, "{}", 60, 60, "all", "{}", 60, 10, "{}"], "maxlen"),
    (lua.DELIVER_RELEASE, 8, [*RELEASED, *DELIVERED, "not json"], "delivered entry"),
    (lua.DELIVER_RELEASE, 8, [*RELEASED, *DELIVERED[:6], "x", "{}"], "history_kept"),
    (lua.HISTORY_ONCE, 2, ["", 60, 60, 10], "entry_json"),
    (lua.SCHED_ADD, 4, ["{}", "pending", "soon", "i1", 60, "b", "{}", 50, ""], "due_ms"),
    (lua.SCHED_ADD, 4, ["{}", "pending", 1, "i1", 60, "b", "{}", 50], "turn_id"),
    (lua.SCHED_CLAIM, 2, [1000, 0, 10], "claim_ms"),
    (lua.SCHED_TAKE, 3, ["{}", 50], "ttl_s"),
    (lua.SCHED_MOVE, 2, ["pending", "", "{}", 50, 60], "to"),
    (lua.SEND_CLAIM, 3, ["pending:x", 60, "t1"], "keys"),
    (lua.SEND_CLAIM, 1, ["", 60], "token"),
    (lua.SEND_CLAIM, 1, ["pending:x", 0], "ttl_s"),
    (lua.SEND_CLAIM, 2, ["pending:x", 60], "turn_id"),
    (lua.SEATS_TAKEN, 2, [2, 300], "keys"),
    (lua.SEATS_TAKEN, 2, ["one", 300], "slots"),
    (lua.SEATS_TAKEN, 2, [1, 0], "counts_ttl_s"),
    (ZREM_IF_SCORE, 1, ["c1", "abc"], "expected_score"),
    (UPDATE_RECORD, 1, ["sent", "x", "now", 60, ""], "rank"),
    (UPDATE_RECORD, 1, ["sent", 1, "now", 60, "", "turn_id"], "pairs"),
    (HOLD, 1, [5, 0], "ttl_ms"),
    (bookings._CREATE, 5, ["AE-1", 4, 60, "nome"], "pairs"),
    (bookings._CREATE, 5, ["AE-1", 4, "week", "nome", "Ana"], "idempotency_ttl_s"),
    (bookings._RESCHEDULE, 7, ["AE-1", "", 4, "d", "t", "d2", "t2", ""], "updated_at"),
    (bookings._CANCEL, 3, ["AE-1", "", "d", "t", "now", "", "", ""], "role"),
    (bookings._ATTENDANCE, 1, ["maybe", "cmd-1", "now"], "status"),
]


@pytest.mark.parametrize(("script", "n_keys", "args", "named"), CASES)
async def test_scripts_refuse_bad_arguments_before_any_write(
    redis: Redis, unique_prefix: str, script: str, n_keys: int, args: list[object], named: str
) -> None:
    keys = [f"{unique_prefix}k{i}" for i in range(n_keys)]
    with pytest.raises(ResponseError, match="bad argument") as refused:
        await redis.eval(script, len(keys), *keys, *args)
    assert named in str(refused.value)
    assert await keys_under(redis, unique_prefix) == []


async def test_a_start_with_bad_arguments_leaves_the_inbox_and_takes_no_lease(keeper) -> None:
    turns, _, _ = keeper
    await turns.ingest(message("c1", "m1", "quero agendar uma aula", NOW))
    with pytest.raises(ResponseError, match="lease_ttl_ms"):
        await turns.scripts.try_start(keys=turns._start_keys("c1"), args=["t1", "soon", 60, 1])
    assert await turns.redis.llen(turns.keys.inbox("c1")) == 1
    assert await turns.redis.exists(turns.keys.lease("c1")) == 0
    assert await turns.store.in_flight("c1") == []


async def test_bad_entries_are_dead_lettered_and_the_good_ones_make_the_turn(keeper) -> None:
    turns, published, store = keeper
    good = message("c2", "good", "quero agendar", NOW)
    old = message("c2", "old", "oi", datetime(1960, 1, 1, tzinfo=UTC))
    await turns.redis.rpush(
        turns.keys.inbox("c2"),
        "garbage",
        f"-315619200000|{old.model_dump_json()}",
        f"0|{old.model_copy(update={'message_id': 'old0'}).model_dump_json()}",
    )
    await turns.ingest(good)
    await turns.try_start("c2", 0)
    (turn,) = turns_of(turns, published)
    assert [m.message_id for m in turn.messages] == ["good"] and turn.now == NOW
    letters = letters_of(turns, published)
    assert [(letter.message_id, letter.group) for letter in letters] == [
        ("", "gateway"),
        ("old", "gateway"),
        ("old0", "gateway"),
    ]
    assert letters[0].payload == "garbage"
    assert letters[1].error == "not an inbox entry (<epoch ms>|<message JSON>)"
    assert letters[2].error == "sent_at must not be before 2000-01-01"
    inflight = await turns.store.in_flight("c2")
    assert [json.loads(e.split("|", 1)[1])["message_id"] for e in inflight] == ["good"]
    dead = [e for e in await store.journal("c2") if e["event"] == "message.dead_lettered"]
    assert [e["reason"] for e in dead] == [letter.error for letter in letters]


async def test_a_conversation_whose_inbox_held_only_bad_entries_goes_on(keeper) -> None:
    """Before: the start script failed after taking the lease and moving the inbox, and every
    later start of the conversation failed the same way."""
    turns, published, _ = keeper
    old = message("c3", "old", "oi", datetime(1960, 1, 1, tzinfo=UTC))
    await turns.redis.rpush(turns.keys.inbox("c3"), f"-315619200000|{old.model_dump_json()}")
    await turns.redis.zadd(turns.keys.pending_starts("c3"), {"c3": 0})
    await sweep_once(turns.redis, turns.keys, lambda _tenant: turns)
    assert turns_of(turns, published) == []
    assert [letter.message_id for letter in letters_of(turns, published)] == ["old"]
    assert await turns.redis.exists(turns.keys.lease("c3")) == 0
    assert await turns.store.in_flight("c3") == []
    meta = json.loads(await turns.redis.hget(turns.keys.state("c3"), "meta"))
    assert "last_turn_ms" not in meta  # a bad stamp does not move the turn clock

    await turns.ingest(message("c3", "m2", "quero agendar", NOW))
    await turns.try_start("c3", 0)
    (turn,) = turns_of(turns, published)
    assert [m.message_id for m in turn.messages] == ["m2"]
    assert turn.previous_message_at is None


async def test_a_bad_entry_arriving_while_a_turn_is_in_flight_is_dead_lettered_at_release(
    keeper,
) -> None:
    turns, published, _ = keeper
    await turns.ingest(message("c4", "m1", "quero agendar uma aula", NOW))
    await turns.try_start("c4", 0)
    (first,) = turns_of(turns, published)
    await turns.redis.rpush(turns.keys.inbox("c4"), "99999999999999999999|{}")
    await turns.release("c4", first.turn_id)
    assert len(turns_of(turns, published)) == 1
    assert [letter.payload for letter in letters_of(turns, published)] == [
        "99999999999999999999|{}"
    ]
    assert await turns.redis.exists(turns.keys.lease("c4")) == 0
    await turns.ingest(message("c4", "m2", "quero agendar", NOW + timedelta(seconds=5)))
    await turns.try_start("c4", 0)
    assert [t.messages[0].message_id for t in turns_of(turns, published)] == ["m1", "m2"]


@pytest.mark.parametrize("sent_at", [datetime(1969, 7, 20, tzinfo=UTC), NOW + timedelta(days=3651)])
async def test_ingest_refuses_a_time_out_of_bounds_and_stores_nothing(
    keeper, unique_prefix: str, sent_at: datetime
) -> None:
    turns, _, _ = keeper
    with pytest.raises(MessageRefused) as refused:
        await turns.ingest(message("c5", "m1", "oi", sent_at))
    assert refused.value.field == "sent_at"
    assert await keys_under(turns.redis, unique_prefix) == []


async def test_a_script_sent_compacted_fails_on_the_line_of_its_source(redis: Redis) -> None:
    """``lua.compact`` drops comments and indentation but keeps every line where it was, so
    the line an error names is the line of the script's source."""
    source = "-- a comment\nlocal function f()\n  -- another\n  return nil\nend\nreturn f().field\n"
    compacted = lua.compact(source)
    assert "comment" not in compacted and "  " not in compacted
    with pytest.raises(ResponseError, match=r"user_script:6:"):
        await redis.eval(compacted, 0)
