"""Who may use which gateway route, decided in one place.

Why it matters: the HTTP channel speaks *as the person* of a conversation, so whoever can post
to ``POST /v1/messages`` can, say, cancel someone's booking; and a messaging channel's
conversation ids are made of phone numbers, so knowing a number must not be enough. Three kinds
of bearer token:

- the admin token (``ORQ_ADMIN_TOKEN``): every route;
- the API token (``ORQ_API_TOKEN``): the HTTP channel (messages and replies) of any conversation;
- a web chat token: the HMAC-SHA256 of one ``web:`` conversation id with ``ORQ_WEBCHAT_SECRET``,
  minted by ``POST /v1/webchat/sessions`` for a public page. It posts to and reads the replies of
  that conversation only. Nothing is stored: a session costs no Redis and cannot be listed.

No HTTP channel route writes into a conversation of a channel that refuses it (its spec's
``http_writes``: a real person's phone, for instance), not even the admin's: a person answers
one through the staff inbox (``…/agent-messages``). With neither token set the
HTTP channel is open (local development, with a warning at start), and the gateway refuses to
listen beyond the loopback interface without an admin token. Tokens are compared in constant
time. With several tenants (``ORQ_TENANTS``) the token first picks the tenant (``shared/deps.py``)
and these rules then apply with that tenant's tokens.

The decisions are pure functions returning a ``Refusal`` (or None); the FastAPI dependencies at
the bottom only read the header and raise.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from typing import NamedTuple

from fastapi import HTTPException, Request

from services.gateway.channels.registry import of_conversation
from shared.deps import AppDepends, bearer, matches
from shared.settings import Settings

WEBCHAT_TOKEN_PREFIX = "wc_"
WEB_CONVERSATION_PREFIX = "web:"

INVALID = "missing or invalid bearer token"
WEBCHAT_SCOPE = "a web chat token may only post to and read the replies of its own conversation"
CHANNEL_OFF = (
    "the HTTP channel is off (ORQ_HTTP_CHANNEL=false): this gateway takes messages from "
    "its other channels only"
)
CHANNEL_WRITE = (
    "{name} conversations ({prefix}...) take no messages over HTTP; to answer as a person use "
    "POST /v1/conversations/{{id}}/agent-messages"
)
SESSIONS_OFF = "web chat sessions are off: set ORQ_WEBCHAT_SECRET to enable them"


class Refusal(NamedTuple):
    status: int
    reason: str


def webchat_token(secret: str, conversation_id: str, tenant: str = "") -> str:
    """The HMAC of the conversation id; with several tenants, of the tenant-qualified id, and
    the tenant named in the token (``wc_<tenant>.<hmac>``) so a request finds its tenant
    before its token is checked, and a token made for one tenant is no other's."""
    signed = f"{tenant}~{conversation_id}" if tenant else conversation_id
    digest = hmac.new(secret.encode(), signed.encode(), hashlib.sha256).hexdigest()
    return f"{WEBCHAT_TOKEN_PREFIX}{tenant}.{digest}" if tenant else WEBCHAT_TOKEN_PREFIX + digest


def webchat_tenant(token: str) -> str | None:
    """The tenant a web chat token names (None: not a web chat token of a tenant)."""
    if not token.startswith(WEBCHAT_TOKEN_PREFIX):
        return None
    tenant, dot, _ = token.removeprefix(WEBCHAT_TOKEN_PREFIX).partition(".")
    return tenant if dot and tenant else None


def new_web_conversation() -> str:
    return WEB_CONVERSATION_PREFIX + secrets.token_hex(12)


def owns(settings: Settings, given: str, conversation_id: str, tenant: str = "") -> bool:
    """Whether ``given`` is the web chat token of exactly this conversation (of ``tenant``)."""
    secret = settings.webchat_secret
    if not secret or not conversation_id.startswith(WEB_CONVERSATION_PREFIX):
        return False
    return matches(given, webchat_token(secret, conversation_id, tenant))


def channel_refusal(
    settings: Settings, given: str | None, conversation_id: str, tenant: str = ""
) -> Refusal | None:
    """Posting to or reading the replies of ``conversation_id`` (of ``tenant``) with the
    bearer ``given``."""
    admin = matches(given, settings.admin_token)
    if not settings.http_channel and not admin:
        return Refusal(404, CHANNEL_OFF)
    if admin:
        return None
    if given and given.startswith(WEBCHAT_TOKEN_PREFIX):
        mine = owns(settings, given, conversation_id, tenant)
        return None if mine else Refusal(403, WEBCHAT_SCOPE)
    if matches(given, settings.api_token) or not (settings.api_token or settings.admin_token):
        return None
    return Refusal(401, INVALID)


def write_refusal(conversation_id: str) -> Refusal | None:
    """Writing into a conversation over HTTP, whoever asks: refused for a conversation of a
    channel that takes no HTTP writes."""
    channel = of_conversation(conversation_id)
    if channel is not None and not channel.http_writes:
        reason = CHANNEL_WRITE.format(name=channel.name, prefix=channel.conversation_prefix)
        return Refusal(403, reason)
    return None


def message_refusal(
    settings: Settings, given: str | None, conversation_id: str, tenant: str = ""
) -> Refusal | None:
    """Posting a message into ``conversation_id`` over HTTP with the bearer ``given``: the
    channel's rule, then the conversation's channel's."""
    return channel_refusal(settings, given, conversation_id, tenant) or write_refusal(
        conversation_id
    )


def admin_refusal(settings: Settings, given: str | None) -> Refusal | None:
    """The admin routes: open only while no admin token is set (local development)."""
    if matches(given, settings.admin_token):
        return None
    if given and given.startswith(WEBCHAT_TOKEN_PREFIX):
        return Refusal(403, WEBCHAT_SCOPE)
    return Refusal(401, INVALID) if settings.admin_token else None


def sessions_refusal(settings: Settings) -> Refusal | None:
    if not settings.http_channel:
        return Refusal(404, CHANNEL_OFF)
    if not settings.webchat_secret:
        return Refusal(404, SESSIONS_OFF)
    return None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_problem(settings: Settings, host: str) -> str | None:
    """Why the gateway must not listen on ``host`` with these settings, if it must not."""
    if settings.admin_token or settings.tenants or is_loopback(host):
        return None
    return (
        f"refusing to listen on {host or 'every interface'} without ORQ_ADMIN_TOKEN: other "
        "machines could read and change every conversation. Set ORQ_ADMIN_TOKEN (and "
        "ORQ_API_TOKEN or ORQ_WEBCHAT_SECRET for HTTP clients), or listen on 127.0.0.1."
    )


def startup_warnings(settings: Settings) -> list[str]:
    if settings.http_channel and not (settings.api_token or settings.admin_token):
        return [
            "POST /v1/messages is open to anyone who reaches the gateway (neither ORQ_API_TOKEN "
            "nor ORQ_ADMIN_TOKEN is set): for local development only"
        ]
    return []


def refuse(refusal: Refusal | None) -> None:
    if refusal is None:
        return
    headers = {"WWW-Authenticate": "Bearer"} if refusal.status == 401 else None
    raise HTTPException(status_code=refusal.status, detail=refusal.reason, headers=headers)


async def require_admin(request: Request, deps: AppDepends) -> None:
    """Async on purpose: a plain ``def`` dependency would run in a thread on every request."""
    refuse(admin_refusal(deps.settings, bearer(request)))


async def require_channel(conversation_id: str, request: Request, deps: AppDepends) -> None:
    """The replies route: its conversation id is a path parameter."""
    refuse(channel_refusal(deps.settings, bearer(request), conversation_id, deps.keys.tenant))
