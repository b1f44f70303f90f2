"""The console channel: prints replies on the gateway's standard output (development)."""

from __future__ import annotations

import sys

from redis.asyncio import Redis

from services.gateway.channels.base import Delivery, PlainChannel
from services.gateway.channels.http import LIMITS
from services.gateway.channels.spec import ChannelSpec, Parts
from shared.contracts import Reply
from shared.keys import Keys


class ConsoleChannel(PlainChannel):
    name = "console"
    limits = LIMITS  # it stands in for the HTTP channel in development
    conversation_prefix = ""
    writes_history = False

    def __init__(self, redis: Redis, keys: Keys, sent_ttl_s: int) -> None:
        self.redis = redis
        self.keys = keys
        self.sent_ttl_s = sent_ttl_s

    async def deliver(self, reply: Reply) -> Delivery:
        claimed = await self.redis.set(
            self.keys.sent(reply.conversation_id, reply.turn_id), "1", nx=True, ex=self.sent_ttl_s
        )
        if not claimed:
            return Delivery("duplicate")
        for bubble in reply.bubbles:
            print(f"[{reply.conversation_id}] bot: {bubble}", file=sys.stdout, flush=True)
        return Delivery("sent")


def build(parts: Parts) -> ConsoleChannel:
    """The tenant's adapter (``ChannelSpec.build``)."""
    return ConsoleChannel(parts.rt.redis, parts.rt.keys, parts.rt.settings.turn_ttl_s)


SPEC = ChannelSpec(name="console", conversation_prefix="", limits=LIMITS, build=f"{__name__}:build")
