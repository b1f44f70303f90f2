"""A local fake of Chatwoot's side of an agent bot: the application API the bot calls
(``…/conversations/{id}/messages`` answered like Chatwoot, with the created message and a fresh
id; ``…/toggle_status``), a 401 for another ``api_access_token``; and webhooks as Chatwoot posts
them (the corpus bodies with our account, conversation and texts), signed with
``X-Chatwoot-Signature`` over ``"{timestamp}.{raw body}"``."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.responses import JSONResponse

from tests.support.fake_http import FakeServer, Recorded

CORPUS = Path("/work/shared/conformance/chatwoot")
INCOMING = "message_created_incoming_whatsapp_pending_text_chatsappai_2023.json"
FROM_AGENT = "message_created_outgoing_agent_user_webwidget_gemwallet_2025.json"
STATUS = "conversation_status_changed_open_chatwoot_docs.json"


def sign(body: bytes, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """The headers Chatwoot sends with a signed delivery."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return {"x-chatwoot-timestamp": stamp, "x-chatwoot-signature": f"sha256={digest}"}


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def incoming(
    account: int, conversation: int, message_id: int, text: str, at: datetime, *, status: str
) -> dict[str, Any]:
    """A customer's ``message_created`` in a conversation of ``status`` (pending: the bot's)."""
    body = json.loads((CORPUS / INCOMING).read_text())
    body.update({"id": message_id, "content": text, "created_at": _stamp(at)})
    body["account"]["id"] = account
    body["conversation"].update({"id": conversation, "status": status})
    for message in body["conversation"]["messages"]:
        message.update({"account_id": account, "conversation_id": conversation})
    return body


def from_agent(
    account: int, conversation: int, message_id: int, text: str, at: datetime, agent: str
) -> dict[str, Any]:
    """An agent's ``message_created`` (outgoing, ``sender.type: user``)."""
    body = json.loads((CORPUS / FROM_AGENT).read_text())
    body.update({"id": message_id, "content": text, "created_at": _stamp(at)})
    body["account"]["id"] = account
    body["sender"]["name"] = agent
    body["conversation"]["id"] = conversation
    return body


def status_changed(account: int, conversation: int, status: str) -> dict[str, Any]:
    body = json.loads((CORPUS / STATUS).read_text())
    body.update({"id": conversation, "status": status})
    for message in body["messages"]:
        message.update({"account_id": account, "conversation_id": conversation})
    return body


class FakeChatwoot(FakeServer):
    name = "fake Chatwoot"

    def __init__(self, tokens: set[str]) -> None:
        super().__init__()
        self.tokens = tokens
        self._ids = itertools.count(900_001)

    def authorized(self, request: Recorded) -> JSONResponse | None:
        if request.headers.get("api_access_token") in self.tokens:
            return None
        return JSONResponse({"error": "Invalid Access Token"}, status_code=401)

    def success(self, request: Recorded) -> Any:
        parts = request.path.strip("/").split("/")
        conversation = int(parts[5]) if len(parts) > 5 and parts[5].isdigit() else 0
        if request.path.endswith("/toggle_status"):
            status = (request.body or {}).get("status")
            payload = {"success": True, "current_status": status, "conversation_id": conversation}
            return {"meta": {}, "payload": payload}
        return {
            "id": next(self._ids),
            "content": (request.body or {}).get("content"),
            "conversation_id": conversation,
            "message_type": 1,
            "content_type": "text",
            "content_attributes": {},
            "created_at": int(time.time()),
            "private": False,
            "source_id": None,
            "sender": {"id": 3, "name": "orquestra", "avatar_url": "", "type": "agent_bot"},
        }

    def posts(self, account: int, conversation: int) -> list[Recorded]:
        path = f"/api/v1/accounts/{account}/conversations/{conversation}/messages"
        return self.received(lambda r: r.path == path)

    def toggles(self, account: int, conversation: int) -> list[Recorded]:
        path = f"/api/v1/accounts/{account}/conversations/{conversation}/toggle_status"
        return self.received(lambda r: r.path == path)

    @classmethod
    @contextmanager
    def running(cls, *tokens: str) -> Iterator[FakeChatwoot]:
        fake = cls(set(tokens))
        fake.start()
        try:
            yield fake
        finally:
            fake.stop()
