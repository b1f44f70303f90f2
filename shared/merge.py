"""The merger's per-turn record, opened by the gateway as the turn starts.

The merger collects a turn's plan and parts in one hash per turn and answers the turn when
they are complete or when its deadline passes. The gateway writes the turn itself into that
hash and registers the deadline in the same round trip in which it publishes the turn, so the
merger needs no delivery of the turn, and a turn whose triage never answers still has a
deadline.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Discriminator, Tag, TypeAdapter
from redis.asyncio.client import Pipeline

from shared.contracts import MergeReady, Part, TurnPlan, now_ms
from shared.keys import Keys
from shared.tracing import MERGE_TRACE


def _kind(value: Any) -> str:
    """A merge input's kind; one without ``kind`` is a part, as that field's default says."""
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if kind in ("plan", "ready") else "part"


# Validated straight from the message's JSON, which is then stored as it came (the publisher
# serialized the model): one parse per input, no re-serialization.
MERGE_INPUT: TypeAdapter[Part | TurnPlan | MergeReady] = TypeAdapter(
    Annotated[
        Annotated[Part, Tag("part")]
        | Annotated[TurnPlan, Tag("plan")]
        | Annotated[MergeReady, Tag("ready")],
        Discriminator(_kind),
    ]
)


def merge_field(item: Part | TurnPlan) -> str:
    """The field of the turn's merge hash an input goes to."""
    return "plan" if isinstance(item, TurnPlan) else f"part:{item.source}"


def queue_open(
    pipe: Pipeline,
    keys: Keys,
    turn_id: str,
    turn_json: str,
    *,
    ttl_s: int,
    deadline_ms: int,
    trace: str | None = None,
) -> None:
    """Queue on ``pipe``: the turn in its merge hash, and its deadline ``deadline_ms`` away;
    with ``trace``, the turn's trace context in the hash too (``shared.tracing.MERGE_TRACE``:
    a partial reply at the deadline continues the turn's trace)."""
    key = keys.merge_turn(turn_id)
    pipe.hsetnx(key, "turn", turn_json)
    if trace:
        pipe.hsetnx(key, MERGE_TRACE, trace)
    pipe.expire(key, ttl_s)
    member = keys.qualified(turn_id)
    pipe.zadd(keys.merge_deadlines(turn_id), {member: now_ms() + deadline_ms}, nx=True)
