"""The Graph API over one pooled ``httpx.AsyncClient`` (one per gateway process)."""

from __future__ import annotations

from typing import Any

import httpx

from services.gateway.whatsapp.errors import GraphError, graph_error
from services.gateway.whatsapp.settings import WhatsAppSettings


class GraphClient:
    def __init__(self, settings: WhatsAppSettings) -> None:
        self.settings = settings
        self.version = settings.api_version.strip("/")
        self.http = httpx.AsyncClient(
            base_url=settings.graph_base_url.rstrip("/"),
            timeout=httpx.Timeout(settings.timeout_s, connect=min(5.0, settings.timeout_s)),
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
            headers={"Authorization": f"Bearer {settings.access_token or ''}"},
        )

    async def post_message(self, phone_number_id: str, payload: dict[str, Any]) -> dict[str, Any]:
        """POST one message (or read receipt); the response body, or GraphError.

        A network failure is a GraphError with HTTP status 0 (transient): the request may or may
        not have reached Meta, and the caller's claim keys decide whether that is retried.
        """
        try:
            response = await self.http.post(
                f"/{self.version}/{phone_number_id}/messages", json=payload
            )
        except httpx.HTTPError as exc:
            message = f"{type(exc).__name__}: {exc}"
            raise GraphError(code=None, message=message, http_status=0) from exc
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        if response.is_success and isinstance(body, dict):
            return body
        raise graph_error(response.status_code, body, response.headers.get("retry-after"))

    async def aclose(self) -> None:
        await self.http.aclose()
