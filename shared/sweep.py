"""Reading the due members of a sorted set every tenant shares, for a loop that runs once per
process (``Runtime.shared_loops``): the gateway's pending starts, handoff reminders and idle
returns, the merger's deadlines.

Such a set holds ``Keys.qualified`` members of every tenant, and a process may not serve them
all (a tenant its build refused, one a reload is adding or removing, a disabled one whose
entries are still there). A member of a tenant it does not serve is left in place for a
process that does; reading a fixed number from the lowest score would then let enough of them
hide every served member behind them for good, so the reading goes on past them, page after
page, until it has ``want`` served members or the due range ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

from shared.keys import split_tenant


@dataclass(frozen=True)
class Due:
    """One due member: its tenant ('' for the single business), its id and its score."""

    tenant: str
    id: str
    score: float


async def due_members(
    redis: Redis, key: str, until: float, served: Callable[[str], bool], want: int
) -> list[Due]:
    """Up to ``want`` members of ``key`` scored at most ``until`` whose tenant is ``served``,
    lowest score first. Each page starts at the last score read, past the members read at
    that score, so ties and unserved members cannot stop it; one command when nothing is
    due."""
    found: list[Due] = []
    seen: set[str] = set()
    low: float | str = "-inf"
    skip = 0
    while len(found) < want:
        page = cast(
            list[tuple[str, float]],
            await redis.zrangebyscore(key, low, until, start=skip, num=want, withscores=True),
        )
        fresh = [(member, score) for member, score in page if member not in seen]
        for member, score in fresh:
            seen.add(member)
            tenant, ident = split_tenant(member)
            if served(tenant) and len(found) < want:
                found.append(Due(tenant, ident, score))
        if len(page) < want or not fresh:  # the due range ended (or moved under the reading)
            break
        last = page[-1][1]
        skip = sum(1 for _, score in page if score == last) + (skip if low == last else 0)
        low = last
    return found
