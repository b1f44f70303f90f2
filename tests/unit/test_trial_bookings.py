"""The booking store against a real Redis: seats, idempotency, moves, cancels, and races.

Each test uses a key prefix of its own and deletes its keys afterwards.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from redis.asyncio import Redis

from services.trial.flow import finish_turn, plan_turn
from services.trial.models import ContextState, ToolCall, TrialOutcome, TrialState
from services.trial.tools import run_tool
from shared.pack import load_pack
from shared.trial.bookings import COUNTS_TTL_S, FULL, BookingStore
from shared.trial.config import load_trial_config

TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)
PACK = load_pack("ctsmash")
CONFIG = load_trial_config(PACK)
SEATS = CONFIG.seats_per_slot


@pytest.fixture
async def store_prefix(redis_url: str) -> AsyncIterator[str]:
    prefix = f"orqtest-trial-{uuid.uuid4().hex[:8]}:"
    yield prefix
    client = Redis.from_url(redis_url)
    keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[Redis]:
    redis = Redis.from_url(redis_url)
    yield redis
    await redis.aclose()


@pytest.fixture
def store(client: Redis, store_prefix: str) -> BookingStore:
    return BookingStore(client, store_prefix, id_prefix=CONFIG.booking_id_prefix)


async def book(store: BookingStore, key: str, *, time: str = "19:00", conv: str = "c1") -> str:
    return await store.create(
        date="2026-02-10",
        time=time,
        capacity=SEATS,
        idempotency_key=key,
        conversation_id=conv,
        nome="João",
        idade=27,
        nivel="iniciante",
        now=NOW,
    )


async def test_create_and_get(store: BookingStore) -> None:
    booking_id = await book(store, "turn-1")
    assert re.fullmatch(r"AE-[2-9A-HJKMNP-Z]{6}", booking_id)
    booking = await store.get(booking_id)
    assert booking is not None
    assert (booking.date, booking.time, booking.status, booking.nome) == (
        "2026-02-10",
        "19:00",
        "active",
        "João",
    )
    assert await store.seats_taken(["2026-02-10"], ["19:00", "20:00"]) == {
        ("2026-02-10", "19:00"): 1,
        ("2026-02-10", "20:00"): 0,
    }


async def test_seat_counts_follow_every_change_of_a_class(
    store: BookingStore, client: Redis
) -> None:
    day, times = ["2026-02-10"], ["19:00", "20:00"]
    first = await book(store, "turn-1")
    await book(store, "turn-2", conv="c2")
    assert await store.seats_taken(day, times) == {
        ("2026-02-10", "19:00"): 2,
        ("2026-02-10", "20:00"): 0,
    }
    moved = await store.reschedule(
        first, date="2026-02-10", time="20:00", capacity=SEATS, conversation_id="c1", now=NOW
    )
    assert moved == "rescheduled"
    assert await store.seats_taken(day, times) == {
        ("2026-02-10", "19:00"): 1,
        ("2026-02-10", "20:00"): 1,
    }
    await store.cancel(first, conversation_id="c1", now=NOW)
    assert await store.seats_taken(day, times) == {
        ("2026-02-10", "19:00"): 1,
        ("2026-02-10", "20:00"): 0,
    }
    # A class booked before the counts existed is counted from its set, then kept.
    await client.sadd(store.slot_key("2026-02-11", "19:00"), "AE-OLD234")
    assert await store.seats_taken(["2026-02-11"], ["19:00"]) == {("2026-02-11", "19:00"): 1}
    assert await client.get(store.count_key("2026-02-11", "19:00")) == b"1"


async def test_a_count_another_version_left_wrong_books_nothing_and_lasts_a_bounded_time(
    store: BookingStore, client: Redis
) -> None:
    """A rolling deploy: a replica of a version before the counts fills a class without its
    count. A booking there is refused (its seat check reads the set) and the refusal corrects
    the count, so the class is not offered again; a count left too high by such a replica's
    cancellation is counted again once the counts expire (a cache with a TTL)."""
    slot = ("2026-02-10", "19:00")
    assert await store.seats_taken(*([part] for part in slot)) == {slot: 0}
    assert 0 < await client.ttl(store.count_key(*slot)) <= COUNTS_TTL_S
    old_replica = [f"AE-OLD{n:03d}" for n in range(SEATS)]
    await client.sadd(store.slot_key(*slot), *old_replica)
    assert await store.seats_taken(*([part] for part in slot)) == {slot: 0}  # the wrong count
    assert await book(store, "turn-new") == FULL
    assert 0 < await client.ttl(store.count_key(*slot)) <= COUNTS_TTL_S  # corrected, same TTL
    assert await store.seats_taken(*([part] for part in slot)) == {slot: SEATS}
    await client.srem(store.slot_key(*slot), *old_replica[:2])  # its cancellations
    await client.delete(store.count_key(*slot))  # what the count's expiry does
    assert await store.seats_taken(*([part] for part in slot)) == {slot: SEATS - 2}
    assert await client.ttl(store.count_key(*slot)) > 0


async def test_keys_share_one_hash_tag(
    store: BookingStore, client: Redis, store_prefix: str
) -> None:
    await store.seats_taken(["2026-02-10"], ["19:00"])  # the lookup creates the counts
    booking_id = await book(store, "turn-1")
    keys = [k.decode() async for k in client.scan_iter(match=f"{store_prefix}*")]
    assert sorted(keys) == sorted(
        [
            store.booking_key(booking_id),
            store.slot_key("2026-02-10", "19:00"),
            store.day_key("2026-02-10"),
            store.idempotency_key("turn-1"),
            store.count_key("2026-02-10", "19:00"),
        ]
    )
    assert {re.findall(r"\{[^}]*\}", k)[0] for k in keys} == {"{trial-bookings}"}
    assert await client.ttl(store.idempotency_key("turn-1")) > 0


async def test_create_is_idempotent_by_turn(store: BookingStore) -> None:
    first = await book(store, "turn-1")
    again = await book(store, "turn-1")
    assert again == first
    assert await store.seats_taken(["2026-02-10"], ["19:00"]) == {("2026-02-10", "19:00"): 1}


async def test_a_full_class_refuses_the_next_booking(store: BookingStore) -> None:
    for n in range(SEATS):
        assert await book(store, f"turn-{n}") != FULL
    assert await book(store, "turn-late") == FULL
    assert await book(store, "turn-other", time="20:00") != FULL


async def test_twenty_concurrent_creates_for_six_seats(redis_url: str, store_prefix: str) -> None:
    clients = [Redis.from_url(redis_url) for _ in range(20)]
    try:
        stores = [BookingStore(c, store_prefix) for c in clients]
        results = await asyncio.gather(
            *(book(s, f"turn-{n}", conv=f"c{n}") for n, s in enumerate(stores))
        )
        booked = [r for r in results if r != FULL]
        assert len(booked) == SEATS
        assert len(set(booked)) == SEATS
        assert results.count(FULL) == 20 - SEATS
        taken = await stores[0].seats_taken(["2026-02-10"], ["19:00"])
        assert taken == {("2026-02-10", "19:00"): SEATS}
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))


async def test_reschedule_moves_the_seat(store: BookingStore) -> None:
    booking_id = await book(store, "turn-1")
    moved = await store.reschedule(
        booking_id, date="2026-02-17", time="18:00", capacity=SEATS, conversation_id="c1", now=NOW
    )
    assert moved == "rescheduled"
    booking = await store.get(booking_id)
    assert booking is not None and (booking.date, booking.time) == ("2026-02-17", "18:00")
    assert await store.seats_taken(["2026-02-10", "2026-02-17"], ["19:00", "18:00"]) == {
        ("2026-02-10", "19:00"): 0,
        ("2026-02-10", "18:00"): 0,
        ("2026-02-17", "19:00"): 0,
        ("2026-02-17", "18:00"): 1,
    }


async def test_reschedule_into_a_full_class_keeps_the_seat(store: BookingStore) -> None:
    mine = await book(store, "mine", time="07:00")
    for n in range(SEATS):
        await book(store, f"other-{n}", conv=f"o{n}")
    moved = await store.reschedule(mine, date="2026-02-10", time="19:00", capacity=SEATS, now=NOW)
    assert moved == "full"
    booking = await store.get(mine)
    assert booking is not None and booking.time == "07:00"


async def test_concurrent_reschedules_into_the_last_seat(
    redis_url: str, store_prefix: str, store: BookingStore
) -> None:
    for n in range(SEATS - 1):
        await book(store, f"fill-{n}", conv=f"f{n}")
    movers = [await book(store, f"mover-{n}", time="07:00", conv=f"m{n}") for n in range(5)]
    clients = [Redis.from_url(redis_url) for _ in movers]
    try:
        results = await asyncio.gather(
            *(
                BookingStore(c, store_prefix).reschedule(
                    booking_id, date="2026-02-10", time="19:00", capacity=SEATS, now=NOW
                )
                for c, booking_id in zip(clients, movers, strict=True)
            )
        )
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    assert sorted(results) == ["full"] * 4 + ["rescheduled"]
    taken = await store.seats_taken(["2026-02-10"], ["19:00", "07:00"])
    assert taken == {("2026-02-10", "19:00"): SEATS, ("2026-02-10", "07:00"): 4}


async def test_cancel_frees_the_seat(store: BookingStore) -> None:
    booking_id = await book(store, "turn-1")
    assert await store.cancel(booking_id, conversation_id="c1", reason="viagem", now=NOW) == (
        "cancelled"
    )
    assert await store.cancel(booking_id, now=NOW) == "already_cancelled"
    booking = await store.get(booking_id)
    assert booking is not None and booking.status == "cancelled"
    assert await store.seats_taken(["2026-02-10"], ["19:00"]) == {("2026-02-10", "19:00"): 0}
    assert await store.reschedule(
        booking_id, date="2026-02-17", time="19:00", capacity=SEATS, now=NOW
    ) == ("not_found")


async def test_a_redelivered_cancel_answers_the_same(store: BookingStore) -> None:
    booking_id = await book(store, "turn-1")
    call = ToolCall(tool="cancel_booking", args={"booking_id": booking_id, "reason": "x"})
    first = await run_tool(store, call, conversation_id="c1", capacity=SEATS, turn_id="t2", now=NOW)
    again = await run_tool(store, call, conversation_id="c1", capacity=SEATS, turn_id="t2", now=NOW)
    later = await run_tool(store, call, conversation_id="c1", capacity=SEATS, turn_id="t3", now=NOW)
    assert (first.status, again.status, later.status) == (
        "cancelled",
        "cancelled",
        "already_cancelled",
    )
    assert again.booking is not None and again.booking.time == "19:00"


async def test_another_conversation_cannot_see_or_touch_a_booking(store: BookingStore) -> None:
    booking_id = await book(store, "turn-1", conv="owner")
    assert await store.get(booking_id, conversation_id="intruder") is None
    assert await store.cancel(booking_id, conversation_id="intruder", now=NOW) == "not_found"
    moved = await store.reschedule(
        booking_id,
        date="2026-02-17",
        time="19:00",
        capacity=SEATS,
        conversation_id="intruder",
        now=NOW,
    )
    assert moved == "not_found"
    assert await store.seats_taken(["2026-02-10"], ["19:00"]) == {("2026-02-10", "19:00"): 1}


async def test_unknown_booking(store: BookingStore) -> None:
    assert await store.get("AE-NOPE22") is None
    assert await store.cancel("AE-NOPE22", now=NOW) == "not_found"
    result = await run_tool(
        store,
        ToolCall(tool="get_booking", args={"booking_id": "AE-NOPE22"}),
        conversation_id="c1",
        capacity=SEATS,
        turn_id="turn-1",
        now=NOW,
    )
    assert result.status == "not_found"


async def test_a_whole_conversation_with_the_real_store(store: BookingStore) -> None:
    """The shell's call sequence (flow module doc) end to end, minus the bus."""
    state: TrialState | None = None
    context: ContextState | None = None

    async def turn(n: int, text: str) -> TrialOutcome:
        nonlocal state, context
        seats = await store.seats_taken(["2026-02-10", "2026-02-17"], CONFIG.times)
        plan = plan_turn(
            text,
            state=state,
            context=context,
            now=NOW,
            tz=TZ,
            config=CONFIG,
            pack=PACK,
            seed=f"turn-{n}",
            seats_taken=seats,
            allowed_tools=None,
            conversation_id="c1",
        )
        if plan.tool_call is not None:
            result = await run_tool(
                store,
                plan.tool_call,
                conversation_id="c1",
                capacity=SEATS,
                turn_id=f"turn-{n}",
                now=NOW,
            )
            outcome = finish_turn(plan, result)
        else:
            assert plan.outcome is not None
            outcome = plan.outcome
        state, context = outcome.state, outcome.context
        return outcome

    for n in range(SEATS - 1):
        await book(store, f"other-{n}", time="20:00", conv=f"o{n}")
    await turn(1, "Oi! Sou a Ana, tenho 30 anos, sou intermediária")
    await turn(2, "terça 10/02 às 20h")
    booked = await turn(3, "sim")
    assert booked.state.stage == "booked"
    booking_id = booked.state.booking_id
    assert booking_id is not None and booking_id in booked.text

    full = await turn(4, "na verdade quero remarcar para 18h")
    assert full.state.pending_tool is not None
    moved = await turn(5, "sim")
    assert moved.events[0]["type"] == "trial.rescheduled"
    stored = await store.get(booking_id)
    assert stored is not None and stored.time == "18:00"

    await turn(6, "quero cancelar")
    cancelled = await turn(7, "sim")
    assert cancelled.events[0]["type"] == "trial.cancelled"
    assert await store.seats_taken(["2026-02-10"], ["18:00", "20:00"]) == {
        ("2026-02-10", "18:00"): 0,
        ("2026-02-10", "20:00"): SEATS - 1,
    }
