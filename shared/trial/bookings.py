"""Trial bookings in Redis, with an atomic seat check (shell side: this module does I/O).

Shared because the bookings are read and written from two services: the trial service, which
owns them (books, moves, cancels, marks attendance — ``services/trial/tools.py`` runs its tool
calls here), and the gateway, which reads them for staff (``/v1/bookings``, the roster) and for
a person's export and erasure. Both need the same keys and the same record models.

Several trial replicas may book the last seat of a class at the same moment; each write is one
Lua script that counts the class's seats and takes one in the same step, so a class never holds
more bookings than seats. Every write script is kept in this module, next to the keys it
touches; the seat lookup (one read of many classes) is ``shared.lua.SEATS_TAKEN``.

Keys (``P`` is the prefix passed in, e.g. ``orq:trial:``):

- ``P{trial-bookings}:booking:<id>`` — hash: booking_id, date (YYYY-MM-DD), time (HH:MM),
  status (``active``/``cancelled``), conversation_id, nome, idade, nivel, contact_name,
  created_at (when it was booked), updated_at, cancel_reason, cancelled_by (turn or command
  id), cancelled_role (``customer``/``staff``), attendance (``attended``/``no_show``),
  attendance_by (command id), erased_at. Kept without TTL: bookings are business records,
  bounded by the seats on offer, not by traffic. Records written before a field existed simply
  lack it (``StaffBooking`` reads them with defaults).
- ``P{trial-bookings}:slot:<date>:<time>`` — set of the ids of the class's active bookings;
  its size is the number of seats taken.
- ``P{trial-bookings}:count:<date>:<time>`` — string: the size of that class set, kept
  equal to it by every script here that changes the set or finds it full, so the trial's seat
  lookup is one MGET (``shared.lua.SEATS_TAKEN``, which counts a class without a count from
  its set once). A cache, not a record: the lookup creates it with a TTL of
  ``COUNTS_TTL_S`` (the scripts here only change it while it exists, keeping the TTL), so a
  count a writer of another version left wrong (a rolling deploy) lasts at most that long; no
  booking relies on it.
- ``P{trial-bookings}:day:<date>`` — set of the ids of every booking of that class day, active
  or cancelled, for the staff view (older bookings are found through the slot sets).
- ``P{trial-bookings}:idem:<key>`` — string: the booking id created for an idempotency key
  (the turn id), with a TTL, so a redelivered turn gets the same booking instead of a second.

All keys share the ``{trial-bookings}`` hash tag (``{<tenant>:trial-bookings}`` for a tenant of
several: each business's bookings in a slot of their own): on Redis Cluster they live in one
slot, which the scripts need (a reschedule touches two classes' sets and a booking). Trial
bookings are a few per class day, far from what one slot can serve.

Booking ids are short and easy to read aloud: the pack's prefix and six characters without look-
alikes (no 0/O, 1/I/L), e.g. ``AE-7K3Q9P``.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any, Literal, cast

from pydantic import BaseModel
from redis.asyncio import Redis

from shared.lua import ARG_CHECKS, SEATS_TAKEN


class BookingView(BaseModel):
    """A booking as the store reports it."""

    booking_id: str
    date: str
    time: str
    status: Literal["active", "cancelled"]
    nome: str | None = None
    conversation_id: str | None = None


BookingStatus = Literal["booked", "cancelled", "attended", "no_show"]


class StaffBooking(BaseModel):
    """A booking as staff see it: the person, the class and where it stands."""

    booking_id: str
    date: str
    time: str
    status: BookingStatus
    student_name: str | None = None
    age: int | None = None
    level: str | None = None
    conversation_id: str | None = None
    contact_name: str | None = None
    booked_at: str | None = None
    cancel_reason: str | None = None
    cancelled_by: Literal["customer", "staff"] | None = None

    @classmethod
    def from_record(cls, record: dict[str, str]) -> StaffBooking:
        """Read a stored hash; fields an older writer did not store come back as None."""
        stored = record.get("status", "active")
        attendance = record.get("attendance") or ""
        status: BookingStatus = "cancelled" if stored == "cancelled" else "booked"
        if status == "booked" and attendance in ("attended", "no_show"):
            status = attendance  # type: ignore[assignment]
        age = record.get("idade") or ""
        # Before staff could cancel, every cancellation came from the customer.
        role = record.get("cancelled_role") or ("customer" if status == "cancelled" else "")
        return cls(
            booking_id=record["booking_id"],
            date=record["date"],
            time=record["time"],
            status=status,
            student_name=record.get("nome") or None,
            age=int(age) if age.isdigit() else None,
            level=record.get("nivel") or None,
            conversation_id=record.get("conversation_id") or None,
            contact_name=record.get("contact_name") or None,
            booked_at=record.get("created_at") or None,
            cancel_reason=record.get("cancel_reason") or None,
            cancelled_by=role if role in ("customer", "staff") else None,
        )


FULL = "full"
# The seat counts' longest age: a count some writer left wrong is counted again from its class
# set within this time (``shared.lua.SEATS_TAKEN``).
COUNTS_TTL_S = 300
ID_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
ID_LENGTH = 6
_MAX_TRIES = 5

# A class's seat count (``BookingStore.count_key``) is changed only where it exists, keeping its
# TTL: the seat lookup creates it, with the TTL (``shared.lua.SEATS_TAKEN``), so no count
# outlives that TTL.
_SET_COUNT = """
local function set_count(key, taken)
  redis.call('SET', key, taken, 'XX', 'KEEPTTL')
end
"""

# KEYS: idempotency key, class set, booking hash, day index, the class's seat count.
# ARGV: booking id, seats in the class, idempotency TTL (s), then field/value pairs of the
# hash.
# Returns the booking id (new, or the one already created for this idempotency key), "full",
# or "collision" when the generated id already exists (the caller draws another).
_CREATE = (
    ARG_CHECKS
    + _SET_COUNT
    + """
need_keys(5)
str_arg(1, 'booking_id')
int_arg(2, 'seats', 1)
int_arg(3, 'idempotency_ttl_s', 1)
if #ARGV < 5 or #ARGV % 2 ~= 1 then bad_arg('booking fields must be field/value pairs') end
local existing = redis.call('GET', KEYS[1])
if existing then return existing end
local taken = redis.call('SCARD', KEYS[2])
if taken >= tonumber(ARGV[2]) then
  set_count(KEYS[5], taken)
  return 'full'
end
if redis.call('EXISTS', KEYS[3]) == 1 then return 'collision' end
redis.call('SADD', KEYS[2], ARGV[1])
set_count(KEYS[5], redis.call('SCARD', KEYS[2]))
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('HSET', KEYS[3], unpack(ARGV, 4))
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[3]))
return ARGV[1]
"""
)

# KEYS: booking hash, its current class set, the target class set, the current and target day
# indexes, the current and the target class's seat counts.
# ARGV: booking id, owner conversation ("" = any), seats in the target class, date and time the
# caller read (the booking must still be there), new date, new time, updated_at.
# Returns "rescheduled", "full", "not_found", or "retry" when the booking moved meanwhile.
_RESCHEDULE = (
    ARG_CHECKS
    + _SET_COUNT
    + """
need_keys(7)
str_arg(1, 'booking_id')
int_arg(3, 'seats', 1)
for _, arg in ipairs({{6, 'new_date'}, {7, 'new_time'}, {8, 'updated_at'}}) do
  str_arg(arg[1], arg[2])
end
local b = redis.call('HMGET', KEYS[1], 'status', 'conversation_id', 'date', 'time')
if b[1] ~= 'active' then return 'not_found' end
if ARGV[2] ~= '' and b[2] ~= ARGV[2] then return 'not_found' end
if b[3] ~= ARGV[4] or b[4] ~= ARGV[5] then return 'retry' end
if KEYS[2] == KEYS[3] then return 'rescheduled' end
local taken = redis.call('SCARD', KEYS[3])
if taken >= tonumber(ARGV[3]) then
  set_count(KEYS[7], taken)
  return 'full'
end
redis.call('SMOVE', KEYS[2], KEYS[3], ARGV[1])
set_count(KEYS[6], redis.call('SCARD', KEYS[2]))
set_count(KEYS[7], redis.call('SCARD', KEYS[3]))
if KEYS[4] ~= KEYS[5] then redis.call('SREM', KEYS[4], ARGV[1]) end
redis.call('SADD', KEYS[5], ARGV[1])
redis.call('HSET', KEYS[1], 'date', ARGV[6], 'time', ARGV[7], 'updated_at', ARGV[8])
return 'rescheduled'
"""
)

# KEYS: booking hash, its class set, the class's seat count. ARGV: booking id, owner ("" =
# any), date and time the caller read, updated_at, reason, idempotency key ("" = none), role
# (customer/staff). Returns
# "cancelled" (also when this idempotency key cancelled it before), "already_cancelled",
# "not_found" or "retry".
_CANCEL = (
    ARG_CHECKS
    + _SET_COUNT
    + """
need_keys(3)
str_arg(1, 'booking_id')
str_arg(5, 'updated_at')
str_arg(8, 'role')
local b = redis.call('HMGET', KEYS[1], 'status', 'conversation_id', 'date', 'time', 'cancelled_by')
if not b[1] then return 'not_found' end
if ARGV[2] ~= '' and b[2] ~= ARGV[2] then return 'not_found' end
if b[1] == 'cancelled' then
  if ARGV[7] ~= '' and b[5] == ARGV[7] then return 'cancelled' end
  return 'already_cancelled'
end
if b[3] ~= ARGV[3] or b[4] ~= ARGV[4] then return 'retry' end
redis.call('SREM', KEYS[2], ARGV[1])
set_count(KEYS[3], redis.call('SCARD', KEYS[2]))
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'updated_at', ARGV[5],
  'cancel_reason', ARGV[6], 'cancelled_by', ARGV[7], 'cancelled_role', ARGV[8])
return 'cancelled'
"""
)

# KEYS: booking hash. ARGV: status (attended/no_show), command id, updated_at.
# Returns "marked" (also when this command marked it before), "cancelled" or "not_found".
_ATTENDANCE = (
    ARG_CHECKS
    + """
need_keys(1)
if ARGV[1] ~= 'attended' and ARGV[1] ~= 'no_show' then
  bad_arg('status must be attended or no_show, got ' .. tostring(ARGV[1]))
end
str_arg(2, 'command_id')
str_arg(3, 'updated_at')
local b = redis.call('HMGET', KEYS[1], 'status', 'attendance_by')
if not b[1] then return 'not_found' end
if b[2] == ARGV[2] then return 'marked' end
if b[1] ~= 'active' then return 'cancelled' end
redis.call('HSET', KEYS[1], 'attendance', ARGV[1], 'attendance_by', ARGV[2], 'updated_at', ARGV[3])
return 'marked'
"""
)

# The person's data in a booking; erasing blanks them and keeps the seat and the class.
PERSONAL_FIELDS = ("conversation_id", "nome", "idade", "nivel", "contact_name", "cancel_reason")

RescheduleStatus = Literal["rescheduled", "full", "not_found"]
CancelStatus = Literal["cancelled", "already_cancelled", "not_found"]
AttendanceStatus = Literal["marked", "cancelled", "not_found"]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _staff(raw: dict[Any, Any]) -> StaffBooking | None:
    data = {_text(k): _text(v) for k, v in raw.items()}
    return StaffBooking.from_record(data) if data else None


class BookingStore:
    """Async store of trial bookings over one ``redis.asyncio`` client."""

    def __init__(
        self,
        redis: Redis,
        prefix: str,
        *,
        id_prefix: str = "AE",
        idempotency_ttl_s: int = 7 * 24 * 3600,
        tenant: str = "",
    ) -> None:
        self.redis = redis
        self.prefix = prefix
        self.tag = f"{tenant}:trial-bookings" if tenant else "trial-bookings"
        self.id_prefix = id_prefix
        self.idempotency_ttl_s = idempotency_ttl_s
        self._create = redis.register_script(_CREATE)
        self._reschedule = redis.register_script(_RESCHEDULE)
        self._cancel = redis.register_script(_CANCEL)
        self._attendance = redis.register_script(_ATTENDANCE)
        self._seats_taken = redis.register_script(SEATS_TAKEN)

    # Keys
    def _key(self, name: str) -> str:
        return f"{self.prefix}{{{self.tag}}}:{name}"

    def booking_key(self, booking_id: str) -> str:
        return self._key(f"booking:{booking_id}")

    def count_key(self, date: str, time: str) -> str:
        """The class's seats taken, a count kept beside its set for the seat lookup: a string
        each, so the lookup is one ``MGET`` of dictionary reads (the fields of one hash of
        every class cost a linear scan each while Redis keeps it as a listpack)."""
        return self._key(f"count:{date}:{time}")

    def slot_key(self, date: str, time: str) -> str:
        return self._key(f"slot:{date}:{time}")

    def day_key(self, date: str) -> str:
        return self._key(f"day:{date}")

    def idempotency_key(self, key: str) -> str:
        return self._key(f"idem:{key}")

    def new_id(self) -> str:
        suffix = "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))
        return f"{self.id_prefix}-{suffix}"

    # Operations
    async def create(
        self,
        *,
        date: str,
        time: str,
        capacity: int,
        idempotency_key: str,
        conversation_id: str,
        nome: str,
        idade: int,
        nivel: str,
        now: datetime,
        contact_name: str | None = None,
    ) -> str:
        """Book one seat: the booking id, or ``FULL`` when the class has no seat left.

        Calling again with the same ``idempotency_key`` returns the same id without booking.
        """
        for _ in range(_MAX_TRIES):
            booking_id = self.new_id()
            fields = {
                "booking_id": booking_id,
                "date": date,
                "time": time,
                "status": "active",
                "conversation_id": conversation_id,
                "nome": nome,
                "idade": str(idade),
                "nivel": nivel,
                "contact_name": contact_name or "",
                "created_at": now.isoformat(),
                "updated_at": now.isoformat(),
            }
            pairs = [item for pair in fields.items() for item in pair]
            result = _text(
                await self._create(
                    keys=[
                        self.idempotency_key(idempotency_key),
                        self.slot_key(date, time),
                        self.booking_key(booking_id),
                        self.day_key(date),
                        self.count_key(date, time),
                    ],
                    args=[booking_id, capacity, self.idempotency_ttl_s, *pairs],
                )
            )
            if result != "collision":
                return result
        raise RuntimeError("could not draw an unused booking id")

    async def get(self, booking_id: str, *, conversation_id: str = "") -> BookingView | None:
        """The booking (active or cancelled); None when unknown or owned by another conversation."""
        raw = await self.redis.hgetall(self.booking_key(booking_id))
        data = {_text(k): _text(v) for k, v in raw.items()}
        if not data or (conversation_id and data.get("conversation_id") != conversation_id):
            return None
        return BookingView.model_validate(data)

    async def reschedule(
        self,
        booking_id: str,
        *,
        date: str,
        time: str,
        capacity: int,
        conversation_id: str = "",
        now: datetime,
    ) -> RescheduleStatus:
        """Move an active booking's seat to another class, if that class has room."""
        for _ in range(_MAX_TRIES):
            current = await self.get(booking_id, conversation_id=conversation_id)
            if current is None or current.status != "active":
                return "not_found"
            result = _text(
                await self._reschedule(
                    keys=[
                        self.booking_key(booking_id),
                        self.slot_key(current.date, current.time),
                        self.slot_key(date, time),
                        self.day_key(current.date),
                        self.day_key(date),
                        self.count_key(current.date, current.time),
                        self.count_key(date, time),
                    ],
                    args=[
                        booking_id,
                        conversation_id,
                        capacity,
                        current.date,
                        current.time,
                        date,
                        time,
                        now.isoformat(),
                    ],
                )
            )
            if result != "retry":
                return cast(RescheduleStatus, result)
        raise RuntimeError(f"booking {booking_id} kept moving while rescheduling")

    async def cancel(
        self,
        booking_id: str,
        *,
        conversation_id: str = "",
        reason: str = "",
        idempotency_key: str = "",
        role: Literal["customer", "staff"] = "customer",
        now: datetime,
    ) -> CancelStatus:
        """Cancel a booking and free its seat.

        Calling again with the same ``idempotency_key`` (the turn id) answers "cancelled" again,
        so a redelivered turn says and publishes what the first delivery would have.
        """
        for _ in range(_MAX_TRIES):
            current = await self.get(booking_id, conversation_id=conversation_id)
            if current is None:
                return "not_found"
            result = _text(
                await self._cancel(
                    keys=[
                        self.booking_key(booking_id),
                        self.slot_key(current.date, current.time),
                        self.count_key(current.date, current.time),
                    ],
                    args=[
                        booking_id,
                        conversation_id,
                        current.date,
                        current.time,
                        now.isoformat(),
                        reason,
                        idempotency_key,
                        role,
                    ],
                )
            )
            if result != "retry":
                return cast(CancelStatus, result)
        raise RuntimeError(f"booking {booking_id} kept moving while cancelling")

    async def mark_attendance(
        self, booking_id: str, status: str, *, command_id: str, now: datetime
    ) -> AttendanceStatus:
        """Record whether the person came; the same command again answers "marked" again."""
        result = await self._attendance(
            keys=[self.booking_key(booking_id)], args=[status, command_id, now.isoformat()]
        )
        return cast(AttendanceStatus, _text(result))

    async def staff_view(self, booking_id: str) -> StaffBooking | None:
        raw = await self.redis.hgetall(self.booking_key(booking_id))
        return _staff(raw)

    async def day_bookings(self, dates: list[str], times: list[str]) -> list[StaffBooking]:
        """Every booking (active or cancelled) of the class days, in booking order.

        The day index lists bookings made since it exists; the slot sets add the active ones
        made before, so old records stay visible.
        """
        pipe = self.redis.pipeline(transaction=False)
        for d in dates:
            pipe.smembers(self.day_key(d))
            for t in times:
                pipe.smembers(self.slot_key(d, t))
        ids = sorted({_text(i) for members in await pipe.execute() for i in members})
        if not ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for booking_id in ids:
            pipe.hgetall(self.booking_key(booking_id))
        found = [_staff(raw) for raw in await pipe.execute()]
        wanted = set(dates)
        bookings = [b for b in found if b is not None and b.date in wanted]
        return sorted(bookings, key=lambda b: (b.booked_at or "", b.booking_id))

    async def of_conversation(self, conversation_id: str) -> list[dict[str, str]]:
        """The raw records of every booking of a conversation (export and erase are rare:
        a scan of the bookings, bounded by the seats ever offered, needs no index that would
        itself name the person)."""
        found = []
        async for key in self.redis.scan_iter(match=self._key("booking:*"), count=500):
            raw = await self.redis.hgetall(key)
            record = {_text(k): _text(v) for k, v in raw.items()}
            if record.get("conversation_id") == conversation_id:
                found.append(record)
        return sorted(found, key=lambda r: r.get("created_at", ""))

    async def anonymize(self, conversation_id: str, *, now: datetime) -> list[str]:
        """Blank the person's data in their bookings; the seat, class and status stay, so the
        class is still counted full. Returns the ids of the bookings changed."""
        records = await self.of_conversation(conversation_id)
        if not records:
            return []
        pipe = self.redis.pipeline(transaction=True)
        for record in records:
            key = self.booking_key(record["booking_id"])
            pipe.hset(key, mapping={f: "" for f in PERSONAL_FIELDS if f in record})
            pipe.hset(key, "erased_at", now.isoformat())
        await pipe.execute()
        return [r["booking_id"] for r in records]

    async def seats_taken(self, dates: list[str], times: list[str]) -> dict[tuple[str, str], int]:
        """Seats taken per (date, time), for every combination asked: one ``MGET`` of the
        stored counts, and the script that counts the missing ones from their sets only when
        one is missing (``SEATS_TAKEN``)."""
        slots = [(d, t) for d in dates for t in times]
        if not slots:
            return {}
        count_keys = [self.count_key(d, t) for d, t in slots]
        stored = await self.redis.mget(count_keys)
        counts: list[Any] = [count for count in stored if count is not None]
        if len(counts) < len(slots):
            counts = await self._seats_taken(
                keys=[*count_keys, *(self.slot_key(d, t) for d, t in slots)],
                args=[len(slots), COUNTS_TTL_S],
            )
        return {slot: int(count) for slot, count in zip(slots, counts, strict=True)}
