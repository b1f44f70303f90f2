"""The Evolution API channel's pure parts over the shared conformance corpus: every webhook body
third parties published is read into what the gateway acts on (a message, a message the
business's own number sent, or an ignored item with its reason); the ninth digit of Brazilian
mobile numbers; the webhook's two ways of proving the secret."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import jwt
import pytest

from services.gateway.evolution.adapter import message_id_of
from services.gateway.evolution.auth import authenticated
from services.gateway.evolution.numbers import canonical
from services.gateway.evolution.parse import (
    Webhook,
    conversation_id,
    parse_webhook,
    split_conversation_id,
)

CORPUS = Path("/work/shared/conformance/evolution")
TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 2, 10, 12, 0, tzinfo=UTC)

# file → (texts of messages (kind:text), fromMe messages, ignored reasons, connection state)
Expect = tuple[tuple[str, ...], int, tuple[str, ...], str | None]
WEBHOOKS: dict[str, Expect] = {
    "connection_update_close_401_crm_evolution_sender_2025.json": (
        (),
        0,
        ("event:connection.update",),
        "close",
    ),
    "connection_update_close_405_no_sender_v1_evolution_chat_server_2024.json": (
        (),
        0,
        ("event:connection.update",),
        "close",
    ),
    "connection_update_open_woofed_2024.json": ((), 0, ("event:connection.update",), "open"),
    "messages_update_deleted_v2_issue2010.json": ((), 0, ("event:messages.update",), None),
    "messages_update_read_v1_evolution_api4delphi_2024.json": (
        (),
        0,
        ("event:messages.update",),
        None,
    ),
    "messages_upsert_audio_ptt_incoming_trimmed_v1_7plus_crm_evolution_sender_2025.json": (
        ("audio:",),
        0,
        (),
        None,
    ),
    "messages_upsert_conversation_fromme_source_web_v1_7plus_crm_evolution_sender_2025.json": (
        (),
        1,
        (),
        None,
    ),
    # A message in the business's own chat (remoteJid = sender): nobody's conversation.
    "messages_upsert_conversation_fromme_typed_on_phone_ios_v1_evolution_chat_server_2023.json": (
        (),
        0,
        ("own_chat",),
        None,
    ),
    "messages_upsert_conversation_fromme_typed_on_phone_ios_v1_woofed_2024.json": (
        (),
        0,
        ("own_chat",),
        None,
    ),
    "messages_upsert_conversation_incoming_v1_7plus_crm_evolution_sender_2025.json": (
        ("text:hola - text",),
        0,
        (),
        None,
    ),
    "messages_upsert_extendedtext_incoming_android_v1_woofed_2024.json": (
        ("text:http://localhost:3001/?",),
        0,
        (),
        None,
    ),
    "messages_upsert_extendedtext_quoted_document_fromme_android_v1_"
    "evolution_chat_server_2023.json": (
        (),
        1,
        (),
        None,
    ),
    "messages_upsert_group_conversation_lid_participant_v1_7plus_crm_evolution_sender_2025.json": (
        (),
        0,
        ("group",),
        None,
    ),
    "messages_upsert_group_conversation_participant_pn_v1_woofed_2024.json": (
        (),
        0,
        ("group",),
        None,
    ),
    "messages_upsert_group_extendedtext_lid_participant_ios_v1_7plus_"
    "crm_evolution_sender_2025.json": (
        (),
        0,
        ("group",),
        None,
    ),
    "messages_upsert_image_caption_incoming_trimmed_v1_7plus_crm_evolution_sender_2025.json": (
        ("image:CAPTION",),
        0,
        (),
        None,
    ),
    "messages_upsert_lid_remotejidalt_v2_3_smart_core_2025.json": (
        ("text:Teste envio de mensagem",),
        0,
        (),
        None,
    ),
}
# The sendText exchanges and responses: the adapter's requests and the fake server's answers.
OUTBOUND = (
    "http_exchange_send_text_v1_docs.json",
    "http_exchange_send_text_v2_2_3_error_500_issue1412.json",
    "http_exchange_send_text_v2_docs.json",
    "send_text_response_201_v1_recorded_woofed_2024.json",
    "send_text_response_400_number_not_on_whatsapp_v1_woofed_2024.json",
)


def load(name: str) -> Any:
    return json.loads((CORPUS / name).read_text())


def test_every_corpus_file_has_an_expected_outcome() -> None:
    files = {p.name for p in CORPUS.iterdir() if p.name != "SOURCES.md"}
    assert set(WEBHOOKS) | set(OUTBOUND) == files and not set(WEBHOOKS) & set(OUTBOUND)


def read(name: str) -> Webhook:
    return parse_webhook(load(name), received_at=NOW, tz=TZ)


@pytest.mark.parametrize("name", sorted(WEBHOOKS))
def test_each_webhook_of_the_corpus(name: str) -> None:
    texts, from_business, ignored, connection = WEBHOOKS[name]
    webhook = read(name)
    got = tuple(
        f"{m.kind}:{m.text}" if m.kind != "text" or m.text else "text:" for m in webhook.messages
    )
    if name.startswith("messages_upsert_image"):  # the caption, whatever the author wrote
        assert [m.kind for m in webhook.messages] == ["image"] and webhook.messages[0].text
    elif name.startswith("messages_upsert_extendedtext_incoming"):
        assert [m.kind for m in webhook.messages] == ["text"] and webhook.messages[0].text
    else:
        assert got == texts, name
    assert len(webhook.from_business) == from_business, name
    assert tuple(i.reason for i in webhook.ignored) == ignored, name
    assert (webhook.connection or {}).get("state") == connection, name
    body = load(name)
    for message in webhook.messages:
        assert message.channel == "evolution"
        assert message.message_id == body["data"]["key"]["id"]
        assert message.conversation_id == conversation_id(body["instance"], message.contact or "")
        stamp = body["data"]["messageTimestamp"]
        assert message.sent_at == datetime.fromtimestamp(int(stamp), UTC)
        assert "apikey" not in json.dumps(message.metadata)


def test_a_lid_chat_is_the_number_evolution_gives_beside_it() -> None:
    [message] = read("messages_upsert_lid_remotejidalt_v2_3_smart_core_2025.json").messages
    assert message.contact == "550000000071"
    assert message.conversation_id == "evo:5500000000072:550000000071"


def test_a_lid_without_its_number_is_ignored() -> None:
    body = load("messages_upsert_lid_remotejidalt_v2_3_smart_core_2025.json")
    del body["data"]["key"]["remoteJidAlt"]
    webhook = parse_webhook(body, received_at=NOW, tz=TZ)
    assert not webhook.messages and [i.reason for i in webhook.ignored] == ["lid_without_number"]
    body["data"]["key"]["senderPn"] = "5511987654321@s.whatsapp.net"
    [message] = parse_webhook(body, received_at=NOW, tz=TZ).messages
    assert message.contact == "5511987654321"


def test_the_v2_text_and_the_v1_extended_text_are_both_read() -> None:
    body = load("messages_upsert_extendedtext_incoming_android_v1_woofed_2024.json")
    body["data"]["message"] = {"conversation": "quero marcar uma aula"}
    [message] = parse_webhook(body, received_at=NOW, tz=TZ).messages
    assert message.text == "quero marcar uma aula"


def test_a_broadcast_or_status_update_is_ignored() -> None:
    body = load("messages_upsert_conversation_incoming_v1_7plus_crm_evolution_sender_2025.json")
    body["data"]["key"]["remoteJid"] = "status@broadcast"
    assert [i.reason for i in parse_webhook(body, received_at=NOW, tz=TZ).ignored] == ["broadcast"]


@pytest.mark.parametrize(
    ("given", "canonical_form"),
    [
        ("551187654321", "5511987654321"),  # without the ninth digit
        ("5511987654321", "5511987654321"),  # with it
        ("551132654321", "551132654321"),  # a land line (2-5): no ninth digit
        ("59100000031", "59100000031"),  # another country
    ],
)
def test_brazilian_mobile_numbers_with_and_without_the_ninth_digit_are_one(
    given: str, canonical_form: str
) -> None:
    assert canonical(given) == canonical_form


def test_both_forms_of_a_number_are_one_conversation() -> None:
    body = load("messages_upsert_conversation_incoming_v1_7plus_crm_evolution_sender_2025.json")
    convs = set()
    for jid in ("551187654321@s.whatsapp.net", "5511987654321@s.whatsapp.net"):
        body["data"]["key"]["remoteJid"] = jid
        convs |= {m.conversation_id for m in parse_webhook(body, received_at=NOW, tz=TZ).messages}
    assert convs == {"evo:tigo1:5511987654321"}
    assert split_conversation_id("evo:tigo1:5511987654321") == ("tigo1", "5511987654321")


def test_the_id_sendtext_returns_is_read_from_every_shape() -> None:
    assert message_id_of(load("send_text_response_201_v1_recorded_woofed_2024.json")) == (
        "BAE55A31F9329575"
    )
    v2 = load("http_exchange_send_text_v2_docs.json")["response"]["body"]
    assert message_id_of(v2) == "BAE594145F4C59B4"
    assert (
        message_id_of(load("send_text_response_400_number_not_on_whatsapp_v1_woofed_2024.json"))
        is None
    )


def evolution_jwt(secret: str, *, issued: float | None = None) -> str:
    """The token Evolution sends with ``jwt_key`` (its payload, HS256)."""
    iat = int(issued if issued is not None else time.time())
    claims = {"iat": iat, "exp": iat + 600, "app": "evolution", "action": "webhook"}
    return jwt.encode(claims, secret, algorithm="HS256")


def test_the_webhook_proves_the_secret_by_jwt_or_token_header() -> None:
    secret = "evo-secret-0123456789abcdef0123456789"
    assert authenticated({"authorization": f"Bearer {evolution_jwt(secret)}"}, secret)
    assert authenticated({"x-webhook-token": secret}, secret)
    other = evolution_jwt("other-secret-0123456789abcdef01234")
    assert not authenticated({"authorization": f"Bearer {other}"}, secret)
    expired = evolution_jwt(secret, issued=time.time() - 3600)
    assert not authenticated({"authorization": f"Bearer {expired}"}, secret)
    none_alg = jwt.encode({"exp": int(time.time()) + 60}, key=None, algorithm="none")
    assert not authenticated({"authorization": f"Bearer {none_alg}"}, secret)
    assert not authenticated({"x-webhook-token": "nope"}, secret)
    assert not authenticated({}, secret)
    assert not authenticated({"x-webhook-token": ""}, None)
