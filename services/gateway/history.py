"""A conversation's messages in both directions, for staff: what the customer wrote, what the
bot answered and what a person sent.

One capped stream per conversation (``keys.history``), its entry ids the paging cursor. Customer
messages are added by the ingest script, in the same step as their dedupe claim, so a message is
in the history exactly when it was accepted. Replies are added after their channel took them,
under a claim per turn, so a redelivered reply is written once; a channel that keeps its replies
in Redis (HTTP) writes the line in its own delivery script instead, so the history keeps the
order the person saw.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from redis.asyncio import Redis

from shared import lua
from shared.contracts import Reply, now_ms
from shared.keys import Keys
from shared.lua import Scripts

Author = Literal["customer", "bot", "agent"]
MAX_PAGE = 200


def history_entry(
    message_id: str, author: Author, text: str, at: datetime, agent: str | None = None
) -> str:
    """One history line as stored (JSON)."""
    entry: dict[str, Any] = {
        "message_id": message_id,
        "author": author,
        "text": text,
        "at": at.isoformat(),
    }
    if agent:
        entry["agent"] = agent
    return json.dumps(entry, ensure_ascii=False)


def reply_entry(reply: Reply) -> str:
    """The history line of a reply: the bot's, or a person's (an agent message)."""
    author: Author = "agent" if reply.author == "agent" else "bot"
    return history_entry(reply.turn_id, author, reply.text, reply.created_at, reply.agent)


class History:
    def __init__(
        self, redis: Redis, scripts: Scripts, keys: Keys, kept: int, ttl_s: int, claim_ttl_s: int
    ) -> None:
        self.redis = redis
        self.scripts = scripts
        self.keys = keys
        self.kept = kept
        self.ttl_s = ttl_s
        self.claim_ttl_s = claim_ttl_s

    async def add_reply(self, reply: Reply) -> None:
        """Record a delivered reply (bot or agent) once per turn id."""
        conv = reply.conversation_id
        entry = reply_entry(reply)
        async with self.redis.pipeline(transaction=False) as pipe:
            lua.queue(
                pipe,
                self.scripts.history_once,
                keys=[self.keys.history_claim(conv, reply.turn_id), self.keys.history(conv)],
                args=[entry, self.claim_ttl_s, self.ttl_s, self.kept],
            )
            pipe.zadd(self.keys.conversation_index, {conv: now_ms()}, gt=True)
            await lua.execute(pipe)

    async def page(
        self, conversation_id: str, before: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Up to ``limit`` messages before the cursor ``before`` (a stream id), oldest first;
        the cursor of the next (older) page, or None at the start of the history."""
        key = self.keys.history(conversation_id)
        if before is not None and not any(int(part) for part in before.split("-")):
            return [], None  # nothing comes before the first id ("(0-0" is an error to Redis)
        end = f"({before}" if before else "+"
        rows = await self.redis.xrevrange(key, max=end, min="-", count=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        messages = [{**json.loads(fields["m"]), "id": entry_id} for entry_id, fields in rows]
        messages.reverse()
        cursor = messages[0]["id"] if more and messages else None
        return messages, cursor

    async def since(
        self, polling: Redis, conversation_id: str, after: str, wait_s: float
    ) -> list[dict[str, Any]]:
        """Messages after the stream id ``after``, oldest first, blocking up to ``wait_s`` for
        the first (on ``polling``, a client whose socket outlasts the wait)."""
        block = int(wait_s * 1000) if wait_s > 0 else None
        result = await polling.xread(
            {self.keys.history(conversation_id): after}, count=MAX_PAGE, block=block
        )
        return [
            {**json.loads(fields["m"]), "id": entry_id}
            for _, entries in result or []
            for entry_id, fields in entries
        ]

    async def latest(self, conversation_id: str) -> dict[str, Any] | None:
        rows = await self.redis.xrevrange(self.keys.history(conversation_id), count=1)
        return json.loads(rows[0][1]["m"]) if rows else None
