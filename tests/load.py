"""A small load driver for fault tests: concurrent conversations over the HTTP API.

Each simulated person sends a message, waits for its reply, then sends the next, with business
time (``sent_at``) advancing a minute per message from a start of its own.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx
from redis import Redis as SyncRedis

from orquestra.forked import service_of

BOOKING = ["oi, quero agendar uma aula experimental", "me chamo Ana, 30 anos, iniciante",
           "terça que vem às 19h", "sim"]  # fmt: skip
FAQ = ["onde fica a CT?", "quanto custa?", "precisa levar raquete?", "obrigado!"]


@dataclass
class Exchange:
    conversation_id: str
    text: str
    sent: float
    answered: float
    turn_id: str
    reply: str


@dataclass
class Run:
    exchanges: list[Exchange] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    # Each conversation's reply cursor, so a conversation can be driven again later.
    cursors: dict[str, str] = field(default_factory=dict)
    # POSTs answered 503 and sent again (Redis out of reach, or no replica confirmed).
    retried: int = 0


# A 503 (Redis out of reach, e.g. mid-failover) is retried after its Retry-After this often.
UNAVAILABLE_RETRIES = 10


async def post_until_accepted(
    client: httpx.AsyncClient, body: dict[str, str], run: Run | None = None
) -> httpx.Response:
    """POST a message as a webhook's sender would: a 503 (Redis out of reach, or no replica
    confirmed the message) is sent again after its Retry-After, with the same message id,
    which dedupes it; a broken connection is sent again at once."""
    for _ in range(UNAVAILABLE_RETRIES):
        try:
            response = await client.post("/v1/messages", json=body)
        except httpx.TransportError:
            continue
        if response.status_code != 503:
            return response
        if run is not None:
            run.retried += 1
        await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
    return await client.post("/v1/messages", json=body)


async def converse(
    client: httpx.AsyncClient,
    conversation_id: str,
    texts: list[str],
    start: datetime,
    run: Run,
    reply_wait_s: float = 60,
) -> None:
    cursor = run.cursors.get(conversation_id, "0-0")
    for i, text in enumerate(texts):
        sent_at = (start + timedelta(minutes=i)).isoformat()
        sent = time.perf_counter()
        body = {"conversation_id": conversation_id, "text": text, "sent_at": sent_at,
                "message_id": uuid.uuid4().hex}  # fmt: skip
        response = await post_until_accepted(client, body, run)
        if response.status_code != 202:
            run.failures.append(f"{conversation_id}#{i}: HTTP {response.status_code}")
            return
        for _ in range(UNAVAILABLE_RETRIES):
            try:
                got = await client.get(
                    f"/v1/conversations/{conversation_id}/replies",
                    params={"after": cursor, "wait": reply_wait_s},
                    timeout=reply_wait_s + 10,
                )
            except httpx.TransportError:
                continue  # its gateway died mid long-poll: ask another
            if got.status_code != 503:
                break
            # Redis out of reach for now (a failover): the gateway says when to try again.
            await asyncio.sleep(float(got.headers.get("Retry-After", "1")))
        if got.status_code != 200:
            run.failures.append(
                f"{conversation_id}#{i}: HTTP {got.status_code} on replies: {got.text[:200]}"
            )
            return
        replies = got.json()["replies"]
        if not replies:
            run.failures.append(f"{conversation_id}#{i}: no reply to {text!r}")
            return
        cursor = run.cursors[conversation_id] = got.json()["cursor"]
        first = replies[0]
        run.exchanges.append(
            Exchange(conversation_id, text, sent, time.perf_counter(), first["turn_id"],
                     first["text"])
        )  # fmt: skip


async def drive(
    base_url: str,
    scripts: dict[str, tuple[list[str], datetime]],
    concurrency: int = 200,
    run: Run | None = None,
) -> Run:
    run = run or Run()
    limits = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base_url, timeout=30, limits=limits) as client:
        gate = asyncio.Semaphore(concurrency)

        async def one(cid: str, texts: list[str], start: datetime) -> None:
            async with gate:
                await converse(client, cid, texts, start, run)

        await asyncio.gather(*(one(cid, t, s) for cid, (t, s) in scripts.items()))
    return run


def children(pid: int) -> dict[str, list[int]]:
    """The service processes a supervisor runs, by service name (from /proc)."""
    found: dict[str, list[int]] = {}
    with open(f"/proc/{pid}/task/{pid}/children") as handle:
        kids = [int(p) for p in handle.read().split()]
    for kid in kids:
        try:
            with open(f"/proc/{kid}/cmdline", "rb") as handle:
                service = service_of(handle.read())
        except FileNotFoundError:
            continue
        if service:
            found.setdefault(service, []).append(kid)
    return found


def load_size(default: int) -> int:
    """Heavy tests run smaller in CI unless ORQ_LOAD_SCALE says otherwise."""
    return max(1, int(default * float(os.environ.get("ORQ_LOAD_SCALE", "1"))))


def drive_while(
    chaos: Callable[[], Awaitable[None]],
    base_url: str,
    scripts: dict[str, tuple[list[str], datetime]],
    concurrency: int,
) -> Run:
    """``drive`` the scripts while ``chaos`` runs (kills, restarts), both to their end."""

    async def main() -> Run:
        faults = asyncio.create_task(chaos())
        run = await drive(base_url, scripts, concurrency=concurrency)
        await faults
        return run

    return asyncio.run(main())


def booked_once(
    system: Any,
    redis_url: str,
    prefix: str,
    scripts: dict[str, tuple[list[str], datetime]],
    run: Run,
) -> list[str]:
    """After a booking load (``BOOKING``) on ``system``: every message of every script was
    answered by a turn of its own, and no conversation booked twice; the bookings' owners."""
    assert run.failures == [], run.failures
    for conversation in scripts:
        turn_ids = [r["turn_id"] for r in system.replies(conversation)["replies"]]
        assert len(turn_ids) == len(BOOKING) == len(set(turn_ids)), conversation
    client = SyncRedis.from_url(redis_url, decode_responses=True)
    try:
        bookings = list(client.scan_iter(match=f"{prefix}trial:*booking:*", count=1000))
        owners = [str(client.hget(key, "conversation_id")) for key in bookings]
    finally:
        client.close()
    assert sorted(owners) == sorted(set(owners)), "a conversation was booked twice"
    booked = {e.conversation_id for e in run.exchanges if e.text == "sim" and "AE-" in e.reply}
    assert set(owners) == booked
    return owners
