"""The gateway's pages: the web chat (``/chat``), the staff inbox (``/inbox``) and the week's
trial classes (``/bookings``), static files with no build step.

Each page talks to the public HTTP API v1 like any other client. The one route of its own mints
a web chat session (a ``web:`` conversation and the token that may use it, see ``auth.py``), so
a public chat page needs no shared token. With several tenants the page names its business
(``/chat?tenant=<id>``), and the session is that tenant's. Only the files listed below are
served; a page may load nothing from elsewhere (CSP).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse
from pydantic import BaseModel

from services.gateway import auth
from shared.deps import PublicDepends

STATIC = Path(__file__).parent / "static"
ASSETS = {
    "chat": {"chat.js": "text/javascript", "chat.css": "text/css"},
    "inbox": {"inbox.js": "text/javascript", "inbox.css": "text/css"},
    "bookings": {"bookings.js": "text/javascript", "bookings.css": "text/css"},
}
HEADERS = {
    "cache-control": "no-cache",
    "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'",
    "x-content-type-options": "nosniff",
}

router = APIRouter(include_in_schema=False)
sessions = APIRouter()


class Session(BaseModel):
    conversation_id: str
    token: str


class Offer(BaseModel):
    sessions: bool


@sessions.get("/v1/webchat", response_model=Offer)
async def offer(deps: PublicDepends) -> Offer:
    """Whether sessions are on, so the page asks for one only then (no failed request)."""
    return Offer(sessions=auth.sessions_refusal(deps.settings) is None)


@sessions.post("/v1/webchat/sessions", status_code=201, response_model=Session)
async def new_session(deps: PublicDepends) -> Session:
    """A fresh ``web:`` conversation and its bearer token (404 while sessions are off); with
    several tenants, of the tenant the page names (``?tenant=<id>``)."""
    settings = deps.settings
    auth.refuse(auth.sessions_refusal(settings))
    conversation_id = auth.new_web_conversation()
    secret = str(settings.webchat_secret)
    return Session(
        conversation_id=conversation_id,
        token=auth.webchat_token(secret, conversation_id, deps.keys.tenant),
    )


@router.api_route("/chat", methods=["GET", "HEAD"])
async def chat_page() -> FileResponse:
    return FileResponse(STATIC / "chat.html", media_type="text/html", headers=HEADERS)


@router.api_route("/inbox", methods=["GET", "HEAD"])
async def inbox_page() -> FileResponse:
    return FileResponse(STATIC / "inbox.html", media_type="text/html", headers=HEADERS)


@router.api_route("/bookings", methods=["GET", "HEAD"])
async def bookings_page() -> FileResponse:
    return FileResponse(STATIC / "bookings.html", media_type="text/html", headers=HEADERS)


def _asset(page: str, name: str) -> FileResponse:
    media_type = ASSETS[page].get(name)
    if media_type is None:
        raise HTTPException(status_code=404)
    return FileResponse(STATIC / name, media_type=media_type, headers=HEADERS)


@router.api_route("/chat/{name}", methods=["GET", "HEAD"])
async def chat_asset(name: str) -> FileResponse:
    return _asset("chat", name)


@router.api_route("/inbox/{name}", methods=["GET", "HEAD"])
async def inbox_asset(name: str) -> FileResponse:
    return _asset("inbox", name)


@router.api_route("/bookings/{name}", methods=["GET", "HEAD"])
async def bookings_asset(name: str) -> FileResponse:
    return _asset("bookings", name)
