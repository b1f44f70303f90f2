"""``/webhooks/whatsapp``: Meta's verification handshake (GET) and notifications (POST)."""

from __future__ import annotations

from typing import Annotated, cast

from fastapi import APIRouter, BackgroundTasks, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from services.gateway.channels.webhooks import BodyTooLarge, read_body
from services.gateway.deps import GatewayDeps
from services.gateway.whatsapp.gateway import WhatsApp
from services.gateway.whatsapp.metrics import WEBHOOKS
from services.gateway.whatsapp.parse import CHANNEL, business_numbers, decode
from services.gateway.whatsapp.signature import handshake_challenge, signature_valid
from shared.deps import DeploymentDepends
from shared.logs import get_logger

PATH = "/webhooks/whatsapp"
SIGNATURE_HEADER = "x-hub-signature-256"

router = APIRouter(tags=["whatsapp"])
log = get_logger(__name__)


def adapter(deps: object) -> WhatsApp:
    """The tenant's WhatsApp adapter, among its channels."""
    return cast(WhatsApp, cast(GatewayDeps, deps).channels[CHANNEL])


@router.get(PATH, response_class=PlainTextResponse, responses={403: {"description": "refused"}})
async def verify(
    deployment: DeploymentDepends,
    mode: Annotated[str | None, Query(alias="hub.mode")] = None,
    token: Annotated[str | None, Query(alias="hub.verify_token")] = None,
    challenge: Annotated[str | None, Query(alias="hub.challenge")] = None,
) -> PlainTextResponse:
    """Subscription handshake: echo ``hub.challenge`` when the verify token matches."""
    verify_token = adapter(deployment.any()).settings.verify_token
    echo = handshake_challenge(mode, token, challenge, verify_token)
    if echo is None:
        WEBHOOKS.labels("verify_refused", "").inc()
        return PlainTextResponse("forbidden", status_code=403)
    WEBHOOKS.labels("verified", "").inc()
    return PlainTextResponse(echo)


@router.post(
    PATH, responses={401: {"description": "bad signature"}, 413: {"description": "body too large"}}
)
async def notify(
    request: Request, background: BackgroundTasks, deployment: DeploymentDepends
) -> JSONResponse:
    """Notifications: signature over the raw bytes, then dedupe and enqueue; 200 quickly.

    With several tenants the business number the payload names picks the tenant, whose app
    secret must have signed it. A number of no tenant, or numbers of two tenants in one
    delivery (Meta sends one per business account: give each tenant its own), is answered
    200 and dropped (Meta retries anything else for days), with an error log line."""
    limit = adapter(deployment.any()).settings.max_body_bytes
    try:
        raw = await read_body(request, limit)
    except BodyTooLarge:
        WEBHOOKS.labels("too_large", "").inc()
        return JSONResponse({"detail": "body too large"}, status_code=413)
    payload = decode(raw)
    numbers = business_numbers(payload)
    owner = deployment.of_routes(CHANNEL, numbers)
    if owner is None:
        WEBHOOKS.labels("unknown_number", "").inc()
        log.error(
            "whatsapp webhook dropped: its numbers are not one tenant's", numbers=sorted(numbers)
        )
        return JSONResponse({"ignored": 1, "reason": "business numbers of no single tenant"})
    deps = cast(GatewayDeps, owner)
    whatsapp = adapter(deps)
    settings = whatsapp.settings
    if settings.app_secret and not signature_valid(
        raw, settings.app_secret, request.headers.get(SIGNATURE_HEADER)
    ):
        WEBHOOKS.labels("bad_signature", deps.keys.tenant).inc()
        return JSONResponse({"detail": "missing or invalid signature"}, status_code=401)
    counts = await whatsapp.receive(raw, payload, deps.turns, deps.inbox, background)
    WEBHOOKS.labels("ok", deps.keys.tenant).inc()
    return JSONResponse(counts)
