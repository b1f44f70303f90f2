"""Egress: hand each reply to its channel, then release the conversation's turn.

What the outbound stream brings is a composed reply (the merger's, a scheduled message, a staff
member's), or, on one Redis, a turn that a producer's commit completed (``MergeReady``: the
turn's merge hash), which is composed here with the merger's own rules (``shared.merge.reply_of``)
so that a complete turn goes from its last producer to the channel without a merger hop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from structlog.typing import FilteringBoundLogger

from services.gateway.channels.base import (
    HUMAN_OWNER,
    SUPERSEDED,
    Channel,
    Delivery,
    ReleasesTurns,
)
from services.gateway.handoff import Handoff
from services.gateway.history import History
from services.gateway.turns import TurnKeeper
from shared import tracing
from shared.compose import MergerConfig
from shared.contracts import MergeReady, Reply
from shared.merge import OUTBOUND, merger_config, reply_of
from shared.metrics import REPLIES
from shared.pack import Pack
from shared.state import journal_entry


@dataclass
class Composer:
    """Composes a completed turn's reply from its merge hash, with the tenant pack's merger
    rules and fallback lines."""

    pack: Pack
    config: MergerConfig = field(init=False)

    def __post_init__(self) -> None:
        self.config = merger_config(self.pack)

    def reply(self, ready: MergeReady) -> tuple[Reply, list[str]]:
        """The reply and the journal entries that end its turn: those its inputs carried, then
        its ``merge.complete``."""
        merged = reply_of(ready.fields, self.config, self.pack, "gateway")
        return merged.reply, [*merged.carried, merged.entry]


class Egress:
    def __init__(
        self,
        channels: Mapping[str, Channel],
        turns: TurnKeeper,
        handoff: Handoff,
        history: History,
        log: FilteringBoundLogger,
        composer: Composer,
    ) -> None:
        self.channels = channels
        self.composer = composer
        self.turns = turns
        self.handoff = handoff
        self.history = history
        self.log = log

    async def handle(self, body: bytes) -> None:
        item = OUTBOUND.validate_json(body)
        merged: list[str] = []
        if isinstance(item, MergeReady):
            reply, merged = self.composer.reply(item)
        else:
            reply = item
        channel = self.channels.get(reply.channel)
        if channel is None:
            raise ValueError(f"no channel adapter named {reply.channel!r}")
        if reply.author == "agent":
            await self._agent_message(channel, reply)
            return
        if not channel.guards_owner:
            owner, erased = await self._owner_and_erased(reply)
            if erased:
                # The conversation was erased while this turn was in flight: nothing of it is
                # sent or written back (not even the journal; ``privacy.py``).
                self.log.info("reply of an erased conversation not sent", turn_id=reply.turn_id)
                await self._done(reply)
                return
            if owner == "human":
                await self._dropped(reply, *merged)
                return
        # A channel whose delivery script releases the turn too: one step for both.
        releaser = channel if isinstance(channel, ReleasesTurns) and not reply.scheduled else None
        call = self.turns.release_call(reply.conversation_id, reply.turn_id) if releaser else None
        released: list[Any] | None = None
        with tracing.span("reply deliver", channel=reply.channel, turn_id=reply.turn_id) as span:
            if releaser is not None and call is not None:
                entry, *before = self.turns.stamp(_delivered(reply, Delivery("sent")), *merged)
                delivery, released = await releaser.deliver_and_release(reply, call, entry, *before)
            else:
                delivery = await channel.deliver(reply)
            if span is not None:
                span.set_attribute("orquestra.delivery.status", delivery.status)
        if delivery.status == HUMAN_OWNER:
            await self._dropped(reply, *merged)
            return
        if delivery.status == SUPERSEDED:
            await self._dropped(reply, *merged, reason=SUPERSEDED)
            return
        REPLIES.labels(reply.channel, delivery.status, self.turns.keys.tenant).inc()
        await self._record(channel, reply, delivery)
        self.log.info(
            "reply delivered",
            conversation_id=reply.conversation_id,
            turn_id=reply.turn_id,
            status=delivery.status,
        )
        if call is not None and released is not None:  # journaled and released by its script
            await self.turns.released(call, released)
            return
        journal: list[str] = []
        if delivery.status != "duplicate":  # a redelivery journals neither entry again
            journal += [*merged, _delivered(reply, delivery)]
        await self._done(reply, *journal)

    async def _owner_and_erased(self, reply: Reply) -> tuple[str, bool]:
        """Who owns the conversation, and whether it was erased with this turn in flight: one
        round trip. (The HTTP channel checks both in its delivery script: its delivery of an
        erased turn was claimed by the erase.)"""
        keys = self.turns.keys
        async with self.turns.redis.pipeline(transaction=False) as pipe:
            pipe.hget(keys.state(reply.conversation_id), "meta")
            pipe.sismember(keys.erased(reply.conversation_id), reply.turn_id)
            meta, erased = await pipe.execute()
        return self.handoff.owner_in(meta), bool(erased)

    async def _dropped(self, reply: Reply, *journal: str, reason: str = HUMAN_OWNER) -> None:
        """A person took over while this turn was in flight (or another turn took up its
        messages again and answers them): the reply is not sent, the turn is closed.
        ``journal``: entries written before the drop's (the reply's composition)."""
        label = "dropped_human" if reason == HUMAN_OWNER else f"dropped_{reason}"
        REPLIES.labels(reply.channel, label, self.turns.keys.tenant).inc()
        dropped = journal_entry("gateway", reply.turn_id, "reply.dropped", reason=reason)
        await self._done(reply, *journal, dropped)

    async def _record(self, channel: Channel, reply: Reply, delivery: Delivery) -> None:
        """The reply's history line, unless the channel wrote it as it delivered; a redelivered
        reply finds the line's claim taken and writes nothing twice."""
        if delivery.status != "failed" and not channel.writes_history:
            await self.history.add_reply(reply)

    async def _done(self, reply: Reply, *journal: str) -> None:
        """Release the turn's lease; a scheduled message answers no turn and holds none."""
        if reply.scheduled:
            if journal:
                await self.turns.store.append_journal(reply.conversation_id, *journal)
            return
        await self.turns.release(reply.conversation_id, reply.turn_id, *journal, acknowledges=True)

    async def _agent_message(self, channel: Channel, reply: Reply) -> None:
        """A staff member's message: sent whoever owns the conversation, once per message id
        (the channel's own claim), and it answers no turn, so no lease is released."""
        delivery = await channel.deliver(reply)
        REPLIES.labels(reply.channel, f"agent_{delivery.status}", self.turns.keys.tenant).inc()
        await self._record(channel, reply, delivery)
        if delivery.status != "duplicate":
            await self.turns.store.append_journal(
                reply.conversation_id,
                journal_entry(
                    "gateway",
                    reply.turn_id,
                    "agent.delivered",
                    agent=reply.agent,
                    channel=reply.channel,
                    status=delivery.status,
                    detail=delivery.detail,
                ),
            )
        self.log.info(
            "agent message delivered",
            conversation_id=reply.conversation_id,
            message_id=reply.turn_id,
            agent=reply.agent,
            status=delivery.status,
        )


def _delivered(reply: Reply, delivery: Delivery) -> str:
    """The reply's ``reply.delivered`` journal entry."""
    return journal_entry(
        "gateway",
        reply.turn_id,
        "reply.delivered",
        channel=reply.channel,
        status=delivery.status,
        detail=delivery.detail,
        bubbles=len(reply.bubbles),
        partial=reply.partial,
    )
