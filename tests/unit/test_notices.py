from __future__ import annotations

from datetime import UTC, datetime

from shared.contracts import InboundMessage
from shared.notices import notice_key, notice_keys, unreadable
from shared.pack import load_pack

T = datetime(2026, 2, 10, 18, 0, tzinfo=UTC)


def msg(kind: str, text: str = "") -> InboundMessage:
    return InboundMessage(
        channel="whatsapp", conversation_id="c", message_id=kind + text, text=text, kind=kind,
        sent_at=T, received_at=T,
    )  # fmt: skip


def test_mixed_turn_names_each_unreadable_kind_once_in_order() -> None:
    texts = load_pack("ctsmash").sections["texts"]
    messages = [msg("text", "oi"), msg("audio"), msg("image"), msg("audio")]
    messages.append(msg("image", "legenda"))
    assert notice_keys(messages, texts) == ["channel_audio", "channel_image"]
    assert not unreadable(msg("image", "uma legenda é texto"))


def test_unknown_kind_falls_back_then_to_nothing() -> None:
    assert notice_key("hologram", {"channel_other": "x"}) == "channel_other"
    assert notice_key("hologram", {}) is None
