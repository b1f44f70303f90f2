"""A local fake of Meta's side: the Graph API's messages endpoint, and webhooks as Meta sends them.

The gateway's real WhatsApp adapter talks to it over HTTP (``WHATSAPP_GRAPH_BASE_URL``), so
tests exercise the adapter's own client, retries and error handling. Every request is recorded.
Answers are scripted per (business number, recipient): each request takes the next step, and an
empty script answers like Meta does on success (a fresh wamid; ``{"success": true}`` for read
receipts). A request with another bearer token than :attr:`FakeGraph.token` gets Meta's
invalid-token error (code 190), as the real API would.

:func:`message_webhook` and :func:`status_webhook` build notifications the way Meta does (the
corpus payloads with our numbers and times), and :func:`sign` signs them with an app secret.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from bench.serve import serve_in_thread

CORPUS = Path("/work/shared/conformance/whatsapp")
INVALID_TOKEN = {
    "error": {
        "message": "Invalid OAuth access token - Cannot parse access token",
        "type": "OAuthException",
        "code": 190,
        "fbtrace_id": "FakeGraphTrace",
    }
}


def sign(body: bytes, secret: str) -> str:
    """The X-Hub-Signature-256 header Meta sends with ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def message_webhook(
    phone_number_id: str,
    sender: str,
    wamid: str,
    timestamp: int,
    *,
    kind: str = "text",
    text: str | None = None,
) -> dict[str, Any]:
    """One inbound message of ``kind`` (text, image, location...) from the corpus' example."""
    name = "cloud_text.json" if kind == "text" else f"cloud_{kind}.json"
    payload = json.loads((CORPUS / name).read_text())
    value = payload["entry"][0]["changes"][0]["value"]
    value["metadata"]["phone_number_id"] = phone_number_id
    value["contacts"][0]["wa_id"] = sender
    message = value["messages"][0]
    message.update({"from": sender, "id": wamid, "timestamp": str(timestamp)})
    if text is not None:
        message["text"] = {"body": text}
    return payload


def status_webhook(
    phone_number_id: str,
    recipient: str,
    wamid: str,
    status: str,
    timestamp: int,
    errors: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One status of a message the business sent (sent, delivered, read, failed)."""
    payload = json.loads((CORPUS / "cloud_status_sent.json").read_text())
    value = payload["entry"][0]["changes"][0]["value"]
    value["metadata"]["phone_number_id"] = phone_number_id
    item = value["statuses"][0]
    item.update(
        {"id": wamid, "status": status, "timestamp": str(timestamp), "recipient_id": recipient}
    )
    if errors:
        item["errors"] = errors
    return payload


@dataclass(frozen=True)
class Step:
    """How the fake answers one request; ``body=None`` means Meta's success body. With
    ``hold``, the answer waits until the test sets that event (a slow Graph API: the request
    is recorded at once, its response comes later)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    hold: threading.Event | None = None


def ok() -> Step:
    return Step()


def answer(body: Any, status: int = 200, **headers: str) -> Step:
    return Step(status=status, body=body, headers=headers)


def corpus(name: str, status: int = 400, **headers: str) -> Step:
    """Answer with a body file of the conformance corpus (an error or a success response)."""
    return answer(json.loads((CORPUS / name).read_text()), status, **headers)


@dataclass(frozen=True)
class GraphRequest:
    version: str
    phone_number_id: str
    authorization: str
    body: dict[str, Any]

    @property
    def recipient(self) -> str | None:
        return self.body.get("to") or self.body.get("recipient")

    @property
    def kind(self) -> str:
        """text, template, interactive... or "read" for a read receipt."""
        return "read" if self.body.get("status") == "read" else str(self.body.get("type"))


class FakeGraph:
    def __init__(self, token: str = "test-token") -> None:
        self.token = token
        self.requests: list[GraphRequest] = []
        self._scripts: dict[tuple[str, str], deque[Step]] = defaultdict(deque)
        self._ids = itertools.count(1)
        self._changed = threading.Condition()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self.app = self._build_app()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def script(self, phone_number_id: str, recipient: str, *steps: Step) -> None:
        """Answer the next requests from this number to this recipient with these steps."""
        with self._changed:
            self._scripts[(phone_number_id, recipient)].extend(steps)

    def to(self, recipient: str, kind: str | None = None) -> list[GraphRequest]:
        """Requests addressed to ``recipient`` (optionally of one kind), in arrival order."""
        with self._changed:
            return [
                r
                for r in self.requests
                if r.recipient == recipient and (kind is None or r.kind == kind)
            ]

    def reads(self, message_id: str) -> list[GraphRequest]:
        with self._changed:
            return [
                r
                for r in self.requests
                if r.kind == "read" and r.body.get("message_id") == message_id
            ]

    def wait_for(
        self, predicate: Callable[[list[GraphRequest]], bool], timeout_s: float = 20
    ) -> list[GraphRequest]:
        """Block until ``predicate(requests)`` holds (no sleeping); the requests so far."""
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(self.requests), timeout_s):
                raise AssertionError(f"fake Graph: condition not met; got {self.requests!r}")
            return list(self.requests)

    def _build_app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/{version}/{phone_number_id}/messages")
        async def messages(version: str, phone_number_id: str, request: Request) -> JSONResponse:
            body = await request.json()
            auth = request.headers.get("authorization", "")
            req = GraphRequest(version, phone_number_id, auth, body)
            with self._changed:
                self.requests.append(req)
                script = self._scripts[(phone_number_id, req.recipient or "")]
                step = script.popleft() if script else None
                self._changed.notify_all()
            if step is not None and step.hold is not None:
                await asyncio.to_thread(step.hold.wait, 30)
            if auth != f"Bearer {self.token}":
                return JSONResponse(INVALID_TOKEN, status_code=401)
            if step is None or step.body is None:
                status = step.status if step else 200
                return JSONResponse(self._success(req), status_code=status)
            return JSONResponse(step.body, status_code=step.status, headers=step.headers)

        return app

    def _success(self, req: GraphRequest) -> dict[str, Any]:
        if req.kind == "read":
            return {"success": True}
        recipient = req.recipient or ""
        return {
            "messaging_product": "whatsapp",
            "contacts": [{"input": recipient, "wa_id": recipient.lstrip("+")}],
            "messages": [{"id": f"wamid.FAKE{next(self._ids):06d}"}],
        }

    def start(self) -> None:
        self._server, self._thread, self._port = serve_in_thread(self.app, "fake Graph server")

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)

    @classmethod
    @contextmanager
    def running(cls, token: str = "test-token") -> Iterator[FakeGraph]:
        fake = cls(token)
        fake.start()
        try:
            yield fake
        finally:
            fake.stop()
