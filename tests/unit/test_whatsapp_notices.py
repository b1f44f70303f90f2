"""Turns the gateway answers itself, the pack's channel section, and request bodies."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.gateway.whatsapp.notices import notice_kinds, notice_reply, pack_config
from services.gateway.whatsapp.payloads import (
    Template,
    read_receipt,
    sent_message_id,
    template_message,
    text_message,
)
from shared.contracts import InboundMessage, Turn
from shared.notices import NOTICE_KINDS
from shared.pack import Pack, load_pack

CORPUS = Path("/work/shared/conformance/whatsapp")
NOW = datetime(2026, 2, 10, 21, 0, tzinfo=UTC)
PACK = load_pack("ctsmash")


def turn(*messages: tuple[str, str]) -> Turn:
    items = [
        InboundMessage(
            channel="whatsapp",
            conversation_id="wa:1:55",
            message_id=f"m{i}",
            kind=kind,
            text=text,
            sent_at=NOW,
            received_at=NOW,
            contact="55",
        )
        for i, (kind, text) in enumerate(messages)
    ]
    return Turn(
        turn_id="t1",
        conversation_id="wa:1:55",
        channel="whatsapp",
        seq=1,
        messages=items,
        text="\n".join(m.text for m in items if m.text),
        now=NOW,
    )


def variants(key: str) -> list[str]:
    value = PACK.sections["texts"][key]
    return [value] if isinstance(value, str) else value


def test_a_photo_is_answered_from_the_pack() -> None:
    reply = notice_reply(turn(("image", "")), PACK, created_at=NOW)
    assert reply is not None
    assert reply.bubbles[0] in variants("channel_image") and len(reply.bubbles) == 1
    assert (reply.turn_id, reply.conversation_id, reply.channel, reply.to) == (
        "t1",
        "wa:1:55",
        "whatsapp",
        "55",
    )
    assert reply.text == reply.bubbles[0] and reply.created_at == NOW


def test_one_bubble_per_kind_in_order_of_arrival() -> None:
    reply = notice_reply(
        turn(("location", ""), ("image", ""), ("image", ""), ("audio", "")), PACK, created_at=NOW
    )
    assert reply is not None
    assert [
        b in variants(k)
        for b, k in zip(
            reply.bubbles, ["channel_location", "channel_image", "channel_audio"], strict=True
        )
    ] == [True] * 3


@pytest.mark.parametrize(
    "messages",
    [
        [("text", "oi")],
        [("image", "quanto custa essa raquete?")],
        [("image", ""), ("text", "quero agendar")],
    ],
)
def test_turns_with_text_go_to_triage(messages: list[tuple[str, str]]) -> None:
    assert notice_kinds(turn(*messages)) == []
    assert notice_reply(turn(*messages), PACK, created_at=NOW) is None


def test_every_notice_kind_has_a_text_and_unknown_kinds_fall_back() -> None:
    texts = PACK.sections["texts"]
    assert all(f"channel_{k}" in texts or k in ("flow", "unsupported") for k in NOTICE_KINDS)
    for kind in ("flow", "unsupported"):
        reply = notice_reply(turn((kind, "")), PACK, created_at=NOW)
        assert reply is not None and reply.bubbles[0] in variants("channel_other")


def test_a_pack_without_channel_texts_leaves_the_turn_to_triage() -> None:
    bare = Pack("bare", {"texts": {"general_fallback": "Oi"}})
    assert notice_reply(turn(("image", "")), bare, created_at=NOW) is None
    assert pack_config(bare).reengagement_template is None


def test_the_pack_names_a_reengagement_template() -> None:
    template = pack_config(PACK).reengagement_template
    assert template is not None and template.name and template.language == "pt_BR"


def corpus_json(name: str) -> dict:
    return json.loads((CORPUS / name).read_text())


def test_text_request_has_the_documented_shape() -> None:
    ours = text_message("5511987654321", "oi")
    for name in ("outbound_send_text_request.json", "outbound_send_text_request_metadocs.json"):
        theirs = corpus_json(name)
        assert set(ours) == set(theirs)
        assert {k: ours[k] for k in ("messaging_product", "recipient_type", "type")} == {
            k: theirs[k] for k in ("messaging_product", "recipient_type", "type")
        }
        assert set(ours["text"]) >= set(theirs["text"])


def test_template_request_has_the_documented_shape() -> None:
    ours = template_message("5511987654321", Template(name="retomada", language="pt_BR"))
    theirs = corpus_json("outbound_send_template_request.json")
    assert set(ours) == set(theirs) and ours["type"] == theirs["type"] == "template"
    assert set(ours["template"]) == {"name", "language"}
    assert ours["template"]["language"] == {"code": "pt_BR"}


def test_read_receipt_with_typing_matches_the_recorded_request() -> None:
    theirs = corpus_json("outbound_mark_read_typing_indicator_request.json")
    assert read_receipt(theirs["message_id"], typing=True) == theirs
    assert "typing_indicator" not in read_receipt("wamid.x", typing=False)


def test_business_scoped_user_ids_are_addressed_as_recipient() -> None:
    assert text_message("+16505551234", "x")["to"] == "+16505551234"
    bsuid = text_message("US.13491208655302741918", "x")
    assert bsuid["recipient"] == "US.13491208655302741918" and "to" not in bsuid


@pytest.mark.parametrize(
    "name",
    [
        "outbound_send_success_response.json",
        "outbound_send_success_response_metadocs.json",
        "outbound_send_template_success_response.json",
        "outbound_send_interactive_buttons_response.json",
        "outbound_send_interactive_list_response.json",
    ],
)
def test_wamid_of_every_success_response(name: str) -> None:
    assert (sent_message_id(corpus_json(name)) or "").startswith("wamid.")


def test_no_wamid_in_other_bodies() -> None:
    assert sent_message_id(corpus_json("outbound_mark_read_success_response.json")) is None
    assert sent_message_id({"messages": []}) is None and sent_message_id("x") is None
