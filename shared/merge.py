"""The merger's per-turn record, opened by the gateway as the turn starts, and the reply it
turns into.

A turn's plan and parts are collected in one hash per turn, and the turn is answered when they
are complete or when its deadline passes. The gateway writes the turn itself into that hash and
registers the deadline in the same round trip in which it publishes the turn, so the merger
needs no delivery of the turn, and a turn whose triage never answers still has a deadline.

``reply_of`` turns a complete (or expired) hash into the reply: the merger calls it for what it
completes or expires; on one Redis the gateway calls it for a turn a producer's commit
completed (``MergeReady`` on the outbound stream), so such a turn needs no merger hop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Discriminator, Tag, TypeAdapter
from redis.asyncio.client import Pipeline

from shared.compose import Composition, MergerConfig, compose
from shared.contracts import MergeReady, Outbound, Part, Reply, Turn, TurnPlan, now_ms
from shared.keys import Keys
from shared.pack import Pack
from shared.state import journal_entry
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


# The outbound stream's messages (``contracts.Outbound``), validated from their JSON.
OUTBOUND: TypeAdapter[Reply | MergeReady] = TypeAdapter(Outbound)


def merger_config(pack: Pack) -> MergerConfig:
    """The pack's merger section (how parts are ordered and split), or the defaults."""
    return pack.section("merger", MergerConfig) if pack.has("merger") else MergerConfig()


@dataclass(frozen=True)
class Merged:
    """A turn's reply, and the journal entry that says which parts made it."""

    reply: Reply
    composition: Composition
    entry: str
    # The journal entries its inputs carried (``Part.journal``: their commits left them for the
    # reply to write), the plan's first: whoever ends the turn writes them before ``entry``.
    carried: list[str]


def reply_of(fields: dict[str, str], config: MergerConfig, pack: Pack, service: str) -> Merged:
    """The reply a turn's merge hash (``fields``) composes to: complete, or partial when the
    deadline expired it (``_done``), a part that never came replaced by its fallback line;
    ``service`` names who composed it in the journal entry."""
    partial = fields.get("_done") == "expired"
    turn = Turn.model_validate_json(fields["turn"])
    plan = TurnPlan.model_validate_json(fields["plan"]) if "plan" in fields else None
    parts = {
        k.split(":", 1)[1]: Part.model_validate_json(v)
        for k, v in fields.items()
        if k.startswith("part:")
    }

    def fallback(source: str) -> str:
        key = f"{config.fallback_text_key}_{source}"
        if key not in pack.sections.get("texts", {}):
            key = config.fallback_text_key
        return pack.text(key, seed=turn.turn_id)

    composition = compose(plan, parts, config, fallback)
    reply = Reply(
        turn_id=turn.turn_id,
        conversation_id=turn.conversation_id,
        channel=turn.channel,
        to=turn.contact,
        text=composition.text,
        bubbles=composition.bubbles,
        partial=partial,
    )
    entry = journal_entry(
        service,
        turn.turn_id,
        "merge.partial" if partial else "merge.complete",
        sources=composition.sources,
        missing=composition.missing,
        dropped=composition.dropped,
        bubbles=len(composition.bubbles),
    )
    carried = list(plan.journal) if plan else []
    carried += [line for part in parts.values() for line in part.journal]
    return Merged(reply, composition, entry, carried)


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
