"""HTTP API v1 of the gateway (the contract other tools are built against)."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import AfterValidator, BaseModel, Field
from redis.exceptions import MaxConnectionsError

from services.gateway import auth
from services.gateway.channels.http import MAX_WAIT_S
from services.gateway.channels.http import NAME as HTTP
from services.gateway.channels.registry import MAX_TEXT
from services.gateway.deps import Deps, GatewayDeps
from services.gateway.history import MAX_PAGE
from services.gateway.inbox import Refusal
from services.gateway.turns import MessageRefused
from services.gateway.validation import field_error
from services.registry import SERVICES, SLICES
from shared.contracts import CONVERSATION_ID_PATTERN, ConversationId, InboundMessage, new_id, utcnow
from shared.deps import DeploymentDepends, bearer
from shared.metrics import INBOUND, LIVE_SERVICES


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


# Text a person wrote, or a staff message sent through any channel: within every channel's
# limit (``registry.MAX_TEXT``), and something besides spaces.
Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT), AfterValidator(_not_blank)]
# The same rule as the body's id: an id a POST cannot use is refused by the GET routes too.
ConversationPath = Annotated[str, Path(pattern=CONVERSATION_ID_PATTERN)]
# A Redis stream id (reply and history cursors): each part fits Redis' 64-bit counters.
STREAM_ID = r"^\d{1,19}-\d{1,19}$"


class MessageIn(BaseModel):
    conversation_id: ConversationId
    text: Text
    message_id: str | None = Field(default=None, min_length=1, max_length=256)
    sent_at: datetime | None = Field(
        default=None,
        description="ISO-8601; without an offset it is read in business time. From 2000-01-01 "
        "to ORQ_SENT_AT_MAX_FUTURE_DAYS ahead of the wall clock.",
    )
    origin: str | None = Field(default=None, max_length=64, description="inbound, campaign:<id>")
    campaign_mode: str | None = Field(default=None, max_length=32)


class Accepted(BaseModel):
    accepted: bool
    duplicate: bool


class ReplyOut(BaseModel):
    turn_id: str
    text: str
    bubbles: list[str]
    created_at: str
    author: Literal["bot", "agent"] = "bot"
    agent: str | None = None


class AgentMessageIn(BaseModel):
    agent: Annotated[str, AfterValidator(_not_blank)] = Field(
        min_length=1, max_length=128, description="Who writes (staff name)."
    )
    text: Text
    client_message_id: str | None = Field(
        default=None, min_length=1, max_length=256, description="Repeats are sent once."
    )
    take: bool = Field(default=False, description="Take the conversation from another agent.")
    template: bool = Field(
        default=False,
        description="Outside the channel's reply window (WhatsApp's 24 hours): send the template.",
    )


class AgentMessageOut(BaseModel):
    accepted: bool
    duplicate: bool
    message_id: str


class ConversationRow(BaseModel):
    conversation_id: str
    owner: str
    agent: str | None
    channel: str | None
    contact_name: str | None
    last_message_at: str | None
    last_text: str | None
    waiting_since: str | None
    summary: str


class ConversationList(BaseModel):
    conversations: list[ConversationRow]
    cursor: str | None


class HistoryMessage(BaseModel):
    id: str = Field(description="Position in the history: a cursor for `before` and `after`.")
    message_id: str
    author: Literal["customer", "bot", "agent"]
    agent: str | None = None
    text: str
    at: str


class HistoryPage(BaseModel):
    messages: list[HistoryMessage]
    cursor: str | None = Field(
        description="Pass as `before` for the older page; null at the start."
    )


class HandoffIn(BaseModel):
    owner: Literal["human", "bot"] = Field(description="Who answers the conversation from now on.")
    agent: str = Field(default="admin", max_length=128, description="Who made the change.")
    reason: str = Field(default="", max_length=500)


class Replies(BaseModel):
    replies: list[ReplyOut]
    cursor: str


router = APIRouter()


async def require_known(conversation_id: str, deps: GatewayDeps) -> None:
    """404 for a conversation nothing is stored about (never seen, or erased)."""
    if not await deps.privacy.known(conversation_id):
        raise HTTPException(status_code=404, detail="no conversation with this id")


admin = APIRouter(dependencies=[Depends(auth.require_admin)])


@router.post("/v1/messages", status_code=202, response_model=Accepted)
async def post_message(body: MessageIn, request: Request, deps: Deps) -> Accepted:
    return await accept_message(body, bearer(request), deps)


async def accept_message(body: MessageIn, given: str | None, deps: GatewayDeps) -> Accepted:
    """``POST /v1/messages`` once its body is a ``MessageIn``: the bearer ``given`` checked,
    the message stored (``HotRoutes`` calls it too)."""
    auth.refuse(auth.message_refusal(deps.settings, given, body.conversation_id, deps.keys.tenant))
    tz = deps.tz
    received = utcnow()
    sent_at = body.sent_at or received
    if sent_at.tzinfo is None:
        sent_at = sent_at.replace(tzinfo=tz)
    message = InboundMessage(
        channel=HTTP,
        conversation_id=body.conversation_id,
        message_id=body.message_id or new_id(),
        text=body.text,
        sent_at=sent_at,
        received_at=received,
        contact=body.conversation_id,
        origin=body.origin or "inbound",
        campaign_mode=body.campaign_mode,
    )
    try:
        fresh = await deps.turns.ingest(message)
    except MessageRefused as refused:
        raise field_error(refused.field, refused.reason) from None
    INBOUND.labels(HTTP, "accepted" if fresh else "duplicate", deps.keys.tenant).inc()
    return Accepted(accepted=True, duplicate=not fresh)


@router.get(
    "/v1/conversations/{conversation_id}/replies",
    response_model=Replies,
    dependencies=[Depends(auth.require_channel)],
)
async def get_replies(
    conversation_id: ConversationPath,
    deps: Deps,
    after: Annotated[str, Query(pattern=STREAM_ID)] = "0-0",
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S)] = 0,
) -> Replies:
    return await read_replies(conversation_id, after, wait, deps)


async def read_replies(conversation_id: str, after: str, wait: float, deps: GatewayDeps) -> Replies:
    """``GET /v1/conversations/{id}/replies`` once its caller may read them (``HotRoutes``
    calls it too)."""
    try:
        replies, cursor = await deps.http_channel.read(conversation_id, after, wait)
    except MaxConnectionsError:
        raise HTTPException(
            status_code=503,
            detail="too many waiting long-polls; retry shortly",
            headers={"Retry-After": "1"},
        ) from None
    return Replies(replies=[ReplyOut(**r) for r in replies], cursor=cursor)


@admin.get("/v1/conversations", response_model=ConversationList)
async def list_conversations(
    deps: Deps,
    owner: Literal["pending_human", "human", "bot"] | None = None,
    q: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(pattern=r"^-?\d+:.+$", max_length=300)] = None,
) -> ConversationList:
    """Conversations by latest activity, newest first; ``q`` searches names and texts."""
    rows, next_cursor = await deps.inbox.conversations(owner, q, limit, cursor)
    return ConversationList(conversations=[ConversationRow(**r) for r in rows], cursor=next_cursor)


@admin.post(
    "/v1/conversations/{conversation_id}/agent-messages",
    status_code=202,
    response_model=AgentMessageOut,
    responses={404: {"description": "unknown conversation"}, 409: {"description": "refused"}},
)
async def post_agent_message(
    conversation_id: ConversationPath, body: AgentMessageIn, deps: Deps
) -> AgentMessageOut | JSONResponse:
    """Send a message as staff through the conversation's channel (exactly once); the
    conversation becomes human-owned by that agent."""
    outcome = await deps.inbox.send(
        conversation_id, body.agent, body.text, body.client_message_id, body.take, body.template
    )
    if isinstance(outcome, Refusal):
        return JSONResponse(
            {"detail": outcome.detail, "reason": outcome.reason}, status_code=outcome.status
        )
    message_id, duplicate = outcome
    return AgentMessageOut(accepted=True, duplicate=duplicate, message_id=message_id)


@admin.get(
    "/v1/conversations/{conversation_id}/messages",
    response_model=HistoryPage,
    responses={404: {"description": "unknown conversation"}},
)
async def get_messages(
    conversation_id: ConversationPath,
    deps: Deps,
    before: Annotated[str | None, Query(pattern=STREAM_ID)] = None,
    after: Annotated[str | None, Query(pattern=STREAM_ID)] = None,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
) -> HistoryPage:
    """The conversation's messages in both directions, oldest first: ``limit`` before the
    cursor ``before`` (paging back), or everything after ``after``, waiting up to ``wait``
    seconds for the first new one (a long-poll for live pages)."""
    if not await deps.inbox.exists(conversation_id):
        raise HTTPException(status_code=404, detail="no conversation with this id")
    if after is not None:
        try:
            fresh = await deps.history.since(
                deps.http_channel.polling, conversation_id, after, wait
            )
        except MaxConnectionsError:
            raise HTTPException(
                status_code=503,
                detail="too many waiting long-polls; retry shortly",
                headers={"Retry-After": "1"},
            ) from None
        return HistoryPage(messages=[HistoryMessage(**m) for m in fresh], cursor=None)
    messages, cursor = await deps.history.page(conversation_id, before, limit)
    return HistoryPage(messages=[HistoryMessage(**m) for m in messages], cursor=cursor)


@admin.get("/v1/conversations/{conversation_id}")
async def get_conversation(conversation_id: ConversationPath, deps: Deps) -> dict[str, Any]:
    await require_known(conversation_id, deps)
    snapshot = await deps.store.load(conversation_id)
    return {"conversation_id": conversation_id, **{s: snapshot.get(s) for s in SLICES}}


@admin.post("/v1/conversations/{conversation_id}/handoff")
async def post_handoff(
    conversation_id: ConversationPath, body: HandoffIn, deps: Deps
) -> dict[str, Any]:
    """Hand the conversation to a person (the bot goes silent) or back to the bot. An id
    nothing is stored about is a 404, not a new conversation made of a handoff alone."""
    await require_known(conversation_id, deps)
    meta = await deps.handoff.assign(conversation_id, body.owner, by=body.agent, reason=body.reason)
    return {"conversation_id": conversation_id, "meta": meta}


@admin.get("/v1/conversations/{conversation_id}/journal")
async def get_journal(conversation_id: ConversationPath, deps: Deps) -> dict[str, Any]:
    await require_known(conversation_id, deps)
    return {"entries": await deps.store.journal(conversation_id)}


@router.get("/healthz")
async def healthz(deployment: DeploymentDepends) -> JSONResponse:
    """Open: liveness of every service, each tenant's state, each channel's last problems."""
    deps = cast(GatewayDeps, deployment.any())
    fresh_after = time.time() - max(10.0, deps.settings.heartbeat_s * 5)
    members = [
        member
        for key in deps.keys.all_heartbeats()
        for member in await deps.redis.zrangebyscore(key, fresh_after, "+inf")
    ]
    live: dict[str, int] = {}
    for member in members:
        service = member.split("|", 1)[0]
        live[service] = live.get(service, 0) + 1
    for service in SERVICES:
        LIVE_SERVICES.labels(service).set(live.get(service, 0))
    missing = [s for s in SERVICES if s != "gateway" and not live.get(s)]
    body: dict[str, Any] = {
        "status": "ok" if not missing else "degraded",
        "live": live,
        "missing": missing,
    }
    # Channel detail (e.g. a refused access token) and a disabled tenant are shown, not
    # counted: restarting the gateway would not fix them, so they do not make it a 503.
    if deployment.single:
        body.update(await deps.channels.health())
    else:
        body["tenants"] = deployment.problems()
        body["channels"] = {
            tenant: await cast(GatewayDeps, each).channels.health()
            for tenant, each in deployment.deps.items()
        }
    return JSONResponse(body, status_code=200 if not missing else 503)


@router.get("/metrics")
async def metrics() -> Response:
    return PlainTextResponse(generate_latest().decode(), media_type=CONTENT_TYPE_LATEST)
