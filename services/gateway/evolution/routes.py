"""``POST /webhooks/evolution``: Evolution API's webhook (events ``MESSAGES_UPSERT`` and, for
``/healthz``, ``CONNECTION_UPDATE``).

The instance the body names picks the tenant (a deployment of one serves the instances of
``EVOLUTION_INSTANCE``), whose webhook secret the request must carry (``auth.py``): 401
otherwise, before anything is stored. A body of an instance nobody serves is answered 200 and
dropped with an error log line (the instance is misconfigured, not the request). The answer
comes as soon as the messages are stored: turns are started and answered later.
"""

from __future__ import annotations

from typing import Annotated, Any, cast

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from services.gateway.channels.webhooks import BodyTooLarge, read_body
from services.gateway.deps import GatewayDeps
from services.gateway.evolution.adapter import Evolution
from services.gateway.evolution.auth import authenticated
from services.gateway.evolution.parse import decode, instance_of
from services.gateway.evolution.settings import NAME
from shared.deps import Deployment, DeploymentDepends
from shared.logs import get_logger

PATH = "/webhooks/evolution"

router = APIRouter(tags=["evolution"])
log = get_logger(__name__)


def adapter(deps: object) -> Evolution:
    """The tenant's Evolution adapter, among its channels."""
    return cast(Evolution, cast(GatewayDeps, deps).channels[NAME])


RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"description": "no valid token"},
    413: {"description": "body too large"},
}


@router.post(PATH, responses=RESPONSES)
async def notify(request: Request, deployment: DeploymentDepends) -> JSONResponse:
    return await _notify(request, deployment)


@router.post(PATH + "/{event}", responses=RESPONSES)
async def notify_by_event(
    event: Annotated[str, Path(pattern=r"^[a-z0-9-]{1,64}$")],
    request: Request,
    deployment: DeploymentDepends,
) -> JSONResponse:
    """The same webhook with Evolution's ``byEvents`` on (``…/messages-upsert``): the body
    names its event too, and that is what is read."""
    return await _notify(request, deployment)


async def _notify(request: Request, deployment: Deployment) -> JSONResponse:
    limit = adapter(deployment.any()).settings.max_body_bytes
    try:
        raw = await read_body(request, limit)
    except BodyTooLarge:
        return JSONResponse({"detail": "body too large"}, status_code=413)
    payload = decode(raw)
    instance = instance_of(payload)
    owner = deployment.of_routes(NAME, {instance} if instance else set())
    evolution = adapter(owner) if owner is not None else None
    headers = {name.lower(): value for name, value in request.headers.items()}
    # Unauthenticated: 401 before anything is read further or stored (the instance of no
    # tenant included, so a caller learns nothing about which instances exist).
    secret = evolution.settings.webhook_secret if evolution else None
    if evolution is None or not authenticated(headers, secret):
        return JSONResponse({"detail": "missing or invalid webhook token"}, status_code=401)
    if not evolution.serves(instance):
        log.error("evolution webhook dropped: its instance is not served", instance=instance)
        return JSONResponse({"ignored": 1, "reason": "instance not served"})
    deps = cast(GatewayDeps, owner)
    counts = await evolution.receive(payload, deps.turns, deps.inbox)
    return JSONResponse(counts)
