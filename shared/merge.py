"""The merger's per-turn record, opened by the gateway as the turn starts.

The merger collects a turn's plan and parts in one hash per turn and answers the turn when
they are complete or when its deadline passes. The gateway writes the turn itself into that
hash and registers the deadline in the same round trip in which it publishes the turn, so the
merger needs no delivery of the turn, and a turn whose triage never answers still has a
deadline.
"""

from __future__ import annotations

from redis.asyncio.client import Pipeline

from shared.contracts import now_ms
from shared.keys import Keys


def queue_open(
    pipe: Pipeline, keys: Keys, turn_id: str, turn_json: str, *, ttl_s: int, deadline_ms: int
) -> None:
    """Queue on ``pipe``: the turn in its merge hash, and its deadline ``deadline_ms`` away."""
    key = keys.merge_turn(turn_id)
    pipe.hsetnx(key, "turn", turn_json)
    pipe.expire(key, ttl_s)
    member = keys.qualified(turn_id)
    pipe.zadd(keys.merge_deadlines(turn_id), {member: now_ms() + deadline_ms}, nx=True)
