"""What the channel remembers in Redis: delivery records, pacing, and its health.

- A delivery record per outbound wamid (hash, with a TTL): conversation, turn, bubble, the
  highest status seen and when each status arrived. Status webhooks arrive out of order and
  may even beat the send response, so a status only ever moves forward (a Lua compare on rank).
- Pacing: after throttling, the earliest next send time per business number (130429...) or per
  (number, recipient) pair (131056), shared by every gateway replica.
- Health: the last permanent error and when the token last failed or a send last worked; the
  token is reported invalid while its last failure is newer than the last success.
"""

from __future__ import annotations

import json
import time
from typing import Any

from redis.asyncio import Redis

from services.gateway.whatsapp.errors import Category, GraphError
from services.gateway.whatsapp.metrics import TOKEN_VALID
from shared.contracts import utcnow
from shared.keys import Keys
from shared.lua import ARG_CHECKS

# The channel's short name in its Redis keys (``Keys.channel_item``, ``Keys.channel_global``).
TAG = "wa"


def delivery_key(keys: Keys, wamid: str) -> str:
    """Hash: the delivery record of one outbound WhatsApp message (status, turn, errors)."""
    return keys.channel_item(TAG, "delivery", wamid)


def pace_key(keys: Keys, scope: str) -> str:
    """Earliest send time (epoch ms) after throttling: per business number or recipient."""
    return keys.channel_item(TAG, "pace", scope)


def health_key(keys: Keys) -> str:
    """Hash: the WhatsApp channel's last errors and successes, read by /healthz."""
    return keys.channel_global(TAG, "health")


def events_key(keys: Keys) -> str:
    """List: webhook events that belong to no conversation (account, templates, errors)."""
    return keys.channel_global(TAG, "events")


# Later statuses win; "failed" wins over everything (it is final).
STATUS_RANK = {"accepted": 0, "sent": 1, "delivered": 2, "read": 3, "played": 4, "failed": 5}

# KEYS: record. ARGV: status, rank, at, ttl_s, errors_json, then (field, value) pairs set only
# when absent. The status moves only forward; every status keeps its own "<status>_at".
UPDATE_RECORD = (
    ARG_CHECKS
    + """
need_keys(1)
str_arg(1, 'status')
int_arg(2, 'rank', -1)
int_arg(4, 'ttl_s', 1)
if ARGV[5] == nil or #ARGV % 2 ~= 1 then bad_arg('errors_json and whole (field, value) pairs') end
local rank = tonumber(redis.call('HGET', KEYS[1], 'rank') or '-1')
for i = 6, #ARGV, 2 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('HSETNX', KEYS[1], ARGV[1] .. '_at', ARGV[3])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'errors', ARGV[5]) end
if tonumber(ARGV[2]) > rank then
  redis.call('HSET', KEYS[1], 'status', ARGV[1], 'rank', ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return redis.call('HGET', KEYS[1], 'status') or ARGV[1]
"""
)

# KEYS: pace key. ARGV: until_ms, ttl_ms. Extends a hold, never shortens it.
HOLD = (
    ARG_CHECKS
    + """
need_keys(1)
int_arg(1, 'until_ms', 0)
int_arg(2, 'ttl_ms', 1)
local current = redis.call('GET', KEYS[1])
if (not current) or tonumber(current) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1
"""
)


class ChannelRecords:
    def __init__(self, redis: Redis, keys: Keys, ttl_s: int) -> None:
        self.redis = redis
        self.keys = keys
        self.ttl_s = ttl_s
        self.update_record = redis.register_script(UPDATE_RECORD)
        self.hold_script = redis.register_script(HOLD)

    # Delivery records -----------------------------------------------------------------------

    async def record(
        self,
        wamid: str,
        status: str,
        *,
        at: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        **identity: str | int | None,
    ) -> str:
        """Apply one status to a wamid's record (created when missing); the status now held."""
        fields: list[str] = []
        for name, value in identity.items():
            if value is not None:
                fields += [name, str(value)]
        result = await self.update_record(
            keys=[delivery_key(self.keys, wamid)],
            args=[
                status,
                STATUS_RANK.get(status, -1),
                at or utcnow().isoformat(),
                self.ttl_s,
                json.dumps(errors, ensure_ascii=False) if errors else "",
                *fields,
            ],
        )
        return str(result)

    async def delivery(self, wamid: str) -> dict[str, str]:
        return await self.redis.hgetall(delivery_key(self.keys, wamid))

    async def error_codes(self, wamid: str) -> list[int]:
        """The Meta error codes a status reported for ``wamid`` (none when it never failed)."""
        raw = await self.redis.hget(delivery_key(self.keys, wamid), "errors")
        errors = json.loads(raw) if raw else []
        return [e["code"] for e in errors if isinstance(e, dict) and e.get("code") is not None]

    # Pacing ---------------------------------------------------------------------------------

    async def wait_ms(self, *scopes: str) -> int:
        """How long to wait before the next send in these scopes (0 when free)."""
        values = await self.redis.mget([pace_key(self.keys, s) for s in scopes])
        latest = max((int(v) for v in values if v), default=0)
        return max(0, latest - int(time.time() * 1000))

    async def hold(self, scope: str, delay_s: float) -> None:
        """Nobody sends in ``scope`` for ``delay_s`` (extends, never shortens, a hold)."""
        until = int(time.time() * 1000 + delay_s * 1000)
        ttl_ms = max(1, int(delay_s * 1000)) + 1000
        await self.hold_script(keys=[pace_key(self.keys, scope)], args=[until, ttl_ms])

    # Health ---------------------------------------------------------------------------------

    async def note_success(self) -> None:
        await self.redis.hset(health_key(self.keys), "last_success_at", utcnow().isoformat())
        TOKEN_VALID.labels(self.keys.tenant).set(1)

    async def note_error(self, error: GraphError, conversation_id: str | None) -> None:
        """Remember a failure that was not retried (or no longer), for /healthz and operators."""
        await self._note(error.summary(), str(error.category), conversation_id)

    async def note_problem(self, message: str, conversation_id: str | None) -> None:
        """Remember a set-up problem that stopped a delivery before any request."""
        summary = {"code": None, "category": "config", "message": message}
        await self._note(summary, "config", conversation_id)

    async def _note(
        self, summary: dict[str, Any], category: str, conversation_id: str | None
    ) -> None:
        entry = {**summary, "conversation_id": conversation_id, "at": utcnow().isoformat()}
        mapping = {"last_error": json.dumps(entry, ensure_ascii=False)}
        if category == Category.AUTH:
            mapping["last_auth_error_at"] = entry["at"]
            TOKEN_VALID.labels(self.keys.tenant).set(0)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(health_key(self.keys), mapping=mapping)
            pipe.hincrby(health_key(self.keys), f"errors:{category}", 1)
            await pipe.execute()

    async def health(self) -> dict[str, Any]:
        raw = await self.redis.hgetall(health_key(self.keys))
        auth_at = raw.get("last_auth_error_at")
        ok_at = raw.get("last_success_at")
        token = "unknown"
        if auth_at and (not ok_at or auth_at > ok_at):
            token = "invalid"
        elif ok_at:
            token = "ok"
        counts = {k.split(":", 1)[1]: int(v) for k, v in raw.items() if k.startswith("errors:")}
        last = json.loads(raw["last_error"]) if "last_error" in raw else None
        return {
            "token": token,
            "last_success_at": ok_at,
            "last_error": last,
            "errors": counts,
        }

    # Channel-level events -------------------------------------------------------------------

    async def event(self, entry: str, keep: int) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.rpush(events_key(self.keys), entry)
            pipe.ltrim(events_key(self.keys), -keep, -1)
            pipe.expire(events_key(self.keys), self.ttl_s)
            await pipe.execute()
