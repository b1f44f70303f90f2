"""Sending one message to a provider's REST API once, with retries, across replicas.

Providers' send endpoints commonly take a message and answer with its id, with no idempotency
key. So the slot (a bubble of a turn's reply, a status toggle) is claimed under
``Keys.sent(conversation, turn, slot)`` before the request:

- ``pending:<token>`` while one sender works on it (with replicas asked for, taken only once
  a replica holds the claim: ``claim``) (a short TTL, refreshed per attempt, so a
  sender that died mid-request frees it); another sender meeting it raises
  :class:`DeliveryInFlight` and the bus delivers the reply again later;
- nothing, for a reply to a turn whose messages another turn took up again (it holds the
  conversation's lease now, ``Holder``): that turn answers them, this one is ``superseded``;
- ``sent:<id>`` once the provider answered 2xx: the slot is never sent again;
- ``failed:<status>`` once it refused for good (a 4xx other than 429, or attempts exhausted);
- ``unknown`` when the request may have arrived but no answer came (a read timeout): sending
  again could show the person the message twice, so it is not.

429 and 5xx answers and connection failures (nothing reached the provider) are retried in place
with jittered exponential backoff (a ``Retry-After`` longer than the cap gives up at once).
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

import httpx
from redis.asyncio import Redis

from shared import lua
from shared.contracts import Reply
from shared.durability import NotReplicated, ReplicaAck
from shared.keys import Keys


class DeliveryInFlight(RuntimeError):
    """Another sender holds this slot right now; the bus will deliver the reply again."""


@dataclass(frozen=True)
class Retry:
    attempts: int
    base_s: float
    cap_s: float

    def delay(self, attempt: int, retry_after: str | None, jitter: float) -> float | None:
        """Seconds before attempt ``attempt + 1``; None when a ``Retry-After`` exceeds the cap."""
        if retry_after and retry_after.strip().isdigit():
            asked = float(retry_after.strip())
            return asked if asked <= self.cap_s else None
        return min(self.cap_s, self.base_s * 2.0**attempt) * (0.5 + jitter / 2)


@dataclass(frozen=True)
class Holder:
    """A reply to a turn is sent only while that turn holds its conversation's lease
    (``Keys.lease``): a turn that outlived its lease, or whose start was lost in a failover,
    had its messages taken up again by the turn that holds it now, which answers them."""

    lease: str
    turn_id: str


@dataclass(frozen=True)
class Sent:
    """What happened to one slot. ``status``: "sent" (now), "duplicate" (sent before),
    "failed" (now or before), "unknown" (may have arrived; never sent again), "superseded"
    (not sent: another turn answers these messages)."""

    status: str
    body: Any = None
    detail: str = ""


def holder_of(keys: Keys, reply: Reply) -> Holder | None:
    """The lease a reply's sending depends on: a bot's reply to a turn's; None for a staff
    member's message or a scheduled one, which answer no turn."""
    if reply.author == "agent" or reply.scheduled:
        return None
    return Holder(keys.lease(reply.conversation_id), reply.turn_id)


def retryable(status: int) -> bool:
    return status == 429 or status >= 500


Claimed = Literal["claimed", "taken", "superseded"]


async def claim(
    redis: Redis, key: str, token: str, ttl_s: int, ack: ReplicaAck, holder: Holder | None = None
) -> Claimed:
    """Take the slot ``key`` for this sender: "claimed", "taken" (another sender's, or decided
    before) or "superseded" (``holder`` no longer holds its lease; nothing taken).

    With replicas asked for (``shared/durability.py``) the claim is on one before the send: a
    claim lost with its master would let the next sender send the slot again. A claim no
    replica confirmed in time is given back and ``NotReplicated`` raised, so the bus delivers
    the reply again later."""
    keys = [key, *([holder.lease] if holder else [])]
    args = [token, ttl_s, *([holder.turn_id] if holder else [])]
    if not ack.on:
        return cast(Claimed, (await redis.eval(lua.SEND_CLAIM, len(keys), *keys, *args))[0])
    try:
        async with redis.pipeline(transaction=False) as pipe:
            pipe.eval(lua.SEND_CLAIM, len(keys), *keys, *args)
            waits = ack.queue(pipe, redis, key)
            done = await ack.execute(pipe)
        outcome = cast(Claimed, done[0][0])
        if outcome == "claimed":
            await ack.check(redis, waits, done[1:], f"send claim {key}")
    except NotReplicated:
        await redis.eval(lua.DEL_IF_EQUAL, 1, key, token)
        raise
    return outcome


async def send_once(
    redis: Redis,
    key: str,
    post: Callable[[], Awaitable[httpx.Response]],
    id_of: Callable[[Any], str | None],
    retry: Retry,
    *,
    ttl_s: int,
    pending_ttl_s: int,
    ack: ReplicaAck | None = None,
    holder: Holder | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
) -> Sent:
    """Send the slot ``key`` with ``post`` unless it was decided before (see the module's
    doc); ``id_of`` reads the provider's message id from a 2xx body."""
    token = f"pending:{uuid.uuid4().hex}"
    claimed = await claim(redis, key, token, pending_ttl_s, ack or ReplicaAck(), holder)
    if claimed == "superseded":
        return Sent("superseded", detail=f"{holder.lease if holder else key} held by another turn")
    if claimed == "taken":
        decided = await redis.get(key)
        if decided is None:  # the pending holder's claim just expired: take it
            return await send_once(
                redis,
                key,
                post,
                id_of,
                retry,
                ttl_s=ttl_s,
                pending_ttl_s=pending_ttl_s,
                ack=ack,
                holder=holder,
                sleep=sleep,
                jitter=jitter,
            )
        if decided.startswith("pending:"):
            raise DeliveryInFlight(f"{key} is being sent by another sender")
        if decided.startswith("sent:"):
            return Sent("duplicate", detail=decided)
        return Sent("failed" if decided.startswith("failed") else "unknown", detail=decided)
    attempt = 0
    while True:
        await redis.expire(key, pending_ttl_s)
        try:
            response = await post()
        except httpx.TransportError as error:
            if not isinstance(error, httpx.ConnectError | httpx.ConnectTimeout):
                await redis.set(key, "unknown", ex=ttl_s)
                return Sent("unknown", detail=f"{type(error).__name__}: no answer")
            status, retry_after, detail = 0, None, f"{type(error).__name__}"
        else:
            if response.is_success:
                body = _json(response)
                await redis.set(key, f"sent:{id_of(body) or '?'}", ex=ttl_s)
                return Sent("sent", body)
            status = response.status_code
            retry_after = response.headers.get("retry-after")
            detail = f"HTTP {status}: {response.text[:200]}"
        attempt += 1
        delay = retry.delay(attempt - 1, retry_after, jitter())
        if (status and not retryable(status)) or delay is None or attempt >= retry.attempts:
            await redis.set(key, f"failed:{status or 'connect'}", ex=ttl_s)
            return Sent("failed", detail=detail)
        await sleep(delay)


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None
