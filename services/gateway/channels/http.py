"""The generic HTTP channel: replies are kept per conversation and read back over the API.

Replies live in a per-conversation stream, so the API's long-poll is a blocking ``XREAD`` on it
(no polling loop) and the stream id is the cursor. Long-polls use their own connections, whose
socket timeout outlasts the longest wait, so a quiet conversation never looks like a dead Redis.
"""

from __future__ import annotations

import json
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError, TryAgainError

from services.gateway.channels.base import (
    HUMAN_OWNER,
    SUPERSEDED,
    Delivery,
    Limits,
    PlainChannel,
)
from services.gateway.channels.spec import ChannelSpec, Parts
from services.gateway.history import History, reply_entry
from services.gateway.turns import REPLIES_TTL_S, ReleaseCall
from shared import lua
from shared.coalesce import coalescer
from shared.connections import AnyRedis, connect_bounded, connect_cluster
from shared.contracts import Reply, now_ms
from shared.durability import ReplicaAck
from shared.keys import Keys
from shared.lua import Scripts
from shared.settings import Settings

MAX_WAIT_S = 60
# A message of the HTTP channel (the web chat's too) fits in one WhatsApp message, so a client
# built against the API meets the same bound.
LIMITS = Limits(max_text=4096)
NAME = "http"


class HttpChannel(PlainChannel):
    name = NAME
    limits = LIMITS
    conversation_prefix = ""  # any id; the web chat's are "web:..." (see auth.py)
    writes_history = True  # the delivery script writes the reply's history line
    guards_owner = True  # and refuses a bot's reply while a person owns the conversation

    def __init__(
        self,
        redis: Redis,
        scripts: Scripts,
        keys: Keys,
        settings: Settings,
        sent_ttl_s: int,
        max_long_polls: int,
        replies_kept: int,
        history: History,
        ack: ReplicaAck | None = None,
    ) -> None:
        self.redis = redis
        self.ack = ack or ReplicaAck()
        self.history = history
        self.replies_kept = replies_kept
        self.sent_ttl_s = sent_ttl_s
        self.scripts = scripts
        self.keys = keys
        self.polling: AnyRedis
        if settings.redis_mode == "cluster":
            self.polling = connect_cluster(
                settings.redis_url, max_long_polls, socket_timeout=MAX_WAIT_S + 10
            )
        else:
            self.polling = connect_bounded(
                settings.redis_url, max_long_polls, socket_timeout=MAX_WAIT_S + 10
            )

    async def deliver(self, reply: Reply) -> Delivery:
        keys, args = self._delivery(reply)
        if self.ack.on:
            result = await self._deliver_acknowledged(keys, args)
        else:
            result = await self.scripts.deliver_once(keys=keys, args=args)
        return _outcome(result)

    async def deliver_and_release(
        self, reply: Reply, release: ReleaseCall, entry: str, *before: str
    ) -> tuple[Delivery, list[Any] | None]:
        """Deliver a reply to a turn and release the turn in one script (``DELIVER_RELEASE``):
        one round trip less per turn. ``entry``: the reply's journal entry, whose ``detail``
        the script sets to the reply's stream id, after ``before`` (its composition); both
        written only when the reply is delivered. The release's answer, or None when the reply
        was not delivered (a person owns the conversation, or another turn answers its
        messages) and the turn not released."""
        keys, args = self._delivery(reply)
        result = await coalescer.call(
            self.redis,
            self.scripts.deliver_release,
            [*release.keys, *keys[:3]],
            [*release.args, *args[:8], entry, *before],
        )
        delivery = _outcome(result[:2])
        return delivery, (list(result[2:]) if len(result) > 2 else None)

    def _delivery(self, reply: Reply) -> tuple[list[str], list[Any]]:
        """``DELIVER_ONCE``'s keys and arguments for ``reply``."""
        payload: dict[str, Any] = {
            "turn_id": reply.turn_id,
            "text": reply.text,
            "bubbles": reply.bubbles,
            "created_at": reply.created_at.isoformat(),
            "author": reply.author,
        }
        if reply.agent:
            payload["agent"] = reply.agent
        keys = [
            self.keys.sent(reply.conversation_id, reply.turn_id),
            self.keys.replies(reply.conversation_id),
            self.keys.history(reply.conversation_id),
        ]
        if reply.author != "agent":  # a staff member's message goes whoever owns it
            keys.append(self.keys.state(reply.conversation_id))
            if not reply.scheduled:  # a reply to a turn: not one another turn took over
                keys.append(self.keys.lease(reply.conversation_id))
        args = [
            json.dumps(payload, ensure_ascii=False),
            self.sent_ttl_s,
            REPLIES_TTL_S,
            self.replies_kept,
            reply_entry(reply),
            self.history.ttl_s,
            self.history.kept,
            now_ms(),
            *([reply.turn_id] if len(keys) == 5 else []),
        ]
        return keys, args

    async def _deliver_acknowledged(self, keys: list[str], args: list[Any]) -> list[str]:
        """``DELIVER_ONCE`` and ``WAIT`` on one connection: the turn is released only once a
        replica holds its reply and claim, so a failover cannot lose a delivered reply whose
        release then answers the turn a second time. Not confirmed: ``NotReplicated``, and the
        redelivery (the claim makes it a duplicate) waits again."""
        async with self.redis.pipeline(transaction=False) as pipe:
            lua.queue(pipe, self.scripts.deliver_once, keys=keys, args=args)
            waits = self.ack.queue(pipe, self.redis, keys[0])
            done = await self.ack.execute(pipe)
        await self.ack.check(self.redis, waits, done[1:], f"reply claim {keys[0]}")
        return list(done[0])

    async def read(
        self, conversation_id: str, after: str, wait_s: float
    ) -> tuple[list[dict[str, Any]], str]:
        """Replies after ``after`` (a stream id), blocking up to ``wait_s`` for the first one."""
        key = self.keys.replies(conversation_id)
        block = int(min(wait_s, MAX_WAIT_S) * 1000) if wait_s > 0 else None
        try:
            result = await self.polling.xread({key: after}, count=100, block=block)
        except ResponseError as error:
            # A master demoted to replica (a failover) unblocks its blocked clients with
            # "UNBLOCKED ...": the replies are fine, only this wait is cut short; retry.
            if not str(error).startswith("UNBLOCKED"):
                raise
            raise TryAgainError(str(error)) from error
        replies: list[dict[str, Any]] = []
        cursor = after
        for _, entries in result or []:
            for entry_id, fields in entries:
                replies.append(json.loads(fields["reply"]))
                cursor = entry_id
        return replies, cursor

    async def aclose(self) -> None:
        await self.polling.aclose()


def _outcome(result: list[Any]) -> Delivery:
    """A delivery script's answer as a ``Delivery``."""
    if result[0] == "human":
        return Delivery(HUMAN_OWNER)
    if result[0] == "superseded":
        return Delivery(SUPERSEDED)
    return Delivery(result[0], result[1] if len(result) > 1 else "")


def build(parts: Parts) -> HttpChannel:
    """The tenant's adapter (``ChannelSpec.build``)."""
    rt = parts.rt
    settings = rt.settings
    return HttpChannel(
        rt.redis,
        rt.scripts,
        rt.keys,
        settings,
        settings.turn_ttl_s,
        settings.max_long_polls,
        settings.replies_kept,
        parts.history,
        parts.ack,
    )


# Its route, ``POST /v1/messages``, is the API's (``api.py``): it speaks as the person.
SPEC = ChannelSpec(name=NAME, conversation_prefix="", limits=LIMITS, build=f"{__name__}:build")
