"""A thin synchronous client of the gateway's HTTP API v1, shared by the developer commands.

``orquestra chat``, ``orquestra test`` and ``orquestra explain`` talk to a running system only
through this API (the same contract any other client uses), so they work against a local
``orquestra up``, a Docker Compose stack or a deployed gateway alike.
"""

from __future__ import annotations

import os
import uuid
from datetime import datetime
from typing import Any

import httpx

from shared.tenants import TENANT_HEADER

DEFAULT_URL = "http://127.0.0.1:8000"
# The API caps a long-poll at 60 s; the HTTP timeout must outlast the longest wait we ask for.
MAX_WAIT_S = 60.0


class ApiError(RuntimeError):
    """The gateway answered with an error (the message says the status and its reason)."""


class NotFound(ApiError):
    """404: e.g. a conversation nothing is stored about (never seen, or erased)."""


class Client:
    """One gateway, with the bearer token of every request (``POST /v1/messages`` included).

    ``ORQ_ADMIN_TOKEN`` by default: the state and journal routes need it and it opens the
    HTTP channel too; else ``ORQ_API_TOKEN``, which is enough to post and read replies. With
    several tenants, ``ORQ_TENANT`` names the one an operator's token speaks for.
    """

    def __init__(self, base_url: str = DEFAULT_URL, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        if token is None:
            token = os.environ.get("ORQ_ADMIN_TOKEN") or os.environ.get("ORQ_API_TOKEN")
        headers = {"authorization": f"Bearer {token}"} if token else {}
        if tenant := os.environ.get("ORQ_TENANT"):
            headers[TENANT_HEADER] = tenant
        self.http = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=MAX_WAIT_S + 10, trust_env=False
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request; transport failures and error statuses become ``ApiError``."""
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ApiError(f"cannot reach the gateway at {self.base_url}: {exc}") from exc
        if response.status_code >= 400:
            request = response.request
            error = NotFound if response.status_code == 404 else ApiError
            raise error(
                f"{request.method} {request.url.path}: {response.status_code} {response.text[:500]}"
            )
        return response.json()

    def health(self) -> tuple[int, dict[str, Any]] | None:
        """``/healthz``'s status and body, or None when the gateway does not answer."""
        try:
            response = self.http.get("/healthz", timeout=2)
            return response.status_code, response.json()
        except (httpx.HTTPError, ValueError):
            return None

    def healthy(self) -> bool:
        health = self.health()
        return health is not None and health[0] == 200

    def post(
        self,
        conversation_id: str,
        text: str,
        *,
        sent_at: datetime | None = None,
        origin: str | None = None,
        campaign_mode: str | None = None,
        message_id: str | None = None,
    ) -> tuple[str, bool]:
        """Send one message; returns its message id and whether the gateway saw it before."""
        message_id = message_id or uuid.uuid4().hex
        body: dict[str, Any] = {
            "conversation_id": conversation_id,
            "text": text,
            "message_id": message_id,
        }
        if sent_at is not None:
            body["sent_at"] = sent_at.isoformat()
        if origin is not None:
            body["origin"] = origin
        if campaign_mode is not None:
            body["campaign_mode"] = campaign_mode
        data = self._call("POST", "/v1/messages", json=body)
        return message_id, bool(data.get("duplicate"))

    def replies(
        self, conversation_id: str, after: str = "0-0", wait_s: float = 0
    ) -> tuple[list[dict[str, Any]], str]:
        """Replies after the cursor ``after``, long-polling up to ``wait_s`` for the first."""
        params = {"after": after, "wait": min(max(wait_s, 0.0), MAX_WAIT_S)}
        path = f"/v1/conversations/{conversation_id}/replies"
        data = self._call("GET", path, params=params)
        return list(data["replies"]), str(data["cursor"])

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        return dict(self._call("GET", f"/v1/conversations/{conversation_id}"))

    def journal(self, conversation_id: str) -> list[dict[str, Any]]:
        data = self._call("GET", f"/v1/conversations/{conversation_id}/journal")
        return list(data["entries"])

    def funnel(self, first: str | None = None, last: str | None = None) -> list[dict[str, Any]]:
        params = {k: v for k, v in (("from", first), ("to", last)) if v}
        return list(self._call("GET", "/v1/funnel", params=params)["days"])

    def bookings(self, start: str, end: str) -> list[dict[str, Any]]:
        """The trial classes from ``start`` to ``end`` (inclusive) with their bookings."""
        data = self._call("GET", "/v1/bookings", params={"from": start, "to": end})
        return list(data["classes"])

    def erase(self, conversation_id: str) -> dict[str, Any]:
        """Erase a conversation's data and anonymize its bookings (LGPD)."""
        return dict(self._call("DELETE", f"/v1/conversations/{conversation_id}"))
