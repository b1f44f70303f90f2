"""Evolution API webhook bodies, read into what the gateway acts on (pure: no I/O, no clock).

The envelope is ``{event, instance, data, sender, apikey, ...}``; ``apikey`` (the instance's
key) is never kept or journaled. Only ``messages.upsert`` of one-to-one chats makes messages:

- the chat is ``remoteJid``: a phone JID (``@s.whatsapp.net``), or a privacy id (``@lid``)
  whose phone JID Evolution gives in ``remoteJidAlt`` (2.3.5+) or ``senderPn``; a lid without
  either, groups (``@g.us``), broadcasts and status updates (``@broadcast``), newsletters, and a
  message in the business's own chat (``remoteJid`` = ``sender``) are ignored;
- the number is made canonical (``numbers.canonical``: the ninth digit), so the conversation
  ``evo:{instance}:{number}`` is one per customer;
- text is ``message.conversation`` (v2.2+ moves every text there) or
  ``message.extendedTextMessage.text`` (v1); media keep their caption as text and their kind
  (image, audio...) so a turn of only those gets the same notices as on WhatsApp;
- ``key.fromMe: true`` is the business's own number writing: our echo or a person on the phone,
  which only the adapter can tell (it remembers what it sent), so those come back apart;
- ``key.id`` is the message id (Evolution may deliver a webhook twice: ingest dedupes on it).

Every other event (``messages.update``, ``connection.update``, ``send.message``...) is
acknowledged as ignored; ``connection.update`` also says the session's state for ``/healthz``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo
from typing import Any

from pydantic import BaseModel, Field

from services.gateway.channels.webhooks import Ignored, safe_id
from services.gateway.evolution.numbers import canonical, number_of_jid
from services.gateway.evolution.settings import NAME
from services.gateway.evolution.spec import PREFIX
from shared.contracts import InboundMessage, is_conversation_id

UPSERT = "messages.upsert"
CONNECTION = "connection.update"
# Evolution's message types → our kinds (the WhatsApp names, so the pack's notices apply).
MEDIA = {
    "imageMessage": "image",
    "videoMessage": "video",
    "audioMessage": "audio",
    "documentMessage": "document",
    "documentWithCaptionMessage": "document",
    "stickerMessage": "sticker",
    "ptvMessage": "video",
}
NOTICES = {
    "locationMessage": "location",
    "liveLocationMessage": "location",
    "contactMessage": "contacts",
    "contactsArrayMessage": "contacts",
    "reactionMessage": "reaction",
}
# What a message carries besides its content (never the content itself).
NOT_CONTENT = frozenset({"messageContextInfo", "base64", "senderKeyDistributionMessage"})
IGNORED_TYPES = frozenset({"protocolMessage", "editedMessage", "pollUpdateMessage"})


class FromBusiness(BaseModel):
    """A message the business's own number sent (``fromMe``): our echo or a person's."""

    conversation_id: str
    message_id: str
    text: str
    at: datetime


class Webhook(BaseModel):
    instance: str | None = None
    messages: list[InboundMessage] = Field(default_factory=list)
    from_business: list[FromBusiness] = Field(default_factory=list)
    ignored: list[Ignored] = Field(default_factory=list)
    # connection.update: {"state": ..., "status_reason": ...}
    connection: dict[str, Any] | None = None


def conversation_id(instance: str, number: str) -> str:
    return f"{PREFIX}{instance}:{number}"


def split_conversation_id(value: str) -> tuple[str, str] | None:
    """(instance, number) of an Evolution conversation id; None for any other id."""
    if not value.startswith(PREFIX):
        return None
    instance, _, number = value.removeprefix(PREFIX).rpartition(":")
    return (instance, number) if instance and number.isdigit() else None


def event_of(body: dict[str, Any]) -> str:
    """``messages.upsert`` whether Evolution wrote it so or ``MESSAGES_UPSERT``."""
    return (_str(body.get("event")) or "").lower().replace("_", ".")


def instance_of(payload: Any) -> str | None:
    """The instance a decoded body names, read before it is authenticated: it says whose
    secret must have authenticated it. Never raises."""
    return _str(_dict(payload).get("instance"))


def parse_webhook(payload: Any, *, received_at: datetime, tz: tzinfo) -> Webhook:
    """Read one webhook body (already JSON-decoded). Never raises."""
    body = _dict(payload)
    instance = _str(body.get("instance"))
    out = Webhook(instance=instance)
    event = event_of(body)
    if event == CONNECTION:
        data = _dict(body.get("data"))
        out.connection = {
            "state": _str(data.get("state")),
            "status_reason": _str(data.get("statusReason")),
        }
    if event != UPSERT:
        out.ignored.append(Ignored(reason=f"event:{event or '?'}"))
        return out
    if not instance:
        out.ignored.append(Ignored(reason="no_instance"))
        return out
    own = _str(body.get("sender"))
    items = body.get("data")
    for item in items if isinstance(items, list) else [items]:
        _read(_dict(item), instance, own, received_at, tz, out)
    return out


def _read(
    data: dict[str, Any],
    instance: str,
    own: str | None,
    received_at: datetime,
    tz: tzinfo,
    out: Webhook,
) -> None:
    key = _dict(data.get("key"))
    jid = _str(key.get("remoteJid")) or ""
    message_id = _str(key.get("id"))
    number, reason = _number(key, jid, own)
    if number is None:
        out.ignored.append(Ignored(reason=reason, message_id=message_id))
        return
    conv = conversation_id(instance, canonical(number))
    if not message_id or not safe_id(message_id) or not is_conversation_id(conv):
        out.ignored.append(Ignored(reason="unaddressable", message_id=message_id))
        return
    content = _content(_dict(data.get("message")))
    if isinstance(content, str):
        out.ignored.append(Ignored(reason=content, conversation_id=conv, message_id=message_id))
        return
    text, kind, meta = content
    at = _time(data.get("messageTimestamp"), tz) or received_at.astimezone(tz)
    if key.get("fromMe") is True:
        said = text or f"[{kind}]"
        out.from_business.append(
            FromBusiness(conversation_id=conv, message_id=message_id, text=said, at=at)
        )
        return
    name = _str(data.get("pushName"))
    metadata: dict[str, Any] = {"instance": instance, "evolution_id": message_id, **meta}
    if name:
        metadata["profile_name"] = name
    out.messages.append(
        InboundMessage(
            channel=NAME,
            conversation_id=conv,
            message_id=message_id,
            text=text,
            kind=kind,
            sent_at=at,
            received_at=received_at,
            contact=canonical(number),
            metadata=metadata,
        )
    )


def _number(key: dict[str, Any], jid: str, own: str | None) -> tuple[str | None, str]:
    """The customer's number of a one-to-one chat, or (None, why it is ignored)."""
    if jid.endswith("@g.us"):
        return None, "group"
    if jid.endswith("@broadcast"):
        return None, "broadcast"
    if jid.endswith("@newsletter"):
        return None, "newsletter"
    if own and jid == own:
        return None, "own_chat"
    if jid.endswith("@lid"):
        for alt in ("remoteJidAlt", "senderPn"):
            number = number_of_jid(_str(key.get(alt)) or "")
            if number:
                return number, ""
        return None, "lid_without_number"
    number = number_of_jid(jid)
    return (number, "") if number else (None, "unaddressable")


def _content(message: dict[str, Any]) -> tuple[str, str, dict[str, Any]] | str:
    """(text, kind, metadata) of a message, or the reason it is ignored."""
    if isinstance(message.get("conversation"), str):
        return message["conversation"], "text", {}
    extended = _dict(message.get("extendedTextMessage"))
    if isinstance(extended.get("text"), str):
        return extended["text"], "text", {}
    for name, kind in MEDIA.items():
        if name in message:
            media = _dict(message[name])
            if name == "documentWithCaptionMessage":
                media = _dict(_dict(media.get("message")).get("documentMessage"))
            meta = {
                "media": {k: media[k] for k in ("mimetype", "seconds") if _scalar(media.get(k))}
            }
            return _str(media.get("caption")) or "", kind, meta
    for name, kind in NOTICES.items():
        if name in message:
            if name == "reactionMessage" and not _str(_dict(message[name]).get("text")):
                return "reaction_removed"
            return "", kind, {}
    types = [name for name in message if name not in NOT_CONTENT]
    if not types:
        return "no_content"
    if any(name in IGNORED_TYPES for name in types):
        return "protocol"
    return "", "unsupported", {"unsupported": {"type": types[0][:64]}}


def _time(raw: Any, tz: tzinfo) -> datetime | None:
    """Unix seconds as a number, a string, or a protobuf Long (``{low, high}``)."""
    if isinstance(raw, dict):
        low, high = raw.get("low"), raw.get("high")
        raw = (
            (high << 32) + (low & 0xFFFFFFFF)
            if isinstance(low, int) and isinstance(high, int)
            else None
        )
    if isinstance(raw, str) and raw.strip().isdigit():
        raw = int(raw.strip())
    if not isinstance(raw, int) or isinstance(raw, bool) or raw <= 0:
        return None
    try:
        return datetime.fromtimestamp(raw, UTC).astimezone(tz)
    except (OverflowError, OSError, ValueError):
        return None


def decode(raw: bytes) -> Any:
    """The body as JSON, or None when it is not JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
