"""``/webhooks/whatsapp``: Meta's verification handshake (GET) and notifications (POST)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from services.gateway.deps import Deps
from services.gateway.whatsapp.metrics import WEBHOOKS
from services.gateway.whatsapp.signature import handshake_challenge, signature_valid

PATH = "/webhooks/whatsapp"
SIGNATURE_HEADER = "x-hub-signature-256"

router = APIRouter(tags=["whatsapp"])


class BodyTooLarge(Exception):
    pass


@router.get(PATH, response_class=PlainTextResponse, responses={403: {"description": "refused"}})
async def verify(
    deps: Deps,
    mode: Annotated[str | None, Query(alias="hub.mode")] = None,
    token: Annotated[str | None, Query(alias="hub.verify_token")] = None,
    challenge: Annotated[str | None, Query(alias="hub.challenge")] = None,
) -> PlainTextResponse:
    """Subscription handshake: echo ``hub.challenge`` when the verify token matches."""
    echo = handshake_challenge(mode, token, challenge, deps.whatsapp.settings.verify_token)
    if echo is None:
        WEBHOOKS.labels("verify_refused").inc()
        return PlainTextResponse("forbidden", status_code=403)
    WEBHOOKS.labels("verified").inc()
    return PlainTextResponse(echo)


@router.post(
    PATH, responses={401: {"description": "bad signature"}, 413: {"description": "body too large"}}
)
async def notify(request: Request, background: BackgroundTasks, deps: Deps) -> JSONResponse:
    """Notifications: signature over the raw bytes, then dedupe and enqueue; 200 quickly."""
    settings = deps.whatsapp.settings
    try:
        raw = await _read_body(request, settings.max_body_bytes)
    except BodyTooLarge:
        WEBHOOKS.labels("too_large").inc()
        return JSONResponse({"detail": "body too large"}, status_code=413)
    if settings.app_secret and not signature_valid(
        raw, settings.app_secret, request.headers.get(SIGNATURE_HEADER)
    ):
        WEBHOOKS.labels("bad_signature").inc()
        return JSONResponse({"detail": "missing or invalid signature"}, status_code=401)
    counts = await deps.whatsapp.receive(raw, deps.turns, deps.inbox, background)
    WEBHOOKS.labels("ok").inc()
    return JSONResponse(counts)


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)
