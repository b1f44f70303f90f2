"""The two requests of every HTTP turn, served without FastAPI's routing and injection.

A person on the HTTP channel makes two requests a turn: ``POST /v1/messages`` and the reply
long-poll ``GET /v1/conversations/{id}/replies``. Through FastAPI each goes down the middleware
layers, the router's match against every route of the gateway, the dependency solver, the
request model's validation by FastAPI's field and the response's validation again: at max load
that was about a seventh of a together process's CPU (py-spy), more than the two routes' own
work. ``HotRoutes`` serves the plain case of these two itself, with the routes' own models and
functions (``api.accept_message``, ``api.read_replies``).

Whatever it does not serve exactly as the route would goes to the app untouched, before
anything is stored, and FastAPI answers it as always: a body that is not JSON or does not
validate, a query it does not read as plainly as the route's, a token or tenant refused, tracing
on (the requests are spans of FastAPI's instrumentation). A body it read is handed on as it came.
An error once the message is being stored is answered by the app's exception handlers
(``app.exception_handlers``), as Starlette's exception middleware would; one they do not handle
goes up to the server error middleware, a 500.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway import auth
from services.gateway.api import (
    STREAM_ID,
    MessageIn,
    accept_message,
    read_replies,
)
from services.gateway.channels.http import MAX_WAIT_S
from services.gateway.deps import GatewayDeps
from shared import tracing
from shared.contracts import CONVERSATION_ID_PATTERN, DOT_SEGMENTS
from shared.deps import Deployment, bearer

MESSAGES = "/v1/messages"
_REPLIES = re.compile(r"^/v1/conversations/([^/]+)/replies$")
_CONVERSATION = re.compile(CONVERSATION_ID_PATTERN)
_CURSOR = re.compile(STREAM_ID)
# A wait the route reads as the same number: digits, an optional fraction.
_WAIT = re.compile(r"^\d{1,3}(?:\.\d{1,6})?$")
_JSON = b"application/json"

Handler = Callable[[Request, Exception], Awaitable[Any]]


class HotRoutes:
    """ASGI middleware of the gateway's app (``app.build``): see the module's doc."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Tests may swap the routes' dependencies (``app.dependency_overrides``): only the
        # routes see them.
        if scope["type"] != "http" or tracing.active() or scope["app"].dependency_overrides:
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        if method == "POST" and path == MESSAGES:
            await self._message(scope, receive, send)
            return
        if method == "GET" and (found := _REPLIES.match(path)):
            await self._replies(scope, receive, send, found.group(1))
            return
        await self.app(scope, receive, send)

    async def _message(self, scope: Scope, receive: Receive, send: Send) -> None:
        chunks, complete = await self._read_body(receive)
        body = _message_in(b"".join(chunks)) if complete and _json_body(scope) else None
        request = Request(scope)
        deps = _deps(scope, request) if body is not None else None
        given = bearer(request)
        if (
            deps is None
            or body is None
            or auth.message_refusal(deps.settings, given, body.conversation_id, deps.keys.tenant)
        ):
            await self.app(scope, _replay(chunks, complete, receive), send)
            return
        await _answer(scope, receive, send, 202, accept_message(body, given, deps))

    async def _replies(self, scope: Scope, receive: Receive, send: Send, conv: str) -> None:
        query = _reply_query(scope["query_string"])
        request = Request(scope)
        ok = query is not None and _CONVERSATION.match(conv) and conv not in DOT_SEGMENTS
        deps = _deps(scope, request) if ok else None
        if deps is None or query is None:
            await self.app(scope, receive, send)
            return
        given = bearer(request)
        if auth.channel_refusal(deps.settings, given, conv, deps.keys.tenant) is not None:
            await self.app(scope, receive, send)
            return
        after, wait = query
        await _answer(scope, receive, send, 200, read_replies(conv, after, wait, deps))

    async def _read_body(self, receive: Receive) -> tuple[list[bytes], bool]:
        """The request's body chunks and whether it came whole within the limit (else the
        chunks read so far, for the app to read them again and answer as it does)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return chunks, False
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_body_bytes:
                return chunks, False
            if not message.get("more_body", False):
                return chunks, True


def _json_body(scope: Scope) -> bool:
    """A JSON content type, as the route reads its body (anything else: the app decides)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            return bool(value.split(b";", 1)[0].strip().lower() == _JSON)
    return False


def _message_in(raw: bytes) -> MessageIn | None:
    """The body as the route validates it (decoded as Starlette's ``Request.json``, then the
    model), or None for anything the route would refuse (a nesting too deep for the
    decoder too: the route answers it with a 400)."""
    try:
        return MessageIn.model_validate(json.loads(raw))
    except (ValueError, ValidationError, RecursionError):
        return None


def _reply_query(raw: bytes) -> tuple[str, float] | None:
    """``after`` and ``wait`` from a query that names nothing else, once each, in the forms
    the route takes; None for any other query (the app answers it)."""
    after, wait = "0-0", 0.0
    seen: set[bytes] = set()
    for pair in raw.split(b"&") if raw else ():
        name, eq, value = pair.partition(b"=")
        if not eq or name in seen or b"%" in value or b"+" in value:
            return None
        seen.add(name)
        text = value.decode("ascii", "replace")
        if name == b"after" and _CURSOR.match(text):
            after = text
        elif name == b"wait" and _WAIT.match(text) and float(text) <= MAX_WAIT_S:
            wait = float(text)
        else:
            return None
    return after, wait


def _deps(scope: Scope, request: Request) -> GatewayDeps | None:
    """The tenant's dependencies as the routes find them, or None where that lookup refuses
    (the app answers with its refusal)."""
    deployment = getattr(scope["app"].state, "deps", None)
    if not isinstance(deployment, Deployment):
        return None
    try:
        deps = deployment.of_request(request)
    except HTTPException:
        return None
    return deps if isinstance(deps, GatewayDeps) else None


def _replay(chunks: list[bytes], complete: bool, receive: Receive) -> Receive:
    """``receive`` that gives the chunks already read first, then whatever is left."""
    pending = list(chunks)

    async def replayed() -> Message:
        if pending:
            chunk = pending.pop(0)
            more = bool(pending) or not complete
            return {"type": "http.request", "body": chunk, "more_body": more}
        return await receive()

    return replayed


async def _answer(
    scope: Scope, receive: Receive, send: Send, status: int, work: Awaitable[BaseModel]
) -> None:
    """Send ``work``'s model as the route's JSON response, or the app's answer to its error."""
    try:
        body = (await work).model_dump_json().encode()
    except Exception as error:
        handler = _handler(scope, error)
        if handler is None:
            raise
        response = await handler(Request(scope, receive), error)
        await response(scope, receive, send)
        return
    headers = [(b"content-length", str(len(body)).encode()), (b"content-type", _JSON)]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _handler(scope: Scope, error: Exception) -> Handler | None:
    """The app's handler for ``error``, found as Starlette's exception middleware finds it
    (by the error's classes in order; ``Exception`` and 500 are the server error's)."""
    handlers: dict[Any, Handler] = scope["app"].exception_handlers
    for kind in type(error).__mro__:
        if kind is not Exception and kind in handlers:
            return handlers[kind]
    return None
