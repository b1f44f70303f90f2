"""The console channel: prints replies on the gateway's standard output (development)."""

from __future__ import annotations

import sys

from redis.asyncio import Redis

from services.gateway.channels.base import Delivery
from shared.contracts import Reply
from shared.keys import Keys

SENT_TTL_S = 24 * 3600


class ConsoleChannel:
    name = "console"

    def __init__(self, redis: Redis, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys

    async def deliver(self, reply: Reply) -> Delivery:
        claimed = await self.redis.set(
            self.keys.sent(reply.conversation_id, reply.turn_id), "1", nx=True, ex=SENT_TTL_S
        )
        if not claimed:
            return Delivery("duplicate")
        for bubble in reply.bubbles:
            print(f"[{reply.conversation_id}] bot: {bubble}", file=sys.stdout, flush=True)
        return Delivery("sent")
