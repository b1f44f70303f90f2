"""Reading Meta's webhook payloads: every corpus file, each message type, never an exception."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.gateway.whatsapp.parse import (
    Webhook,
    conversation_id,
    parse_webhook,
    split_conversation_id,
)

CORPUS = Path("/work/shared/conformance/whatsapp")
TZ = ZoneInfo("America/Sao_Paulo")
RECEIVED = datetime(2026, 2, 10, 21, 0, tzinfo=UTC)
USER = "wa:1122334455667:972987654321"


def parse(name: str) -> Webhook:
    return parse_webhook(json.loads((CORPUS / name).read_text()), received_at=RECEIVED, tz=TZ)


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".json", ".txt"))


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_every_corpus_file_parses_without_error(path: Path) -> None:
    try:
        payload = json.loads(path.read_bytes())
    except ValueError:
        payload = path.read_text()
    result = parse_webhook(payload, received_at=RECEIVED, tz=TZ)
    assert result.messages or result.statuses or result.echoes or result.ignored


@pytest.mark.parametrize(
    ("name", "kind", "text", "extra"),
    [
        ("cloud_text.json", "text", "Body Text", {}),
        ("cloud_text_reply_context.json", "text", "replied text", {}),
        ("cloud_interactive_button_reply.json", "text", "title", {"reply_type": "button_reply"}),
        ("cloud_interactive_list_reply.json", "text", "title", {"reply_id": "callback_data"}),
        ("cloud_interactive_list_reply_no_description.json", "text", "title", {}),
        ("cloud_button_quick_reply.json", "text", "title", {"reply_type": "quick_reply"}),
        (
            "cloud_button_quick_reply_no_context.json",
            "text",
            "title",
            {"reply_id": "callback_data"},
        ),
        ("cloud_image.json", "image", "", {"media": {"id": "65463453", "mime_type": "image/jpeg"}}),
        ("cloud_video_forwarded.json", "video", "caption", {}),
        ("cloud_document.json", "document", "caption", {}),
        ("cloud_audio_voice.json", "audio", "", {}),
        ("cloud_sticker.json", "sticker", "", {}),
        ("cloud_location.json", "location", "", {}),
        ("cloud_contacts.json", "contacts", "", {"contacts": 3}),
        (
            "cloud_reaction.json",
            "reaction",
            "",
            {"reaction": {"emoji": "😮", "message_id": "wamid.yzxyzx="}},
        ),
        ("cloud_order.json", "order", "", {"order": {"catalog_id": "354160437058781", "items": 3}}),
        ("cloud_interactive_nfm_reply_flow.json", "flow", "", {"flow": {"name": "flow"}}),
    ],
)
def test_message_types(name: str, kind: str, text: str, extra: dict) -> None:
    result = parse(name)
    assert len(result.messages) == 1 and not result.statuses
    message = result.messages[0]
    assert (message.kind, message.text, message.conversation_id) == (kind, text, USER)
    assert message.channel == "whatsapp" and message.contact == "972987654321"
    assert message.metadata["phone_number_id"] == "1122334455667"
    assert message.metadata["wamid"] == message.message_id
    for key, value in extra.items():
        assert message.metadata[key] == value


def test_provider_timestamp_is_business_time() -> None:
    message = parse("cloud_text.json").messages[0]
    assert message.sent_at == datetime.fromtimestamp(1697043223, UTC)
    assert message.sent_at.tzinfo == TZ and message.received_at == RECEIVED
    assert message.metadata["profile_name"] == "Test Name"


def test_context_and_referral_are_kept() -> None:
    reply = parse("cloud_text_reply_context.json").messages[0]
    assert reply.metadata["context"] == {"from": "972123456789", "id": "wamid.xyzxyz=="}
    ad = parse("cloud_text_ctwa_referral.json").messages[0]
    assert ad.metadata["referral"]["source_id"] == "ADID" and ad.origin == "inbound"


def test_batch_of_changes_yields_every_message_in_order() -> None:
    result = parse("cloud_batch_two_changes_netflie.json")
    assert [m.text for m in result.messages] == ["MESSAGE_BODY", "MESSAGE_BODY2"]
    assert {m.conversation_id for m in result.messages} == {"wa:PHONE_NUMBER_ID:PHONE_NUMBER"}


def test_sender_without_from_is_the_business_scoped_user_id() -> None:
    message = parse("cloud_text_bsuid_only_no_from_netflie.json").messages[0]
    assert message.conversation_id == "wa:PHONE_NUMBER_ID:BSUID_123"
    assert message.contact == "BSUID_123"


def test_contact_without_profile() -> None:
    message = parse("cloud_text_no_contact_profile_netflie.json").messages[0]
    assert message.text == "MESSAGE_BODY" and "profile_name" not in message.metadata


@pytest.mark.parametrize(
    ("name", "reasons"),
    [
        ("cloud_system_user_changed_number.json", ["system"]),
        ("cloud_system_identity_changed.json", ["system"]),
        ("cloud_reaction_removed.json", ["reaction_removed"]),
        ("cloud_interactive_missing_object.json", ["errors", "unsupported_interactive"]),
        ("cloud_value_errors_130429_metadocs.json", ["errors"]),
        ("cloud_field_account_update.json", ["field:account_update"]),
        ("cloud_field_template_status_update.json", ["field:message_template_status_update"]),
        ("evolution_messages_upsert.json", ["foreign_payload"]),
        ("twilio_signature_triple.json", ["foreign_payload"]),
    ],
)
def test_what_is_acknowledged_and_journaled(name: str, reasons: list[str]) -> None:
    result = parse(name)
    assert not result.messages and not result.statuses
    assert [i.reason for i in result.ignored] == reasons


@pytest.mark.parametrize(
    ("name", "conversation", "inner"),
    [
        ("cloud_unsupported.json", USER, None),
        ("cloud_unsupported_with_type.json", USER, "pool"),
        ("cloud_unknown_type_131051_netflie.json", "wa:PHONE_NUMBER_ID:PHONE_NUMBER", None),
    ],
)
def test_unsupported_messages_are_messages_to_answer(
    name: str, conversation: str, inner: str | None
) -> None:
    """Meta's ``unsupported`` (``unknown`` in the older shape, 131051) is a message the person
    sent: it becomes a turn the gateway answers with ``channel_other``, not an ignored item."""
    result = parse(name)
    assert not result.ignored
    (message,) = result.messages
    assert (message.kind, message.text, message.conversation_id) == (
        "unsupported",
        "",
        conversation,
    )
    assert message.metadata["unsupported"] == {"type": inner, "errors": [131051]}


def edit_webhook(inner: dict | None, original: str | None = "wamid.ORIGINAL") -> dict:
    """An ``edit`` message as Meta documents it (webhooks reference, messages/edit): the
    corpus text message with ``type: edit`` and the new content under ``edit.message``."""
    payload = json.loads((CORPUS / "cloud_text.json").read_text())
    message = payload["entry"][0]["changes"][0]["value"]["messages"][0]
    del message["text"]
    edit: dict = {"original_message_id": original}
    if inner is not None:
        edit["message"] = inner
    message.update({"id": "wamid.EDIT", "type": "edit", "edit": edit})
    return payload


def test_an_edited_text_is_a_new_message_with_the_new_text() -> None:
    inner = {"type": "text", "text": {"body": "na verdade quero sábado"}}
    (message,) = parse_webhook(edit_webhook(inner), received_at=RECEIVED, tz=TZ).messages
    assert (message.kind, message.text, message.conversation_id) == (
        "text",
        "na verdade quero sábado",
        USER,
    )
    assert message.message_id == "wamid.EDIT" and message.metadata["edited"] == "wamid.ORIGINAL"
    assert message.sent_at == datetime.fromtimestamp(1697043223, UTC)


def test_an_edited_caption_is_read_like_a_captioned_photo() -> None:
    inner = {
        "context": {"id": "wamid.CONTEXT"},
        "type": "image",
        "image": {"caption": "e essa raquete?", "mime_type": "image/jpeg", "id": "77"},
    }
    (message,) = parse_webhook(edit_webhook(inner), received_at=RECEIVED, tz=TZ).messages
    assert (message.kind, message.text) == ("image", "e essa raquete?")
    assert message.metadata["context"] == {"id": "wamid.CONTEXT"}
    assert message.metadata["media"] == {"id": "77", "mime_type": "image/jpeg"}


@pytest.mark.parametrize("inner", [None, {}, {"type": "edit", "edit": {}}])
def test_an_edit_without_content_is_acknowledged_and_journaled(inner: dict | None) -> None:
    result = parse_webhook(edit_webhook(inner), received_at=RECEIVED, tz=TZ)
    assert not result.messages
    assert [(i.reason, i.conversation_id) for i in result.ignored] == [("malformed_edit", USER)]


def test_ignored_items_keep_conversation_and_error_codes() -> None:
    system = parse("cloud_system_user_changed_number.json").ignored[0]
    assert system.detail["system"] == "user_changed_number"
    errors = parse("cloud_value_errors_130429_metadocs.json").ignored[0]
    assert errors.conversation_id is None and errors.detail["errors"][0]["code"] == 130429


@pytest.mark.parametrize(
    ("name", "wamid", "status", "codes"),
    [
        ("cloud_status_sent.json", "wamid.xyzxyz", "sent", []),
        ("cloud_status_delivered.json", "wamid.xyzxyz", "delivered", []),
        ("cloud_status_read.json", "wamid.xyzxyz", "read", []),
        ("cloud_status_played.json", "wamid.xyzxyz", "played", []),
        ("cloud_status_failed.json", "wamid.xyzxyz", "failed", [130472]),
        ("cloud_status_failed_131053_netflie.json", "amid.ID", "failed", [131053]),
        ("cloud_status_sent_biz_opaque_callback.json", "wamid.xyzxyz", "sent", []),
        ("cloud_status_group_read.json", "<WHATSAPP_MESSAGE_ID>", "read", []),
        ("cloud_status_read_conversation_netflie.json", "wamid.ID", "read", []),
    ],
)
def test_statuses(name: str, wamid: str, status: str, codes: list[int]) -> None:
    result = parse(name)
    assert not result.messages and not result.ignored
    (update,) = result.statuses
    assert (update.wamid, update.status, [e["code"] for e in update.errors]) == (
        wamid,
        status,
        codes,
    )
    assert update.at is not None and update.at.tzinfo == TZ


def test_failed_status_error_details_are_flattened() -> None:
    (update,) = parse("cloud_status_failed.json").statuses
    assert update.errors[0]["details"].startswith("Failed to send message")
    assert update.conversation_id == USER


def test_conversation_ids_round_trip() -> None:
    conv = conversation_id("1122334455667", "US.13491208655302741918")
    assert split_conversation_id(conv) == ("1122334455667", "US.13491208655302741918")
    assert split_conversation_id("ana") is None and split_conversation_id("wa::x") is None


def test_ids_that_would_break_key_names_are_not_accepted() -> None:
    payload = json.loads((CORPUS / "cloud_text.json").read_text())
    payload["entry"][0]["changes"][0]["value"]["messages"][0]["from"] = "97{2}"
    result = parse_webhook(payload, received_at=RECEIVED, tz=TZ)
    assert not result.messages and result.ignored[0].reason == "unaddressable"


def test_a_message_without_timestamp_uses_the_receive_time() -> None:
    payload = json.loads((CORPUS / "cloud_text.json").read_text())
    del payload["entry"][0]["changes"][0]["value"]["messages"][0]["timestamp"]
    (message,) = parse_webhook(payload, received_at=RECEIVED, tz=TZ).messages
    assert message.sent_at == RECEIVED


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)
FIELDS = ["object", "entry", "changes", "value", "messages", "statuses", "from", "type", "text"]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(corpus_files()[:50]),
    st.lists(st.tuples(st.sampled_from(FIELDS), json_values), max_size=4),
)
def test_damaged_payloads_never_raise(path: Path, damage: list[tuple[str, object]]) -> None:
    """Any key of a real payload replaced by any JSON value: parsing still answers."""
    try:
        payload = json.loads(path.read_bytes())
    except ValueError:
        return

    def damaged(node: object) -> object:
        if isinstance(node, dict):
            out = {k: damaged(v) for k, v in node.items()}
            for key, value in damage:
                if key in out:
                    out[key] = value
            return out
        if isinstance(node, list):
            return [damaged(v) for v in node]
        return node

    result = parse_webhook(damaged(payload), received_at=RECEIVED, tz=TZ)
    assert isinstance(result, Webhook)


def test_an_echo_from_the_business_app_is_a_staff_message_to_that_person() -> None:
    payload = json.loads((CORPUS / "cloud_field_smb_message_echoes.json").read_text())
    # The corpus' placeholder ("<WHATSAPP_USER_PHONE_NUMBER>") breaks the conversation-id rule.
    payload["entry"][0]["changes"][0]["value"]["message_echoes"][0]["to"] = "972987654321"
    result = parse_webhook(payload, received_at=RECEIVED, tz=TZ)
    assert not result.messages and not result.ignored
    (echo,) = result.echoes
    assert echo.conversation_id == USER
    assert echo.message_id == "<WHATSAPP_MESSAGE_ID>" and echo.text == "Test message"
    assert echo.at.timestamp() == 1697043223
