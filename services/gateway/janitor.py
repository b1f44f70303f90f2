"""Stream trimming that never drops work: each stream is cut below the oldest entry some
consumer group still needs (not yet delivered, or delivered and not acknowledged).

``MAXLEN`` on every publish stays as a hard cap for a group that stops reading altogether;
in normal operation this trim keeps streams at the size of the work in flight, so Redis
memory stays flat however many turns go through.
"""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from shared.keys import Keys


def _id(value: str) -> tuple[int, int]:
    ms, _, seq = value.partition("-")
    return int(ms), int(seq or 0)


async def needed_from(redis: Redis, stream: str) -> str | None:
    """The oldest entry id any group of ``stream`` still needs; None when it has no group."""
    groups = await redis.xinfo_groups(stream)
    if not groups:
        return None
    oldest: str | None = None
    for group in groups:
        candidate = group["last-delivered-id"]
        # The pending count may drop to zero between XINFO and XPENDING (a consumer acked
        # meanwhile): then XPENDING has no "min" and the group is treated as caught up.
        summary = await redis.xpending(stream, group["name"]) if group["pending"] else None
        if summary and summary["min"] is not None:
            candidate = min(candidate, summary["min"], key=_id)
        else:
            # Everything up to last-delivered is done: keep from the next id on.
            ms, seq = _id(candidate)
            candidate = f"{ms}-{seq + 1}"
        oldest = candidate if oldest is None else min(oldest, candidate, key=_id)
    return oldest


async def trim_once(redis: Redis, keys: Keys) -> int:
    """Trim every grouped stream below what its groups still need. Returns entries removed."""
    removed = 0
    grouped = {stream for stream, _ in keys.groups()}
    for stream in sorted(grouped):
        keep_from = await needed_from(redis, stream)
        if keep_from is not None:
            removed += await redis.xtrim(stream, minid=keep_from, approximate=False)
    return removed


async def janitor(redis: Redis, keys: Keys, interval_s: float) -> None:
    """Trim every ``interval_s``. A failure ends the loop; it runs supervised (``shared/loops``),
    which logs and restarts it, and MAXLEN still caps the streams meanwhile."""
    while True:
        await trim_once(redis, keys)
        await asyncio.sleep(interval_s)
