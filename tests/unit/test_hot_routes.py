"""What the hot routes take as the routes would, and what they hand to the app as it came."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from services.gateway import hot_routes
from services.gateway.hot_routes import HotRoutes


@pytest.mark.parametrize(
    ("query", "read"),
    [
        (b"", ("0-0", 0.0)),
        (b"after=0-0", ("0-0", 0.0)),
        (b"after=1765000000000-3&wait=30", ("1765000000000-3", 30.0)),
        (b"wait=0.25", ("0-0", 0.25)),
        (b"wait=60", ("0-0", 60.0)),
    ],
)
def test_reply_queries_read_as_the_route_reads_them(query: bytes, read: tuple[str, float]) -> None:
    assert hot_routes._reply_query(query) == read


@pytest.mark.parametrize(
    "query",
    [
        b"wait=61",
        b"wait=-1",
        b"wait=1e1",
        b"wait=.5",
        b"after=",
        b"after=1-x",
        b"after=0-0&after=0-0",
        b"after",
        b"after=0%2D0",
        b"other=1",
    ],
)
def test_other_reply_queries_go_to_the_app(query: bytes) -> None:
    assert hot_routes._reply_query(query) is None


@pytest.mark.parametrize(
    "raw",
    [b"{", b"[]", b'{"conversation_id": "x"}', b'{"text": ' + b"[" * 5000 + b"]" * 5000 + b"}"],
)
def test_bodies_the_route_refuses_are_not_read_as_messages(raw: bytes) -> None:
    assert hot_routes._message_in(raw) is None


def test_a_body_read_and_handed_on_comes_to_the_app_as_it_came() -> None:
    """A body the hot route read before handing the request on (here: not JSON, in two
    chunks) reaches the app chunk by chunk, then the app's next read waits on the client."""
    chunks = [b'{"conversation_id": ', b'"x", "text": }']
    seen: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            seen.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        seen.append(await receive())

    async def scenario() -> None:
        incoming = [
            {"type": "http.request", "body": chunks[0], "more_body": True},
            {"type": "http.request", "body": chunks[1], "more_body": False},
            {"type": "http.disconnect"},
        ]

        async def receive() -> dict[str, Any]:
            return incoming.pop(0)

        scope = {
            "type": "http",
            "method": "POST",
            "path": "/v1/messages",
            "headers": [(b"content-type", b"application/json")],
            "app": SimpleNamespace(dependency_overrides={}),
        }
        await HotRoutes(app, max_body_bytes=1024)(scope, receive, None)

    asyncio.run(scenario())
    assert seen == [
        {"type": "http.request", "body": chunks[0], "more_body": True},
        {"type": "http.request", "body": chunks[1], "more_body": False},
        {"type": "http.disconnect"},
    ]
