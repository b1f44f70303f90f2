"""The closed-loop load: C simulated people, each waiting for the reply before writing again.

The same driver runs against the system over HTTP and against the in-process pipeline
(baseline A), so both see the same conversations in the same way. A person who finishes a
conversation starts the next one from the shared script iterator; an optional pacer caps the
total rate (for "half the maximum load"). When the phase ends nobody starts a new turn, and the
turns in flight are awaited, so the next phase finds every conversation idle.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from bench.conversations import Conversation, Message, reply_outcome
from bench.stats import PhaseSummary, TurnSample, summarize


@dataclass(frozen=True)
class Reply:
    turn_id: str
    text: str


class Session(Protocol):
    """One simulated person's line to the system: say a message, get the reply to it."""

    async def say(self, conversation_id: str, message: Message) -> Reply: ...

    async def close(self) -> None: ...


SessionFactory = Callable[[], Awaitable[Session]]


@dataclass(frozen=True)
class LoadPlan:
    users: int
    seconds: float
    warmup_s: float = 1.0
    rate: float | None = None  # turns per second across all users; None = as fast as replies come
    turn_timeout_s: float = 30.0


class Pacer:
    """Hands out evenly spaced start times, so the users together send ``rate`` turns/s."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self.next = time.perf_counter()

    async def wait(self) -> None:
        now = time.perf_counter()
        slot = max(self.next, now)
        self.next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


async def run_load(
    connect: SessionFactory, plan: LoadPlan, conversations: Iterator[Conversation]
) -> tuple[PhaseSummary, list[TurnSample]]:
    samples: list[TurnSample] = []
    failures = 0
    pacer = Pacer(plan.rate) if plan.rate else None
    started = time.perf_counter()
    stop_at = started + plan.seconds

    async def person() -> None:
        nonlocal failures
        session = await connect()
        try:
            while time.perf_counter() < stop_at:
                talk = next(conversations)
                for message in talk.messages:
                    if pacer:
                        await pacer.wait()
                    if time.perf_counter() >= stop_at:
                        return
                    t0 = time.perf_counter()
                    try:
                        async with asyncio.timeout(plan.turn_timeout_s):
                            reply = await session.say(talk.conversation_id, message)
                    except Exception as exc:  # counted and reported; this person starts over
                        if not failures:
                            print(f"bench: a turn failed: {exc!r}", file=sys.stderr, flush=True)
                        failures += 1
                        break
                    samples.append(
                        TurnSample(
                            started=t0,
                            latency=time.perf_counter() - t0,
                            outcome=reply_outcome(reply.text),
                            conversation_id=talk.conversation_id,
                            turn_id=reply.turn_id,
                        )
                    )
        finally:
            await session.close()

    await asyncio.gather(*(person() for _ in range(plan.users)))
    begin = started + min(plan.warmup_s, plan.seconds / 2)
    summary = summarize(samples, users=plan.users, begin=begin, end=stop_at, errors=failures)
    return summary, samples
