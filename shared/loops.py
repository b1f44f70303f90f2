"""Background loops that survive their own failures (heartbeat, sweeper, janitor, deadlines).

A loop's body may raise at any time: a Redis outage longer than the client's own reconnect
retries (about 9 s) surfaces as ``ConnectionError`` out of whatever command was running. An
unsupervised task would end there, silently, and the process would carry on without its
heartbeat or its sweeper. :func:`supervised` runs the loop again instead: it logs the failure,
waits a bounded, jittered exponential backoff (so a dead Redis is not hammered by every replica
in step) and restarts it. Cancellation is not a failure: it ends the supervisor at once.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable

from structlog.typing import FilteringBoundLogger

BASE_S = 0.5
CAP_S = 5.0


def backoff_s(failures: int, *, base_s: float, cap_s: float, jitter: float) -> float:
    """The wait after ``failures`` consecutive failures (>= 1): base * 2^(n-1), capped, then
    scaled into [50%, 100%] by ``jitter`` in [0, 1)."""
    full = min(cap_s, base_s * 2.0 ** (failures - 1))
    return full * (0.5 + jitter / 2)


async def supervised(
    name: str,
    loop: Callable[[], Awaitable[None]],
    log: FilteringBoundLogger,
    *,
    base_s: float = BASE_S,
    cap_s: float = CAP_S,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    jitter: Callable[[], float] = random.random,
) -> None:
    """Run ``loop`` until it returns or the task is cancelled, restarting it after a failure.

    The failure count (hence the backoff) starts again once a run lasted longer than ``cap_s``:
    a loop that worked for a while and then hit a blip comes back quickly.
    """
    failures = 0
    while True:
        started = time.monotonic()
        try:
            await loop()
            return
        except Exception as exc:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # A cancel swallowed inside a client's timeout came out as another error:
                # the task is being stopped, so stop.
                raise asyncio.CancelledError from exc
            failures = 1 if time.monotonic() - started > cap_s else failures + 1
            delay = backoff_s(failures, base_s=base_s, cap_s=cap_s, jitter=jitter())
            log.error(
                "background loop failed; restarting",
                loop=name,
                error=repr(exc),
                failures=failures,
                retry_in_s=round(delay, 3),
            )
        await sleep(delay)
