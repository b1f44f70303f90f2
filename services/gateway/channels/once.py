"""Sending one message to a provider's REST API once, with retries, across replicas.

Providers' send endpoints commonly take a message and answer with its id, with no idempotency
key. So the slot (a bubble of a turn's reply, a status toggle) is claimed under
``Keys.sent(conversation, turn, slot)`` before the request:

- ``pending:<token>`` while one sender works on it (with replicas asked for, taken only once
  a replica holds the claim: ``claim``) (a short TTL, refreshed per attempt, so a
  sender that died mid-request frees it); another sender meeting it raises
  :class:`DeliveryInFlight` and the bus delivers the reply again later;
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
from typing import Any

import httpx
from redis.asyncio import Redis

from shared import lua
from shared.durability import NotReplicated, ReplicaAck


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
class Sent:
    """What happened to one slot. ``status``: "sent" (now), "duplicate" (sent before),
    "failed" (now or before), "unknown" (may have arrived; never sent again)."""

    status: str
    body: Any = None
    detail: str = ""


def retryable(status: int) -> bool:
    return status == 429 or status >= 500


async def claim(redis: Redis, key: str, token: str, ttl_s: int, ack: ReplicaAck) -> bool:
    """Take the slot ``key`` for this sender (``SET NX``); False when it was taken.

    With replicas asked for (``shared/durability.py``) the claim is on one before the send: a
    claim lost with its master would let the next sender send the slot again. A claim no
    replica confirmed in time is given back and ``NotReplicated`` raised, so the bus delivers
    the reply again later."""
    if not ack.on:
        return bool(await redis.set(key, token, nx=True, ex=ttl_s))
    try:
        async with redis.pipeline(transaction=False) as pipe:
            pipe.set(key, token, nx=True, ex=ttl_s)
            waits = ack.queue(pipe, redis, key)
            done = await ack.execute(pipe)
        if done[0]:
            await ack.check(redis, waits, done[1:], f"send claim {key}")
    except NotReplicated:
        await redis.eval(lua.DEL_IF_EQUAL, 1, key, token)
        raise
    return bool(done[0])


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
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
) -> Sent:
    """Send the slot ``key`` with ``post`` unless it was decided before (see the module's
    doc); ``id_of`` reads the provider's message id from a 2xx body."""
    token = f"pending:{uuid.uuid4().hex}"
    if not await claim(redis, key, token, pending_ttl_s, ack or ReplicaAck()):
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
