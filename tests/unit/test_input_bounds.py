"""The rules every input passes where it enters: conversation ids, message times, inbox entries
and 422 answers that never echo what was refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import httpx
import pytest
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError

from services.gateway.api import MessageIn
from services.gateway.channels.webhooks import Ignored
from services.gateway.turns import screen_entries
from services.gateway.validation import describe, validation_error
from services.gateway.whatsapp.parse import parse_webhook
from shared.contracts import InboundMessage, is_conversation_id, sent_at_problem
from tests.support.fake_graph import message_webhook

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
PLUS14 = timezone(timedelta(hours=14))


@pytest.mark.parametrize(
    "value",
    ["wa:123456:5511999990000", "web:Zk3_a-1", "a.b@c+d-e_f:g", "x" * 128, "7", "...", ".a"],
)
def test_conversation_ids_that_are_accepted(value: str) -> None:
    assert is_conversation_id(value)
    assert MessageIn(conversation_id=value, text="oi").conversation_id == value


@pytest.mark.parametrize(
    "value",
    ["", ".", "..", "../x", "a/b", "a b", "{x}", "x" * 129, "olá", "a\nb", "a%2Fb", "a\\b", "a?b"],
)
def test_conversation_ids_that_are_refused(value: str) -> None:
    assert not is_conversation_id(value)
    with pytest.raises(ValueError):
        MessageIn(conversation_id=value, text="oi")
    with pytest.raises(ValueError):
        message(value, NOW)


@pytest.mark.parametrize(
    "sent_at",
    [
        datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(1960, 1, 1, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=PLUS14),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=PLUS14),
        NOW + timedelta(days=3650, seconds=1),
    ],
)
def test_message_times_out_of_bounds_are_refused_without_overflow(sent_at: datetime) -> None:
    assert sent_at_problem(sent_at, NOW, 3650)


@pytest.mark.parametrize(
    "sent_at",
    [datetime(2000, 1, 1, tzinfo=UTC), NOW - timedelta(days=400), NOW + timedelta(days=3650)],
)
def test_message_times_within_bounds_are_accepted(sent_at: datetime) -> None:
    assert sent_at_problem(sent_at, NOW, 3650) is None


def test_the_future_bound_follows_the_setting() -> None:
    assert sent_at_problem(NOW + timedelta(days=2), NOW, 1) == (
        "sent_at must not be more than 1 days ahead"
    )


def message(conversation_id: str, sent_at: datetime, message_id: str = "m1") -> InboundMessage:
    return InboundMessage(
        channel="http",
        conversation_id=conversation_id,
        message_id=message_id,
        text="oi",
        sent_at=sent_at,
        received_at=NOW,
    )


def entry(m: InboundMessage) -> str:
    return f"{max(0, int(m.sent_at.timestamp() * 1000))}|{m.model_dump_json()}"


def test_screening_keeps_good_entries_and_names_what_is_wrong_with_the_others() -> None:
    good = message("c1", NOW, "good")
    old = message("c1", datetime(1960, 1, 1, tzinfo=UTC), "old")
    other = message("c2", NOW, "other")
    unparsable = json.loads(good.model_dump_json())
    unparsable["sent_at"] = "yesterday"
    entries = [
        "garbage",
        f"-5|{good.model_dump_json()}",
        f"１２|{good.model_dump_json()}",  # full-width digits are not an epoch
        "1700000000000|not json",
        f"1700000000000|{json.dumps(unparsable)}",
        entry(old),
        entry(other),
        entry(good),
    ]
    messages, rejected = screen_entries(entries, "c1", NOW, 3650)
    assert [m.message_id for m in messages] == ["good"]
    reasons = [reason for _, reason in rejected]
    assert [e for e, _ in rejected] == entries[:-1]
    assert reasons[:3] == ["not an inbox entry (<epoch ms>|<message JSON>)"] * 3
    assert reasons[3].startswith("not a valid message")
    assert "sent_at" in reasons[4]
    assert reasons[5] == "sent_at must not be before 2000-01-01"
    assert reasons[6] == "a message of another conversation"


def test_a_described_error_has_no_input_and_encodes() -> None:
    error = {
        "type": "string_unicode",
        "loc": ("body", "text\ud800", 3),
        "msg": "Input should be a valid string",
        "input": "\ud800",
        "ctx": {"error": ValueError("bad \udcff"), "max_length": 4096},
    }
    described = describe(error)
    assert "input" not in described
    assert described["loc"] == ["body", "text?", 3]
    assert described["ctx"] == {"error": "bad ?", "max_length": 4096}
    json.dumps(described, ensure_ascii=False).encode("utf-8")


async def test_a_lone_surrogate_gets_a_422_naming_the_field() -> None:
    app = FastAPI()
    app.add_exception_handler(RequestValidationError, validation_error)

    @app.post("/v1/messages")
    async def post(body: MessageIn) -> dict[str, str]:
        return {"ok": body.text}

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        raw = b'{"conversation_id": "x", "text": "\\ud800"}'
        response = await client.post(
            "/v1/messages", content=raw, headers={"content-type": "application/json"}
        )
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "text"] and error["type"] == "string_unicode"
    assert "input" not in error and b"ud800" not in response.content


def test_a_webhook_sender_outside_the_id_rule_is_unaddressable_not_an_error() -> None:
    payload = message_webhook("123456", "55/11", "wamid.X", int(NOW.timestamp()))
    webhook = parse_webhook(payload, received_at=NOW, tz=UTC)
    assert webhook.messages == []
    assert [i.reason for i in webhook.ignored] == ["unaddressable"]
    assert isinstance(webhook.ignored[0], Ignored)


def test_lone_surrogates_in_a_webhook_become_replacement_characters() -> None:
    payload = message_webhook("123456", "5511", "wamid.X", int(NOW.timestamp()), text="oi \udfff")
    payload["entry"][0]["changes"].append({"field": "account\ud800", "value": {"k": "v\ud800"}})
    webhook = parse_webhook(json.loads(json.dumps(payload)), received_at=NOW, tz=UTC)
    assert [m.text for m in webhook.messages] == ["oi \ufffd"]
    assert [(i.reason, i.detail) for i in webhook.ignored] == [
        ("field:account\ufffd", {"k": "v\ufffd"})
    ]
    for item in [*webhook.messages, *webhook.ignored]:
        item.model_dump_json().encode("utf-8")
