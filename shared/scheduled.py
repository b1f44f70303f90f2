"""Scheduled messages in Redis: the stored message (``Scheduled``), the hour buckets they wait
in, and the store that creates, claims, takes, moves and lists them.

Shared because two services read the same records: the scheduler, which writes and sends them
(what to schedule for an event stays in ``services/scheduler/core.py``), and the gateway, which
lists them for ``GET /v1/scheduled``.

Every write goes through a script of ``shared/lua.py`` on the keys of one slot: an item's hash,
its conversation's index and journal share the conversation's hash tag; a bucket's due and
claimed sets share the bucket's.

The buckets and their index are every tenant's (one scheduler loop per process claims them
all), so their members name their tenant (``Keys.sched_bucket_member``) and whatever lists or
cancels keeps to its own tenant's members; the held set is the tenant's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, cast

from pydantic import AwareDatetime, BaseModel, Field
from redis.asyncio import Redis

from shared import lua
from shared.coalesce import coalescer
from shared.keys import Keys, sched_member, split_tenant
from shared.lua import Scripts
from shared.state import stamp_tenant

Kind = Literal["day_before", "before_class", "attended", "no_show"]
Status = Literal["pending", "sending", "sent", "held", "cancelled", "dropped"]


class Scheduled(BaseModel):
    """One message due at ``due_at``, rendered when scheduled (the booking's facts then)."""

    id: str
    conversation_id: str
    kind: Kind
    booking_id: str
    due_at: AwareDatetime
    class_at: AwareDatetime
    text: str
    template: str | None = None
    template_params: list[str] = Field(default_factory=list)
    channel: str
    to: str | None = None

    @property
    def turn_id(self) -> str:
        """The turn id of the message when sent: a turn of its own."""
        return f"sched-{self.id}"


def bucket_of(due: datetime) -> str:
    """The hour bucket (UTC) a due time falls in: ``YYYYMMDDHH``."""
    return due.astimezone(UTC).strftime("%Y%m%d%H")


def bucket_start(bucket: str) -> datetime:
    return datetime.strptime(bucket, "%Y%m%d%H").replace(tzinfo=UTC)


def member(conversation_id: str, ident: str) -> str:
    """A held set's member (the bare conversation and the item); a bucket's member is the
    same with the conversation ``Keys.qualified``."""
    return sched_member(conversation_id, ident)


def parse_member(value: str) -> tuple[str, str]:
    conversation_id, _, ident = value.rpartition("|")
    return conversation_id, ident


def ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def bucket_member_of(value: str) -> tuple[str, str, str]:
    """(tenant, conversation, item) of a bucket's member (``Keys.sched_bucket_member``)."""
    qualified, ident = parse_member(value)
    tenant, conversation_id = split_tenant(qualified)
    return tenant, conversation_id, ident


@dataclass(frozen=True)
class Adding:
    """An item to record (``ScheduleStore.add``): its status, when it is to be sent (pending),
    and its journal entry."""

    item: Scheduled
    status: str
    send_at: datetime
    entry: str


@dataclass(frozen=True)
class Claimed:
    """A bucket's member claimed by this process; ``member`` as stored (tenant-qualified)."""

    bucket: str
    member: str

    @property
    def tenant(self) -> str:
        return bucket_member_of(self.member)[0]

    @property
    def conversation_id(self) -> str:
        return bucket_member_of(self.member)[1]

    @property
    def item_id(self) -> str:
        return parse_member(self.member)[1]


class ScheduleStore:
    def __init__(
        self, redis: Redis, scripts: Scripts, keys: Keys, *, journal_max: int, ttl_s: int
    ) -> None:
        self.redis = redis
        self.scripts = scripts
        self.keys = keys
        self.journal_max = journal_max
        self.ttl_s = ttl_s

    async def _members(self, key: str) -> list[str]:
        """Every member of a sorted set, as text (the clients decode responses:
        ``shared/connections.py``)."""
        return cast(list[str], await self.redis.zrange(key, 0, -1))

    async def add(
        self,
        item: Scheduled,
        status: str,
        send_at: datetime,
        entry: str,
        because: str | None = None,
    ) -> bool:
        """Record ``item``; a pending one goes into the bucket of ``send_at``. False when the
        item existed (a redelivered event): nothing is journaled again; or when ``because``,
        the turn whose event scheduled it, was in flight when the conversation was erased."""
        [created] = await self.add_all([Adding(item, status, send_at, entry)], because)
        return created

    async def add_all(self, adds: list[Adding], because: str | None = None) -> list[bool]:
        """``add`` for the items one event schedules (a booking's reminders): their scripts in
        one round trip, then the buckets of the pending ones in one more."""
        k = self.keys
        calls = [
            (
                [
                    k.sched_item(a.item.conversation_id, a.item.id),
                    k.sched_index(a.item.conversation_id),
                    k.journal(a.item.conversation_id),
                    k.erased(a.item.conversation_id),
                ],
                [
                    a.item.model_dump_json(),
                    a.status,
                    ms(a.item.due_at),
                    a.item.id,
                    self.ttl_s,
                    bucket_of(a.send_at),
                    *stamp_tenant(k.tenant, a.entry),
                    self.journal_max,
                    because or "",
                ],
            )
            for a in adds
        ]
        if len(calls) == 1:
            answers = [await coalescer.call(self.redis, self.scripts.sched_add, *calls[0])]
        else:
            async with self.redis.pipeline(transaction=False) as pipe:
                for keys, args in calls:
                    lua.queue(pipe, self.scripts.sched_add, keys=keys, args=args)
                answers = await lua.execute(pipe)
        # Also after a crash between the scripts and here: the redelivery lands here again.
        pending = [a for a, (_, current) in zip(adds, answers, strict=True) if current == "pending"]
        if pending:
            async with self.redis.pipeline(transaction=False) as pipe:
                for a in pending:
                    bucket = bucket_of(a.send_at)
                    due_member = k.sched_bucket_member(a.item.conversation_id, a.item.id)
                    pipe.zadd(k.sched_due(bucket), {due_member: ms(a.send_at)})
                    pipe.zadd(k.sched_buckets, {bucket: ms(bucket_start(bucket))})
                await pipe.execute()
        return [bool(int(created)) for created, _ in answers]

    async def items(self, conversation_id: str) -> list[tuple[Scheduled, str, str]]:
        """Every scheduled message of a conversation: (item, status, bucket), by due time."""
        ids = await self._members(self.keys.sched_index(conversation_id))
        if not ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for ident in ids:
                pipe.hmget(self.keys.sched_item(conversation_id, ident), "item", "status", "bucket")
            rows = await pipe.execute()
        return [
            (Scheduled.model_validate_json(raw), status, bucket)
            for raw, status, bucket in rows
            if raw is not None
        ]

    async def move(self, item: Scheduled, from_: str, to: str, entry: str) -> bool:
        k, conv = self.keys, item.conversation_id
        moved = await self.scripts.sched_move(
            keys=[k.sched_item(conv, item.id), k.journal(conv)],
            args=[from_, to, *stamp_tenant(k.tenant, entry), self.journal_max, self.ttl_s],
        )
        return bool(int(moved))

    async def cancel(self, item: Scheduled, bucket: str, entry: str) -> bool:
        """Cancel a pending or held message: it leaves its bucket and the held list."""
        if not await self.move(item, "pending,held", "cancelled", entry):
            return False
        k, conv = self.keys, item.conversation_id
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(k.sched_due(bucket), k.sched_bucket_member(conv, item.id))
            pipe.zrem(k.sched_held, member(conv, item.id))
            await pipe.execute()
        return True

    async def due_buckets(self, now: datetime) -> list[str]:
        """Buckets (every tenant's) whose hour has begun."""
        due = await self.redis.zrangebyscore(self.keys.sched_buckets, "-inf", ms(now))
        return cast(list[str], due)

    async def claim(
        self, bucket: str, now: datetime, claim_ms: int, limit: int = 100
    ) -> tuple[int, list[Claimed]]:
        """Due (and abandoned) members of a bucket, any tenant's, now ours for ``claim_ms``;
        plus how many members the bucket still has in all."""
        result = await self.scripts.sched_claim(
            keys=[self.keys.sched_due(bucket), self.keys.sched_claimed(bucket)],
            args=[ms(now), claim_ms, limit],
        )
        return int(result[0]), [Claimed(bucket, m) for m in result[1:]]

    async def load(self, claimed: Claimed) -> Scheduled | None:
        raw = await self.redis.hget(
            self.keys.sched_item(claimed.conversation_id, claimed.item_id), "item"
        )
        return Scheduled.model_validate_json(raw) if raw else None

    async def take(self, item: Scheduled, held_entry: str) -> tuple[str, Scheduled | None]:
        k, conv = self.keys, item.conversation_id
        result = await self.scripts.sched_take(
            keys=[k.sched_item(conv, item.id), k.state(conv), k.journal(conv)],
            args=[*stamp_tenant(k.tenant, held_entry), self.journal_max, self.ttl_s],
        )
        status = result[0]
        if status == "send":
            return status, Scheduled.model_validate_json(result[1])
        if status == "held":
            await self.redis.zadd(k.sched_held, {member(conv, item.id): ms(item.due_at)})
        return status, None

    async def finish(self, claimed: Claimed) -> None:
        await self.redis.zrem(self.keys.sched_claimed(claimed.bucket), claimed.member)

    async def forget_bucket(self, bucket: str) -> None:
        await self.redis.zrem(self.keys.sched_buckets, bucket)

    async def listing(
        self, conversation_id: str | None, before: datetime | None
    ) -> list[dict[str, Any]]:
        """Rows for ``GET /v1/scheduled``: one conversation's messages (every status), or, for
        staff, every message still to come plus those held for a person."""
        rows: list[tuple[Scheduled, str | None]]
        if conversation_id is not None:
            rows = [(item, status) for item, status, _ in await self.items(conversation_id)]
        else:
            # The buckets hold every tenant's messages: keep this tenant's.
            mine: set[tuple[str, str]] = set()
            for bucket in await self._members(self.keys.sched_buckets):
                for name in [
                    *await self._members(self.keys.sched_due(bucket)),
                    *await self._members(self.keys.sched_claimed(bucket)),
                ]:
                    tenant, conv, ident = bucket_member_of(name)
                    if tenant == self.keys.tenant:
                        mine.add((conv, ident))
            mine.update(parse_member(name) for name in await self._members(self.keys.sched_held))
            rows = []
            for conv, ident in sorted(mine):
                fields = await self.redis.hmget(self.keys.sched_item(conv, ident), "item", "status")
                raw, status = cast(list[str | None], fields)
                if raw is not None:
                    rows.append((Scheduled.model_validate_json(raw), status))
        listed = [
            {
                "id": item.id,
                "conversation_id": item.conversation_id,
                "kind": item.kind,
                "due_at": item.due_at.isoformat(),
                "status": status,
                "booking_id": item.booking_id,
            }
            for item, status in rows
            if before is None or item.due_at < before
        ]
        return sorted(listed, key=lambda r: (r["due_at"], r["id"]))
