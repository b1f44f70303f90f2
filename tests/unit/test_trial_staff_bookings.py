"""Staff's side of the booking store against a real Redis: the roster of a class day, attendance
marks, staff cancellations, records written before those fields existed, and anonymization."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from redis.asyncio import Redis

from shared.pack import load_pack
from shared.trial.bookings import PERSONAL_FIELDS, BookingStore
from shared.trial.config import load_trial_config

TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)
CONFIG = load_trial_config(load_pack("ctsmash"))
DAY = "2026-02-10"


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[Redis]:
    prefix = f"orqtest-staff-{uuid.uuid4().hex[:8]}:"
    redis = Redis.from_url(redis_url, decode_responses=True)
    redis.test_prefix = prefix  # type: ignore[attr-defined]
    yield redis
    keys = [key async for key in redis.scan_iter(match=f"{prefix}*", count=1000)]
    if keys:
        await redis.delete(*keys)
    await redis.aclose()


@pytest.fixture
def store(client: Redis) -> BookingStore:
    return BookingStore(client, client.test_prefix, id_prefix="AE")  # type: ignore[attr-defined]


async def book(store: BookingStore, key: str, *, conv: str, time: str = "19:00") -> str:
    return await store.create(
        date=DAY,
        time=time,
        capacity=CONFIG.seats_per_slot,
        idempotency_key=key,
        conversation_id=conv,
        nome=f"Pessoa {conv}",
        idade=30,
        nivel="iniciante",
        contact_name=f"Contato {conv}",
        now=NOW,
    )


async def test_the_day_lists_active_and_cancelled_bookings_with_their_status(
    store: BookingStore,
) -> None:
    kept = await book(store, "t1", conv="c1")
    gone = await book(store, "t2", conv="c2", time="07:00")
    assert await store.cancel(gone, reason="chuva", role="staff", now=NOW) == "cancelled"

    listed = {b.booking_id: b for b in await store.day_bookings([DAY], CONFIG.times)}
    assert set(listed) == {kept, gone}
    assert listed[kept].status == "booked"
    assert (listed[kept].student_name, listed[kept].age, listed[kept].level) == (
        "Pessoa c1",
        30,
        "iniciante",
    )
    assert listed[kept].contact_name == "Contato c1"
    assert listed[kept].booked_at == NOW.isoformat()
    assert listed[gone].status == "cancelled"
    assert (listed[gone].cancelled_by, listed[gone].cancel_reason) == ("staff", "chuva")
    assert await store.day_bookings(["2026-02-17"], CONFIG.times) == []


async def test_a_rescheduled_booking_moves_to_its_new_day(store: BookingStore) -> None:
    booking_id = await book(store, "t1", conv="c1")
    moved = await store.reschedule(
        booking_id, date="2026-02-17", time="18:00", capacity=CONFIG.seats_per_slot, now=NOW
    )
    assert moved == "rescheduled"
    assert await store.day_bookings([DAY], CONFIG.times) == []
    [found] = await store.day_bookings(["2026-02-17"], CONFIG.times)
    assert (found.booking_id, found.time) == (booking_id, "18:00")


async def test_attendance_is_recorded_idempotently_and_refused_on_a_cancelled_booking(
    store: BookingStore,
) -> None:
    booking_id = await book(store, "t1", conv="c1")
    assert await store.mark_attendance(booking_id, "attended", command_id="k1", now=NOW) == "marked"
    assert await store.mark_attendance(booking_id, "attended", command_id="k1", now=NOW) == "marked"
    view = await store.staff_view(booking_id)
    assert view is not None and view.status == "attended"
    assert await store.mark_attendance(booking_id, "no_show", command_id="k2", now=NOW) == "marked"
    view = await store.staff_view(booking_id)
    assert view is not None and view.status == "no_show"

    other = await book(store, "t2", conv="c2")
    await store.cancel(other, reason="", now=NOW)
    assert await store.mark_attendance(other, "attended", command_id="k3", now=NOW) == "cancelled"
    assert await store.mark_attendance("AE-NOPE22", "attended", command_id="k4", now=NOW) == (
        "not_found"
    )


async def test_a_record_from_before_the_staff_fields_is_read_with_defaults(
    store: BookingStore, client: Redis
) -> None:
    old = {
        "booking_id": "AE-OLD234",
        "date": DAY,
        "time": "20:00",
        "status": "active",
        "conversation_id": "c-old",
        "nome": "Antiga",
        "idade": "40",
        "nivel": "avancado",
        "created_at": NOW.isoformat(),
        "updated_at": NOW.isoformat(),
    }
    await client.hset(store.booking_key("AE-OLD234"), mapping=old)
    await client.sadd(store.slot_key(DAY, "20:00"), "AE-OLD234")  # no day index then

    [found] = await store.day_bookings([DAY], CONFIG.times)
    assert found.booking_id == "AE-OLD234" and found.status == "booked"
    assert found.contact_name is None and found.student_name == "Antiga" and found.age == 40


async def test_anonymize_blanks_the_person_and_keeps_the_seat(
    store: BookingStore, client: Redis
) -> None:
    mine = await book(store, "t1", conv="erase-me")
    other = await book(store, "t2", conv="keep-me")
    assert [r["booking_id"] for r in await store.of_conversation("erase-me")] == [mine]

    assert await store.anonymize("erase-me", now=NOW) == [mine]

    record = await client.hgetall(store.booking_key(mine))
    assert all(record.get(f, "") == "" for f in PERSONAL_FIELDS)
    assert not any("erase-me" in v or "Pessoa" in v for v in record.values())
    assert record["erased_at"] == NOW.isoformat() and record["status"] == "active"
    assert (await store.seats_taken([DAY], ["19:00"]))[(DAY, "19:00")] == 2
    assert await store.of_conversation("erase-me") == []
    view = await store.staff_view(other)
    assert view is not None and view.student_name == "Pessoa keep-me"
