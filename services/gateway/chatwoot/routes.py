"""``POST /webhooks/chatwoot``: the agent bot's webhook (the URL set on the bot in Chatwoot).

The account the body names picks the tenant (a deployment of one serves any account); that
tenant's webhook secret, when set, must have signed the body (``signature.py``): 401 otherwise,
before anything is stored. A channel that is off (no URL or bot token) answers 404. A delivery
seen before (``X-Chatwoot-Delivery``) is answered at once; otherwise the messages are stored
and the answer comes right away: Chatwoot gives a bot 5 seconds before it hands the
conversation to people, and the turn is taken and answered later.
"""

from __future__ import annotations

import time
from typing import cast

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from services.gateway.channels.webhooks import BodyTooLarge, read_body
from services.gateway.chatwoot.adapter import Chatwoot
from services.gateway.chatwoot.parse import account_of, decode
from services.gateway.chatwoot.settings import NAME
from services.gateway.chatwoot.signature import signature_valid
from services.gateway.deps import GatewayDeps
from shared.deps import DeploymentDepends

PATH = "/webhooks/chatwoot"
DELIVERY = "x-chatwoot-delivery"
TIMESTAMP = "x-chatwoot-timestamp"
SIGNATURE = "x-chatwoot-signature"

router = APIRouter(tags=["chatwoot"])


def adapter(deps: object) -> Chatwoot:
    """The tenant's Chatwoot adapter, among its channels."""
    return cast(Chatwoot, cast(GatewayDeps, deps).channels[NAME])


@router.post(
    PATH,
    responses={
        401: {"description": "missing or invalid signature"},
        404: {"description": "no Chatwoot agent bot here"},
        413: {"description": "body too large"},
    },
)
async def notify(request: Request, deployment: DeploymentDepends) -> JSONResponse:
    limit = adapter(deployment.any()).settings.max_body_bytes
    try:
        raw = await read_body(request, limit)
    except BodyTooLarge:
        return JSONResponse({"detail": "body too large"}, status_code=413)
    payload = decode(raw)
    account = account_of(payload)
    owner = deployment.of_routes(NAME, {account} if account else set())
    chatwoot = adapter(owner) if owner is not None else None
    if chatwoot is None or not chatwoot.settings.on:
        return JSONResponse({"detail": "no Chatwoot agent bot for this account"}, status_code=404)
    settings = chatwoot.settings
    if settings.webhook_secret and not signature_valid(
        settings.webhook_secret,
        request.headers.get(TIMESTAMP),
        request.headers.get(SIGNATURE),
        raw,
        now_s=time.time(),
        max_age_s=settings.signature_max_age_s,
    ):
        return JSONResponse({"detail": "missing or invalid signature"}, status_code=401)
    delivery = request.headers.get(DELIVERY)
    if await chatwoot.seen(delivery):
        return JSONResponse({"duplicate": 1})
    deps = cast(GatewayDeps, owner)
    counts = await chatwoot.receive(payload, delivery, deps.turns, deps.inbox, deps.handoff)
    return JSONResponse(counts)
