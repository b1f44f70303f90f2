"""Scheduled messages in Redis: created, claimed, taken, moved and listed.

Every write goes through a script of ``shared/lua.py`` on the keys of one slot: an item's hash,
its conversation's index and journal share the conversation's hash tag; a bucket's due and
claimed sets share the bucket's. Used by the scheduler service and by the gateway's listing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from redis.asyncio import Redis

from services.scheduler.core import Scheduled, bucket_of, bucket_start, member, parse_member
from shared.keys import Keys
from shared.lua import Scripts


def ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


@dataclass(frozen=True)
class Claimed:
    bucket: str
    member: str

    @property
    def conversation_id(self) -> str:
        return parse_member(self.member)[0]

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

    async def add(self, item: Scheduled, status: str, send_at: datetime, entry: str) -> bool:
        """Record ``item``; a pending one goes into the bucket of ``send_at``. False when the
        item existed (a redelivered event): nothing is journaled again."""
        k, conv = self.keys, item.conversation_id
        bucket = bucket_of(send_at)
        created, current = await self.scripts.sched_add(
            keys=[k.sched_item(conv, item.id), k.sched_index(conv), k.journal(conv)],
            args=[
                item.model_dump_json(),
                status,
                ms(item.due_at),
                item.id,
                self.ttl_s,
                bucket,
                entry,
                self.journal_max,
            ],
        )
        if current == "pending":
            # Also after a crash between the script and here: the redelivery lands here again.
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(k.sched_due(bucket), {member(conv, item.id): ms(send_at)})
                pipe.zadd(k.sched_buckets, {bucket: ms(bucket_start(bucket))})
                await pipe.execute()
        return bool(int(created))

    async def items(self, conversation_id: str) -> list[tuple[Scheduled, str, str]]:
        """Every scheduled message of a conversation: (item, status, bucket), by due time."""
        ids = await self.redis.zrange(self.keys.sched_index(conversation_id), 0, -1)
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
            args=[from_, to, entry, self.journal_max, self.ttl_s],
        )
        return bool(int(moved))

    async def cancel(self, item: Scheduled, bucket: str, entry: str) -> bool:
        """Cancel a pending or held message: it leaves its bucket and the held list."""
        if not await self.move(item, "pending,held", "cancelled", entry):
            return False
        name = member(item.conversation_id, item.id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(self.keys.sched_due(bucket), name)
            pipe.zrem(self.keys.sched_held, name)
            await pipe.execute()
        return True

    async def due_buckets(self, now: datetime) -> list[str]:
        return await self.redis.zrangebyscore(self.keys.sched_buckets, "-inf", ms(now))

    async def claim(
        self, bucket: str, now: datetime, claim_ms: int, limit: int = 100
    ) -> tuple[int, list[Claimed]]:
        """Due (and abandoned) members of a bucket, now ours for ``claim_ms``; plus how many
        members the bucket still has in all."""
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
            args=[held_entry, self.journal_max, self.ttl_s],
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
        if conversation_id is not None:
            rows = [(item, status) for item, status, _ in await self.items(conversation_id)]
        else:
            members: set[str] = set()
            for bucket in await self.redis.zrange(self.keys.sched_buckets, 0, -1):
                members.update(await self.redis.zrange(self.keys.sched_due(bucket), 0, -1))
                members.update(await self.redis.zrange(self.keys.sched_claimed(bucket), 0, -1))
            members.update(await self.redis.zrange(self.keys.sched_held, 0, -1))
            rows = []
            for name in sorted(members):
                conv, ident = parse_member(name)
                raw, status = await self.redis.hmget(
                    self.keys.sched_item(conv, ident), "item", "status"
                )
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
