"""An erase (LGPD) while a turn is in flight, on a real Redis: what the turn does afterwards
writes none of the person's data back (``services/gateway/privacy.py``). Each step of a turn
is driven by hand at the moment that makes the race: a commit whose decision was made before
the erase, a handler that starts after it, an event reaching the scheduler, a reply reaching
the channels, a booking made while the erase ran."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis

from services.gateway.channels.base import Delivery, PlainChannel
from services.gateway.channels.http import HttpChannel
from services.gateway.egress import Composer, Egress
from services.gateway.handoff import Handoff
from services.gateway.history import History
from services.gateway.privacy import Privacy
from services.registry import SERVICES
from shared.contracts import InboundMessage, Reply
from shared.logs import get_logger
from shared.pack import load_pack
from shared.scheduled import Scheduled, ScheduleStore
from shared.state import Outbox, journal_entry
from shared.trial.bookings import BookingStore

T0 = datetime(2026, 2, 10, 18, 0, tzinfo=UTC)
CONV = "erased-mid-turn"


class Recording(PlainChannel):
    """A channel that records what it was asked to deliver (another channel than HTTP)."""

    name = "rec"
    writes_history = False

    def __init__(self) -> None:
        self.delivered: list[Reply] = []

    async def deliver(self, reply: Reply) -> Delivery:
        self.delivered.append(reply)
        return Delivery("sent")


@pytest.fixture
async def world(keeper, redis: Redis):
    """A conversation with its turn in flight (``keeper``: tests/integration/conftest.py)."""
    turns, published, store = keeper
    bookings = BookingStore(redis, turns.keys.prefix + "trial:")
    privacy = Privacy(
        redis, turns.keys, store, bookings, {}, services=list(SERVICES), turn_ttl_s=600
    )
    await turns.ingest(
        InboundMessage(
            channel="http", conversation_id=CONV, message_id="m1", text="quero marcar",
            sent_at=T0, received_at=T0, contact=CONV,
        )
    )  # fmt: skip
    score = await redis.zscore(turns.keys.pending_starts(CONV), CONV)
    await turns.try_start(CONV, int(score))
    return turns, store, privacy, bookings, published[0]


async def test_a_commit_decided_before_the_erase_writes_nothing_after_it(world) -> None:
    keeper, store, privacy, _, turn = world
    snapshot = await store.load(CONV)  # the trial loaded the state and decided...
    await privacy.erase(CONV)  # ...the erase runs before its commit
    committed = await store.commit(
        CONV, turn.turn_id, "trial", snapshot=snapshot,
        writes={"trial": {"stage": "booked", "nome": "Ana"}}, outbox=Outbox([]),
        journal=[journal_entry("trial", turn.turn_id, "trial.decided")],
    )  # fmt: skip
    assert not committed
    assert not await store.redis.exists(keeper.keys.state(CONV), keeper.keys.journal(CONV))
    # A handler that starts the turn only now finds it done, with nothing to publish.
    stored, snapshot = await store.load_turn(CONV, turn.turn_id, "faq")
    assert stored == Outbox() and snapshot.slices == {}


async def test_a_reminder_of_an_erased_turn_is_not_scheduled(world) -> None:
    keeper, store, privacy, _, turn = world
    await privacy.erase(CONV)
    schedule = ScheduleStore(store.redis, keeper.scripts, keeper.keys, journal_max=50, ttl_s=600)
    due = T0 + timedelta(days=1)
    item = Scheduled(
        id="b1-day_before", conversation_id=CONV, kind="day_before", booking_id="AE-1",
        due_at=due, class_at=due, text="Amanhã tem aula, Ana!", channel="http",
    )  # fmt: skip
    entry = journal_entry("scheduler", item.turn_id, "scheduled.created")
    assert not await schedule.add(item, "pending", due, entry, turn.turn_id)
    assert await schedule.items(CONV) == []
    assert not await store.redis.exists(keeper.keys.journal(CONV))
    # The same conversation's next turn (the person wrote again) is scheduled as ever.
    assert await schedule.add(item, "pending", due, entry, "a-later-turn")


async def test_a_reply_of_an_erased_turn_is_neither_sent_nor_written(world, redis) -> None:
    keeper, store, privacy, _, turn = world
    keys = keeper.keys
    history = History(redis, keeper.scripts, keys, 100, 3600, 3600)
    http = HttpChannel(redis, keeper.scripts, keys, keeper.settings, 3600, 2, 50, history)
    other = Recording()
    pack = load_pack("ctsmash")
    handoff = Handoff(keeper.scripts, keys, store, None, keeper.settings, pack, get_logger("t"))
    channels = {"http": http, "rec": other}
    egress = Egress(channels, keeper, handoff, history, get_logger("t"), Composer(pack))
    await privacy.erase(CONV)
    for channel in ("http", "rec"):
        reply = Reply(
            turn_id=turn.turn_id, conversation_id=CONV, channel=channel, text="Olá, Ana!",
            bubbles=["Olá, Ana!"],
        )  # fmt: skip
        await egress.handle(reply.model_dump_json().encode())
    await http.aclose()
    assert other.delivered == []
    found = [key async for key in redis.scan_iter(match=keys.conversation_pattern(CONV))]
    written = {key for key in found if ":out:" not in key and ":sent:" not in key}
    assert written == {keys.erased(CONV)}  # only the erase's own marks


async def test_a_booking_made_while_the_erase_ran_is_the_erased_persons(world) -> None:
    _, store, privacy, bookings, turn = world
    await privacy.erase(CONV)  # its pass over the bookings found none yet
    booking = await bookings.create(
        date="2026-02-17", time="19:00", capacity=6, idempotency_key=turn.turn_id,
        conversation_id=CONV, nome="Ana", idade=30, nivel="iniciante", now=T0,
    )  # fmt: skip
    # What the trial service does after a booking (services/trial/app.py): the turn's mark.
    assert await store.erased(CONV, turn.turn_id)
    assert not await store.erased(CONV, "a-later-turn")
    await bookings.anonymize(CONV, now=T0)
    record = await store.redis.hgetall(bookings.booking_key(booking))
    assert record["nome"] == record["conversation_id"] == "" and record["status"] == "active"
