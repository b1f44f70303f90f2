"""How a simulated person talks to the system over the HTTP API v1.

``POST /v1/messages`` with the scripted ``sent_at`` (the business clock), then the reply
long-poll ``GET /v1/conversations/{id}/replies?after=<cursor>&wait=…``: the latency of a turn
runs from just before the POST to the moment the reply is read, so it includes accepting the
message, the burst window, every hop and the delivery to the HTTP channel.
"""

from __future__ import annotations

import json
import uuid
from urllib.parse import urlsplit

from bench.conversations import Message
from bench.http import Connection
from bench.load import Reply

LONG_POLL_S = 30


class HttpSession:
    def __init__(self, base_url: str, token: str | None = None) -> None:
        parts = urlsplit(base_url)
        headers = {"Authorization": f"Bearer {token}"} if token else None
        self.connection = Connection(
            parts.hostname or "127.0.0.1", parts.port or 80, headers=headers
        )
        self.conversation = ""
        self.cursor = "0-0"

    async def say(self, conversation_id: str, message: Message) -> Reply:
        if conversation_id != self.conversation:
            self.conversation, self.cursor = conversation_id, "0-0"
        body = {
            "conversation_id": conversation_id,
            "text": message.text,
            "sent_at": message.sent_at.isoformat(),
            "message_id": uuid.uuid4().hex,
        }
        status, raw = await self.connection.request(
            "POST", "/v1/messages", json.dumps(body).encode()
        )
        if status != 202:
            raise RuntimeError(f"POST /v1/messages answered {status}: {raw[:200]!r}")
        path = f"/v1/conversations/{conversation_id}/replies?wait={LONG_POLL_S}&after="
        while True:
            status, raw = await self.connection.request("GET", path + self.cursor)
            if status != 200:
                raise RuntimeError(f"GET replies answered {status}: {raw[:200]!r}")
            data = json.loads(raw)
            self.cursor = data["cursor"]
            if data["replies"]:
                first = data["replies"][0]
                return Reply(first["turn_id"], first["text"])

    async def close(self) -> None:
        await self.connection.close()
