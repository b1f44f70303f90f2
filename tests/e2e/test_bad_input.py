"""Bad input over HTTP against the whole system: each gets a 4xx with a clear reason, never a
500, and loses nothing (the conversation it touched still answers)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import pytest
import redis as redis_sync

from shared.contracts import DeadLetter, InboundMessage, utcnow
from shared.keys import Keys
from tests.support.fake_graph import message_webhook
from tests.system import System, decode_entry

NUMBER = "106540352242922"


@pytest.fixture
def db(redis_url: str) -> Iterator[redis_sync.Redis]:
    client = redis_sync.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


def new_id(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:8]}"


def post_raw(system: System, content: bytes) -> object:
    return system.http.post(
        "/v1/messages", content=content, headers={"content-type": "application/json"}
    )


def only_error(response: object) -> dict:
    (error,) = response.json()["detail"]  # type: ignore[attr-defined]
    return error


def test_a_lone_surrogate_is_a_422_naming_the_text_and_never_echoed(system: System) -> None:
    conversation = new_id("sur")
    raw = json.dumps({"conversation_id": conversation, "text": "oi \ud800"}).encode()
    response = post_raw(system, raw)
    assert response.status_code == 422
    error = only_error(response)
    assert error["loc"] == ["body", "text"] and "string" in error["msg"]
    assert b"ud800" not in response.content and "input" not in error
    assert system.say(conversation, "quero agendar uma aula")["text"]


@pytest.mark.parametrize(
    ("sent_at", "reason"),
    [
        ("9999-12-31T23:59:59+14:00", "days ahead"),
        ("0001-01-01T00:00:00-12:00", "before 2000-01-01"),
        ("1969-12-31T23:59:59Z", "before 2000-01-01"),
        ("1999-12-30T12:00:00", "before 2000-01-01"),  # business time
    ],
)
def test_a_time_out_of_bounds_is_a_422_and_the_conversation_goes_on(
    system: System, sent_at: str, reason: str
) -> None:
    conversation = new_id("time")
    response = system.post(conversation, "oi", sent_at=sent_at)
    assert response.status_code == 422, response.text
    error = only_error(response)
    assert error["loc"] == ["body", "sent_at"] and reason in error["msg"]
    assert system.say(conversation, "quero agendar uma aula")["text"]


def test_the_earliest_and_latest_times_allowed_are_taken(system: System) -> None:
    early = system.say(new_id("early"), "onde fica a CT?", sent_at="2000-01-01T00:00:00Z")
    assert early["text"]
    ahead = utcnow().replace(year=utcnow().year + 9).isoformat()
    assert system.say(new_id("ahead"), "onde fica a CT?", sent_at=ahead)["text"]


@pytest.mark.parametrize(
    "conversation", ["../x", "a/b", "a b", "", "..", ".", "{x}", "x" * 129, "ação"]
)
def test_ids_outside_the_rule_are_refused_at_post(system: System, conversation: str) -> None:
    response = system.post(conversation, "oi")
    assert response.status_code == 422
    assert only_error(response)["loc"] == ["body", "conversation_id"]


@pytest.mark.parametrize("path", ["a%20b", "a%2Fb", "..%2Fx", "%7Bx%7D", "x" * 129, "a%00b"])
@pytest.mark.parametrize("suffix", ["", "/journal", "/replies"])
def test_get_routes_refuse_ids_outside_the_rule(system: System, path: str, suffix: str) -> None:
    response = system.http.get(f"/v1/conversations/{path}{suffix}")
    assert response.status_code in (404, 422), response.text


@pytest.mark.parametrize(
    "query",
    ["replies?after=99999999999999999999-0", "messages?after=1-99999999999999999999"],
)
def test_a_cursor_past_redis_stream_ids_is_a_422(system: System, query: str) -> None:
    """It matched the cursor pattern, and Redis refused it: a 500."""
    response = system.http.get(f"/v1/conversations/{new_id('cur')}/{query}")
    assert response.status_code == 422, response.text


def test_handoff_refuses_an_id_outside_the_rule(system: System) -> None:
    response = system.http.post("/v1/conversations/a%20b/handoff", json={"owner": "human"})
    assert response.status_code == 422
    assert only_error(response)["loc"] == ["path", "conversation_id"]


def test_a_chunked_body_over_the_limit_is_413(system: System) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"conversation_id": "x", "text": "'
        for _ in range(100):
            yield b"a" * 10_000
        yield b'"}'

    response = system.http.post(
        "/v1/messages", content=chunks(), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert "bytes" in response.json()["detail"]


def test_bad_entries_put_straight_into_an_inbox_are_dead_lettered_and_the_next_message_is_answered(
    system: System, db: redis_sync.Redis, redis_url: str, prefix: str
) -> None:
    keys = Keys(prefix)
    conversation = new_id("poison")
    old = InboundMessage(
        channel="http",
        conversation_id=conversation,
        message_id="m-1960",
        text="oi",
        sent_at="1960-01-01T00:00:00Z",
        received_at=utcnow(),
    )
    # The 1970 message that wedged its conversation, and garbage, bypassing every check.
    db.rpush(keys.inbox(conversation), f"-315619200000|{old.model_dump_json()}", "garbage")
    db.zadd(keys.pending_starts(conversation), {conversation: 0})

    reply = system.say(conversation, "quero agendar uma aula experimental")
    assert reply["text"]
    events = system.journal(conversation)
    dead = [e for e in events if e["event"] == "message.dead_lettered"]
    assert sorted(e["message_id"] for e in dead) == ["", "m-1960"]
    assert all(e["reason"] for e in dead)
    started = [e for e in events if e["event"] == "turn.started"]
    assert [e["messages"] for e in started] == [["quero agendar uma aula experimental"]]
    raw = redis_sync.Redis.from_url(redis_url)
    letters = [DeadLetter.model_validate_json(decode_entry(f)) for _, f in raw.xrange(keys.dlq)]
    raw.close()
    mine = sorted(
        (letter.message_id, letter.payload, letter.error)
        for letter in letters
        if letter.stream == keys.inbox(conversation)
    )
    assert [(m, p) for m, p, _ in mine] == [
        ("", "garbage"),
        ("m-1960", f"-315619200000|{old.model_dump_json()}"),
    ]
    assert all(error.startswith("not an inbox entry") for _, _, error in mine)


def test_a_whatsapp_message_with_a_time_out_of_bounds_is_journaled_not_queued(
    system: System, db: redis_sync.Redis, prefix: str
) -> None:
    keys = Keys(prefix)
    sender = f"55119{uuid.uuid4().int % 10**8:08d}"
    conversation = f"wa:{NUMBER}:{sender}"
    ahead = int(time.time()) + 3651 * 86400
    for stamp in (1, ahead):  # 1970 and ten years ahead
        payload = message_webhook(NUMBER, sender, f"wamid.{stamp}", stamp)
        response = system.http.post("/webhooks/whatsapp", json=payload)
        assert response.status_code == 200, response.text
    refused = [e for e in system.journal(conversation) if e["event"] == "whatsapp.ignored"]
    assert [e["reason"] for e in refused] == ["refused", "refused"]
    assert all(e["detail"]["field"] == "sent_at" for e in refused)
    assert db.llen(keys.inbox(conversation)) == 0
    assert db.hget(keys.state(conversation), "meta") is None
