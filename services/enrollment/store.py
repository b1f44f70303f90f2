"""Enrollment requests in Redis: one hash per request and an index by creation, under keys the
service owns (``Keys.owned("enrollment", ...)``: one hash tag, so the creating script touches
one slot, with the tenant inside it).

A request is created once: its id comes from the turn that makes it, and the script writes
nothing when that id exists, so a redelivered turn that decides again finds its request.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from redis.asyncio import Redis

from services.enrollment.core import EnrollmentRequest
from shared.keys import Keys
from shared.lua import ARG_CHECKS

SERVICE = "enrollment"

# KEYS: the request's hash, the index (sorted set by creation, epoch ms).
# ARGV: request id, created epoch ms, then field/value pairs of the hash.
# Returns 1 when created, 0 when the request already existed.
_CREATE = (
    ARG_CHECKS
    + """
need_keys(2)
local id = str_arg(1, 'request_id')
local created = int_arg(2, 'created_ms', 0)
if #ARGV < 4 or #ARGV % 2 ~= 0 then bad_arg('fields must be field/value pairs') end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], created, id)
return 1
"""
)


class EnrollmentStore:
    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._create = redis.register_script(_CREATE)

    def request_key(self, request_id: str) -> str:
        return self.keys.owned(SERVICE, f"request:{request_id}")

    @property
    def index_key(self) -> str:
        return self.keys.owned(SERVICE, "requests")

    async def create(self, request: EnrollmentRequest) -> bool:
        """Store the request; False when it was stored already (the same turn again)."""
        record = request.model_dump(mode="json")
        fields = {k: json.dumps(v) if isinstance(v, list) else str(v) for k, v in record.items()}
        pairs = [item for pair in fields.items() for item in pair]
        created_ms = int(request.created_at.timestamp() * 1000)
        result = await self._create(
            keys=[self.request_key(request.id), self.index_key],
            args=[request.id, created_ms, *pairs],
        )
        return bool(int(result))

    async def requests(self, *, status: str | None, limit: int | None) -> list[dict[str, Any]]:
        """The newest requests first, those of ``status`` only when given."""
        ids = await self.redis.zrevrange(self.index_key, 0, -1)
        out: list[dict[str, Any]] = []
        for chunk in (ids[i : i + 100] for i in range(0, len(ids), 100)):
            async with self.redis.pipeline(transaction=False) as pipe:
                for request_id in chunk:
                    pipe.hgetall(self.request_key(_text(request_id)))
                rows = await pipe.execute()
            for row in rows:
                if not row:
                    continue
                record = {_text(k): _text(v) for k, v in row.items()}
                if status is None or record.get("status") == status:
                    out.append({**record, "days": json.loads(record.get("days") or "[]")})
                if limit is not None and len(out) >= limit:
                    return out
        return out

    async def of_conversation(self, conversation_id: str) -> list[dict[str, Any]]:
        """Every request the conversation made, as stored (erasure and export are rare: they
        read the whole index rather than keep a second one per conversation)."""
        everything = await self.requests(status=None, limit=None)
        return [r for r in everything if r.get("conversation_id") == conversation_id]

    async def anonymize(self, conversation_id: str, *, now: datetime) -> list[str]:
        """Unlink the conversation's requests from the person: the conversation id (a phone
        number on WhatsApp) is blanked and ``erased_at`` set; the plan, days, time and way to
        pay stay, as the business's record of a request. Returns the ids changed."""
        records = await self.of_conversation(conversation_id)
        if not records:
            return []
        pipe = self.redis.pipeline(transaction=True)
        for record in records:
            key = self.request_key(record["id"])
            pipe.hset(key, mapping={"conversation_id": "", "erased_at": now.isoformat()})
        await pipe.execute()
        return [record["id"] for record in records]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
