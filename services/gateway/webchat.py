"""The web chat page (``/chat``): static files served by the gateway, no build step.

The page talks to the public HTTP API v1 like any other client (``POST /v1/messages``, the
replies long-poll, the state and journal routes), so it needs nothing of its own on the server.
Only the three files below are served; the page may load nothing from elsewhere (CSP).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

STATIC = Path(__file__).parent / "static"
ASSETS = {"chat.js": "text/javascript", "chat.css": "text/css"}
HEADERS = {
    "cache-control": "no-cache",
    "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'",
    "x-content-type-options": "nosniff",
}

router = APIRouter(include_in_schema=False)


@router.api_route("/chat", methods=["GET", "HEAD"])
async def chat_page() -> FileResponse:
    return FileResponse(STATIC / "chat.html", media_type="text/html", headers=HEADERS)


@router.api_route("/chat/{name}", methods=["GET", "HEAD"])
async def chat_asset(name: str) -> FileResponse:
    media_type = ASSETS.get(name)
    if media_type is None:
        raise HTTPException(status_code=404)
    return FileResponse(STATIC / name, media_type=media_type, headers=HEADERS)
