"""The Chatwoot Agent Bot channel's pure parts over the shared conformance corpus: every body
third parties published is read into what the gateway acts on (a customer's message and whether
the bot owns the conversation, an agent's message, an ownership change, or an ignored item),
and the webhook signature over ``"{timestamp}.{raw body}"``."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from services.gateway.chatwoot.adapter import message_id_of
from services.gateway.chatwoot.parse import account_of, parse_event, split_conversation_id
from services.gateway.chatwoot.signature import expected_signature, signature_valid

CORPUS = Path("/work/shared/conformance/chatwoot")
TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 2, 10, 12, 0, tzinfo=UTC)


class Expect:
    """What one body must be read as."""

    def __init__(
        self,
        conv: str | None = None,
        *,
        text: str | None = None,
        kind: str = "text",
        bot: bool | None = None,
        agent: str | None = None,
        status: str | None = None,
        ignored: str | None = None,
    ) -> None:
        self.conv, self.text, self.kind, self.bot = conv, text, kind, bot
        self.agent, self.status, self.ignored = agent, status, ignored


BODIES: dict[str, Expect] = {
    "conversation_opened_chatwoot_docs.json": Expect("cw:1:10", status="open"),
    "conversation_resolved_chatwoot_docs.json": Expect("cw:1:10", status="resolved"),
    "conversation_status_changed_open_after_bot_handoff_whatsapp_chatsappai_2023.json": Expect(
        "cw:1:24", status="open"
    ),
    "conversation_status_changed_open_chatwoot_docs.json": Expect("cw:1:10", status="open"),
    # Label and waiting_since changes say nothing of who owns the conversation.
    "conversation_updated_label_added_woofed_2023.json": Expect(
        ignored="event:conversation_updated"
    ),
    "conversation_updated_waiting_since_cleared_gemwallet_2025.json": Expect(
        ignored="event:conversation_updated"
    ),
    "message_created_incoming_api_channel_pending_botpress_bridge_2022.json": Expect(
        "cw:1:11791", text="teste 1", bot=True
    ),
    "message_created_incoming_webwidget_open_assigned_chatwoot_docs.json": Expect(
        "cw:1:10", text="hi", bot=False
    ),
    "message_created_incoming_webwidget_open_assigned_woofed_2023.json": Expect(
        "cw:3:6", text="teste receive", bot=False
    ),
    "message_created_incoming_webwidget_pending_gemwallet_2025.json": Expect(
        "cw:1:42", text="How do I stake my tokens?", bot=True
    ),
    "message_created_incoming_whatsapp_pending_image_no_content_botpress_bridge_2025.json": Expect(
        "cw:71:28016", text="", kind="image", bot=True
    ),
    "message_created_incoming_whatsapp_pending_text_chatsappai_2023.json": Expect(
        "cw:1:25", text="hola", bot=True
    ),
    "message_created_outgoing_agent_user_webwidget_gemwallet_2025.json": Expect(
        "cw:1:1", text="from agent", agent="chatwoot:Test Agent"
    ),
    "message_created_outgoing_agent_user_webwidget_woofed_2023.json": Expect(
        "cw:5:49", text="Teste2"
    ),
    "message_updated_chatwoot_docs.json": Expect(ignored="event:message_updated"),
    "webwidget_triggered_chatwoot_docs.json": Expect(ignored="event:webwidget_triggered"),
}
EXCHANGES = (
    "http_exchange_messages_create_agent_bot_botpress_bridge.json",
    "http_exchange_toggle_status_open_chatwoot_cli_mock.json",
    "http_exchange_webhook_delivery_signature_headers_chatwoot_spec.json",
)


def load(name: str) -> Any:
    return json.loads((CORPUS / name).read_text())


def test_every_corpus_file_has_an_expected_outcome() -> None:
    files = {p.name for p in CORPUS.iterdir() if p.name != "SOURCES.md"}
    assert set(BODIES) | set(EXCHANGES) == files


@pytest.mark.parametrize("name", sorted(BODIES))
def test_each_body_of_the_corpus(name: str) -> None:
    expect = BODIES[name]
    body = load(name)
    event = parse_event(body, received_at=NOW, tz=TZ)
    if expect.ignored:
        assert [i.reason for i in event.ignored] == [expect.ignored]
        assert event.customer is event.agent is event.ownership is None
        return
    if expect.status:
        assert event.ownership is not None and event.ownership.conversation_id == expect.conv
        assert event.ownership.status == expect.status
        return
    if expect.bot is not None:
        assert event.customer is not None, event
        message = event.customer.message
        assert message.conversation_id == expect.conv and message.channel == "chatwoot"
        assert (message.text, message.kind) == (expect.text, expect.kind)
        assert event.customer.owned_by_bot is expect.bot
        assert message.message_id == f"cw-{body['id']}"
        created = datetime.fromisoformat(body["created_at"].replace("Z", "+00:00"))
        assert message.sent_at == created
        return
    assert event.agent is not None and event.agent.conversation_id == expect.conv
    assert event.agent.text == expect.text
    if expect.agent:
        assert event.agent.agent == expect.agent


def test_the_bots_own_message_and_private_notes_are_ignored() -> None:
    body = load("message_created_outgoing_agent_user_webwidget_gemwallet_2025.json")
    body["sender"] = load("http_exchange_messages_create_agent_bot_botpress_bridge.json")[
        "response"
    ]["body"]["sender"]
    assert [i.reason for i in parse_event(body, received_at=NOW, tz=TZ).ignored] == ["own_message"]
    note = load("message_created_incoming_webwidget_pending_gemwallet_2025.json")
    note["private"] = True
    event = parse_event(note, received_at=NOW, tz=TZ)
    assert event.customer is None and [i.reason for i in event.ignored] == ["private"]


def test_a_status_back_to_pending_in_conversation_updated_gives_it_to_the_bot() -> None:
    body = load("conversation_updated_waiting_since_cleared_gemwallet_2025.json")
    body["changed_attributes"].append(
        {"status": {"previous_value": "open", "current_value": "pending"}}
    )
    event = parse_event(body, received_at=NOW, tz=TZ)
    assert event.ownership is not None and event.ownership.status == "pending"


def test_the_account_of_a_conversation_event_is_its_messages() -> None:
    assert account_of(load("conversation_status_changed_open_chatwoot_docs.json")) == "1"
    assert account_of(
        load("message_created_incoming_webwidget_open_assigned_woofed_2023.json")
    ) == ("3")
    assert split_conversation_id("cw:1:11791") == ("1", "11791")
    assert split_conversation_id("evo:1:2") is None


def test_the_replys_message_id_is_read_from_the_api_response() -> None:
    exchange = load("http_exchange_messages_create_agent_bot_botpress_bridge.json")
    assert message_id_of(exchange["response"]["body"]) == "65303"


def test_the_signature_covers_the_timestamp_and_the_raw_body() -> None:
    scheme = load("http_exchange_webhook_delivery_signature_headers_chatwoot_spec.json")
    assert scheme["headers"]["X-Chatwoot-Signature"].startswith("sha256=")
    body = json.dumps(scheme["body"]).encode()
    secret, stamp = "cw-secret", str(int(time.time()))
    header = expected_signature(secret, stamp, body)
    now = float(stamp)
    assert signature_valid(secret, stamp, header, body, now_s=now, max_age_s=300)
    # Not the HMAC of the body alone (the spec asserts it too), nor of another time or body.
    body_only = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert not signature_valid(secret, stamp, body_only, body, now_s=now, max_age_s=300)
    later = str(int(stamp) + 1)
    assert not signature_valid(secret, later, header, body, now_s=now, max_age_s=300)
    assert not signature_valid(secret, stamp, header, body + b" ", now_s=now, max_age_s=300)
    assert not signature_valid("other", stamp, header, body, now_s=now, max_age_s=300)
    assert not signature_valid(secret, None, header, body, now_s=now, max_age_s=300)
    # A delivery signed an hour ago is a replay.
    assert not signature_valid(secret, stamp, header, body, now_s=now + 3600, max_age_s=300)
