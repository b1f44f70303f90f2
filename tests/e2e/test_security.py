"""Authenticated ingress (issue 15, security), through the real gateway over HTTP.

``POST /v1/messages`` acts as the person of a conversation, so it takes a bearer token when
any is configured; a public web chat gets a token for one conversation only; the HTTP channel
can be switched off; no HTTP route writes into a WhatsApp conversation; and a gateway reachable
from other machines refuses to start without the admin token.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import httpx
import pytest

from orquestra.client import ApiError, Client
from orquestra.redis_server import free_port
from tests.system import ROOT, OutputWatcher, System, service, service_env

ADMIN = "adm-" + uuid.uuid4().hex
API = "api-" + uuid.uuid4().hex
SECRET = "web-" + uuid.uuid4().hex


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


ANONYMOUS = {"authorization": ""}


def conv() -> str:
    return f"sec-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def secured(redis_url: str, prefix: str) -> Iterator[System]:
    """The whole bot with an API token, an admin token and web chat sessions."""
    with System.up(
        redis_url,
        f"{prefix}security:",
        ORQ_ADMIN_TOKEN=ADMIN,
        ORQ_API_TOKEN=API,
        ORQ_WEBCHAT_SECRET=SECRET,
    ) as system:
        yield system


def post(system: System, cid: str, text: str, headers: dict[str, str]) -> httpx.Response:
    body = {"conversation_id": cid, "text": text, "message_id": uuid.uuid4().hex}
    return system.http.post("/v1/messages", json=body, headers=headers)


def replies(
    system: System, cid: str, headers: dict[str, str], wait: float = 0, after: str = "0-0"
) -> httpx.Response:
    path = f"/v1/conversations/{cid}/replies"
    return system.http.get(path, params={"wait": wait, "after": after}, headers=headers)


def started_messages(system: System, cid: str) -> list[list[str]]:
    journal = system.journal(cid)
    return [e["messages"] for e in journal if e["event"] == "turn.started"]


def never_stored(system: System, cid: str) -> bool:
    """Nothing at all is stored about ``cid``: its admin routes answer 404."""
    return system.http.get(f"/v1/conversations/{cid}/journal").status_code == 404


def test_a_stranger_cannot_speak_for_a_conversation(secured: System) -> None:
    cid = conv()
    assert post(secured, cid, "quero agendar uma aula", bearer(API)).status_code == 202
    cursor = secured.next_reply(cid)["cursor"]
    for headers in (ANONYMOUS, bearer("guess"), {"authorization": API}):
        response = post(secured, cid, "quero cancelar minha aula", headers)
        assert response.status_code == 401, response.text
        assert response.json()["detail"] == "missing or invalid bearer token"
        assert response.headers["www-authenticate"] == "Bearer"
        assert replies(secured, cid, headers).status_code == 401
    # The admin token posts too, and both tokens read the replies.
    assert post(secured, cid, "onde fica a CT?", bearer(ADMIN)).status_code == 202
    later = replies(secured, cid, bearer(API), wait=20, after=cursor).json()
    assert later["replies"] and later["cursor"] != cursor
    assert replies(secured, cid, bearer(ADMIN)).status_code == 200
    assert started_messages(secured, cid) == [["quero agendar uma aula"], ["onde fica a CT?"]]


def test_a_web_chat_session_reaches_its_own_conversation_only(secured: System) -> None:
    offer = secured.http.get("/v1/webchat", headers=ANONYMOUS)
    assert offer.json() == {"sessions": True}
    created = secured.http.post("/v1/webchat/sessions", headers=ANONYMOUS)
    assert created.status_code == 201
    session = created.json()
    cid, token = session["conversation_id"], session["token"]
    assert cid.startswith("web:") and token
    other = secured.http.post("/v1/webchat/sessions", headers=ANONYMOUS).json()
    assert other["conversation_id"] != cid and other["token"] != token

    assert post(secured, cid, "onde fica a CT?", bearer(token)).status_code == 202
    got = replies(secured, cid, bearer(token), wait=20)
    assert got.status_code == 200 and "Rua das Palmeiras" in got.json()["replies"][0]["text"]

    scope = "a web chat token may only post to and read the replies of its own conversation"
    elsewhere = [
        post(secured, other["conversation_id"], "quero cancelar", bearer(token)),
        post(secured, conv(), "oi", bearer(token)),
        replies(secured, other["conversation_id"], bearer(token)),
        secured.http.get(f"/v1/conversations/{cid}", headers=bearer(token)),
        secured.http.get(f"/v1/conversations/{cid}/journal", headers=bearer(token)),
        secured.http.post(
            f"/v1/conversations/{cid}/handoff", json={"owner": "human"}, headers=bearer(token)
        ),
    ]
    for response in elsewhere:
        assert response.status_code == 403, response.text
        assert response.json()["detail"] == scope
    assert never_stored(secured, other["conversation_id"])
    assert started_messages(secured, cid) == [["onde fica a CT?"]]


def test_no_http_route_writes_into_a_whatsapp_conversation(secured: System) -> None:
    cid = f"wa:123456:55119{uuid.uuid4().int % 10**8:08d}"
    for token in (ADMIN, API):
        response = post(secured, cid, "quero cancelar minha aula", bearer(token))
        assert response.status_code == 403, response.text
        assert "agent-messages" in response.json()["detail"]
    assert never_stored(secured, cid)


def test_the_orquestra_client_sends_its_token_on_every_route(
    secured: System, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ORQ_ADMIN_TOKEN", raising=False)
    monkeypatch.setenv("ORQ_API_TOKEN", API)
    cid = conv()
    with Client(secured.base_url) as client:
        client.post(cid, "onde fica a CT?")
        assert client.replies(cid, wait_s=20)[0]
        with pytest.raises(ApiError, match="401"):
            client.conversation(cid)  # the API token does not open the admin routes
    monkeypatch.setenv("ORQ_ADMIN_TOKEN", ADMIN)
    with Client(secured.base_url) as client:
        _, cursor = client.replies(cid)
        client.post(cid, "quero agendar")
        assert client.replies(cid, after=cursor, wait_s=20)[0]
        assert client.conversation(cid)["meta"]["turn_seq"] == 2


@contextmanager
def lone_gateway(redis_url: str, prefix: str, **env: str) -> Iterator[Gateway]:
    """Only the gateway (its routes decide before any worker is involved)."""
    port = free_port()
    with (
        service("gateway", redis_url, prefix, "--port", str(port), **env) as (_, watcher),
        httpx.Client(base_url=f"http://127.0.0.1:{port}") as http,
    ):
        yield Gateway(http, watcher)


class Gateway(NamedTuple):
    http: httpx.Client
    watcher: OutputWatcher


def test_with_only_the_admin_token_posting_needs_it(redis_url: str, unique_prefix: str) -> None:
    with lone_gateway(redis_url, unique_prefix, ORQ_ADMIN_TOKEN=ADMIN) as (http, _):
        body = {"conversation_id": conv(), "text": "oi"}
        assert http.post("/v1/messages", json=body).status_code == 401
        assert http.post("/v1/messages", json=body, headers=bearer(API)).status_code == 401
        assert http.post("/v1/messages", json=body, headers=bearer(ADMIN)).status_code == 202
        sessions = http.post("/v1/webchat/sessions")
        assert sessions.status_code == 404
        assert "ORQ_WEBCHAT_SECRET" in sessions.json()["detail"]
        assert http.get("/v1/webchat").json() == {"sessions": False}


def test_without_tokens_the_channel_is_open_with_a_warning(
    redis_url: str, unique_prefix: str
) -> None:
    clean = {"ORQ_ADMIN_TOKEN": "", "ORQ_API_TOKEN": ""}
    with lone_gateway(redis_url, unique_prefix, **clean) as (http, watcher):
        assert watcher.wait_for("POST /v1/messages is open", 10)
        body = {"conversation_id": conv(), "text": "oi"}
        assert http.post("/v1/messages", json=body).status_code == 202


def test_the_http_channel_can_be_switched_off(redis_url: str, unique_prefix: str) -> None:
    env = {
        "ORQ_ADMIN_TOKEN": ADMIN,
        "ORQ_API_TOKEN": API,
        "ORQ_WEBCHAT_SECRET": SECRET,
        "ORQ_HTTP_CHANNEL": "false",
    }
    with lone_gateway(redis_url, unique_prefix, **env) as (http, watcher):
        cid = conv()
        body = {"conversation_id": cid, "text": "oi"}
        for headers in ({}, bearer(API)):
            response = http.post("/v1/messages", json=body, headers=headers)
            assert response.status_code == 404
            assert "ORQ_HTTP_CHANNEL=false" in response.json()["detail"]
            read = http.get(f"/v1/conversations/{cid}/replies", headers=headers)
            assert read.status_code == 404
        assert http.post("/v1/webchat/sessions").status_code == 404
        assert http.get("/v1/webchat").json() == {"sessions": False}
        # The admin keeps the HTTP API (the developer tools use it).
        assert http.post("/v1/messages", json=body, headers=bearer(ADMIN)).status_code == 202
        assert "POST /v1/messages is open" not in "\n".join(watcher.lines)


def test_a_gateway_reachable_from_other_machines_needs_the_admin_token(
    redis_url: str, unique_prefix: str
) -> None:
    env = service_env(redis_url, unique_prefix, ORQ_ADMIN_TOKEN="", ORQ_API_TOKEN=API)
    port = str(free_port())
    process = subprocess.Popen(
        [sys.executable, "-m", "services.gateway", "--host", "0.0.0.0", "--port", port],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    watcher = OutputWatcher(process.stdout)
    try:
        code = process.wait(60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"the gateway started on 0.0.0.0 without ORQ_ADMIN_TOKEN:\n{watcher.tail()}")
    assert watcher.wait_for("<eof>", 10)
    assert code != 0
    assert "refusing to listen on 0.0.0.0 without ORQ_ADMIN_TOKEN" in watcher.tail()
