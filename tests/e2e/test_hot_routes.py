"""The hot routes (``services/gateway/hot_routes.py``) answer as FastAPI's routes do.

Two systems on the same Redis, one serving a message and its replies itself and one with
``ORQ_HTTP_HOT_ROUTES=false`` (every request through FastAPI), get the same requests: accepted
and duplicate messages, the reply long-poll, and every kind of request the hot routes hand to
the app (bad JSON, a blank text, a refused token, a channel that takes no HTTP writes, a time out
of bounds found while storing, a body over the limit, queries the route refuses). Each answer's
status, content type and body must match byte for byte, but for the ids and times a turn makes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.system import System

TOKEN = "hot-routes-token-0123456789"
SENT_AT = "2026-03-02T15:00:00-03:00"
AUTH = {"authorization": f"Bearer {TOKEN}"}
JSON = {"content-type": "application/json"}
# Values a turn makes afresh on each system (ids, times, the greeting's variant): compared by
# their type only.
FRESH = {"turn_id", "created_at", "cursor", "text", "bubbles"}


@pytest.fixture(scope="module")
def pair(redis_url: str, prefix: str) -> Iterator[tuple[System, System]]:
    env = {"ORQ_API_TOKEN": TOKEN, "ORQ_BURST_WINDOW_MS": "0", "ORQ_BURST_FRAGMENT_MS": "0"}
    with (
        System.up(redis_url, f"{prefix}hot-on:", **env) as hot,
        System.up(redis_url, f"{prefix}hot-off:", ORQ_HTTP_HOT_ROUTES="false", **env) as routed,
    ):
        yield hot, routed


def shape(value: Any, key: str = "") -> Any:
    """``value`` with what a turn makes afresh replaced by its type; order kept."""
    if key in FRESH:
        return type(value).__name__
    if isinstance(value, dict):
        return [(k, shape(v, k)) for k, v in value.items()]
    if isinstance(value, list):
        return [shape(item) for item in value]
    return value


def answer(response: httpx.Response) -> tuple[int, str | None, Any]:
    kind = response.headers.get("content-type")
    try:
        body: Any = shape(json.loads(response.content))
    except ValueError:
        body = response.content
    return response.status_code, kind, body


def both(pair: tuple[System, System], method: str, path: str, **request: Any) -> list[Any]:
    """The answers of both systems (a client of its own: no token unless ``request`` has one)."""
    return [answer(httpx.request(method, system.base_url + path, **request)) for system in pair]


def message(text: str, message_id: str, conversation_id: str = "hot-1", **more: Any) -> bytes:
    body = {"conversation_id": conversation_id, "text": text, "message_id": message_id}
    return json.dumps({**body, "sent_at": SENT_AT, **more}).encode()


def test_a_message_and_its_reply_are_answered_alike(pair: tuple[System, System]) -> None:
    accepted = both(pair, "POST", "/v1/messages", content=message("oi", "m1"), headers=AUTH | JSON)
    assert (
        accepted[0]
        == accepted[1]
        == (202, "application/json", [("accepted", True), ("duplicate", False)])
    )
    again = both(pair, "POST", "/v1/messages", content=message("oi", "m1"), headers=AUTH | JSON)
    assert again[0] == again[1]
    assert again[0][2] == [("accepted", True), ("duplicate", True)]
    replies = both(pair, "GET", "/v1/conversations/hot-1/replies?after=0-0&wait=20", headers=AUTH)
    assert replies[0] == replies[1]
    status, _, body = replies[0]
    assert status == 200 and dict(body)["replies"], body


BODIES = {
    "not JSON": b'{"conversation_id": "hot-2", "text": ',
    "a blank text": message("   ", "m2", "hot-2"),
    "no text": json.dumps({"conversation_id": "hot-2"}).encode(),
    "a bad conversation id": message("oi", "m3", "a/b"),
    "a channel that takes no HTTP writes": message("oi", "m4", "wa:5511999990000"),
    "a time out of bounds": message("oi", "m5", "hot-3", sent_at="1999-12-31T23:00:00Z"),
    "a time too far ahead": message("oi", "m6", "hot-3", sent_at="2999-01-01T00:00:00Z"),
    "over the body limit": message("x" * 70_000, "m7", "hot-4"),
    "a JSON array": b"[]",
    "nesting too deep": b'{"text": ' + b"[" * 3000 + b"]" * 3000 + b"}",
}


@pytest.mark.parametrize("case", sorted(BODIES))
def test_bodies_the_route_refuses_are_refused_alike(pair: tuple[System, System], case: str) -> None:
    answers = both(pair, "POST", "/v1/messages", content=BODIES[case], headers=AUTH | JSON)
    assert answers[0] == answers[1]
    assert 400 <= answers[0][0] < 500


@pytest.mark.parametrize(
    "headers",
    [{}, {"authorization": "Bearer wrong"}, {"authorization": f"Basic {TOKEN}"}],
    ids=["no token", "a wrong token", "not a bearer"],
)
def test_tokens_the_route_refuses_are_refused_alike(
    pair: tuple[System, System], headers: dict[str, str]
) -> None:
    posted = both(pair, "POST", "/v1/messages", content=message("oi", "m8"), headers=headers | JSON)
    read = both(pair, "GET", "/v1/conversations/hot-1/replies", headers=headers)
    assert posted[0] == posted[1] and posted[0][0] == 401
    assert read[0] == read[1] and read[0][0] == 401


def test_a_body_that_is_not_declared_json_is_answered_alike(pair: tuple[System, System]) -> None:
    plain = {"content-type": "text/plain"}
    answers = both(
        pair, "POST", "/v1/messages", content=message("oi", "m9", "hot-5"), headers=AUTH | plain
    )
    assert answers[0] == answers[1]


@pytest.mark.parametrize(
    "query",
    [
        "after=1-x",
        "after=",
        "wait=61",
        "wait=-1",
        "wait=abc",
        "wait=1e-1",
        "after=0-0&after=1-0",
        "after=0-0&other=1",
        "wait=0.5",
    ],
)
def test_reply_queries_are_answered_alike(pair: tuple[System, System], query: str) -> None:
    answers = both(pair, "GET", f"/v1/conversations/hot-6/replies?{query}", headers=AUTH)
    assert answers[0] == answers[1]


@pytest.mark.parametrize("conversation", ["a%20b", "x" * 129, "a%2Fb"])
def test_conversation_ids_the_route_refuses_are_refused_alike(
    pair: tuple[System, System], conversation: str
) -> None:
    answers = both(pair, "GET", f"/v1/conversations/{conversation}/replies", headers=AUTH)
    assert answers[0] == answers[1]
    assert 400 <= answers[0][0] < 500
