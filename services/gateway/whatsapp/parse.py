"""Meta's webhook payloads, read into what the gateway acts on (pure: no I/O, no clock).

One POST may carry several entries, each with several changes, each with several messages and
statuses, so every level is iterated. Nothing in a payload makes parsing fail: whatever is not a
message or a status (unsupported types, system messages, value-level errors, other webhook
fields, foreign payloads) comes back as an :class:`Ignored` item to acknowledge and journal.

Messages become :class:`InboundMessage` with ``kind`` = Meta's type:
- ``text``, interactive button/list replies and template quick-reply buttons are text (the
  reply's title, its id in ``metadata.reply_id``);
- media keep their caption as text (a captioned photo is read like any text);
- media without caption, locations, contacts, reactions, orders and Flow answers have empty
  text: the gateway answers them with a pack text (``notices.py``);
- ``unsupported`` (and its older name ``unknown``, error 131051: a type Cloud API does not
  deliver, e.g. a poll) is a message of kind ``unsupported`` with empty text, answered the same
  way (``channel_other``), so the person learns the bot could not read it;
- ``edit`` (a person edited an earlier message; Meta sends the new content under
  ``edit.message`` with ``edit.original_message_id``) is a new message of its conversation with
  the edited content, read like any message of the inner type; the original id is kept in
  ``metadata.edited``. The edit has its own wamid, so dedupe never mistakes it for the original.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo
from typing import Any

from pydantic import BaseModel, Field

from services.gateway.channels.webhooks import Ignored, safe_id
from shared.contracts import InboundMessage, is_conversation_id

CHANNEL = "whatsapp"
CONVERSATION_PREFIX = "wa:"
OBJECT = "whatsapp_business_account"
MESSAGES_FIELD = "messages"
ECHOES_FIELD = "smb_message_echoes"

MEDIA_KINDS = ("image", "video", "audio", "document", "sticker")
IGNORED_KINDS = ("system",)
UNSUPPORTED_KINDS = ("unsupported", "unknown")
EDIT_KIND = "edit"


class StatusUpdate(BaseModel):
    """A delivery status of a message the business sent (sent, delivered, read, failed...)."""

    wamid: str
    status: str
    at: datetime | None = None
    recipient_id: str | None = None
    phone_number_id: str | None = None
    conversation_id: str | None = None
    errors: list[dict[str, Any]] = Field(default_factory=list)


class Echo(BaseModel):
    """A message the business sent from the WhatsApp Business app on the same number
    (coexistence, field ``smb_message_echoes``): staff are talking to this person."""

    conversation_id: str
    message_id: str
    text: str
    at: datetime


class Webhook(BaseModel):
    """Everything one webhook delivery said, in payload order."""

    messages: list[InboundMessage] = Field(default_factory=list)
    statuses: list[StatusUpdate] = Field(default_factory=list)
    echoes: list[Echo] = Field(default_factory=list)
    ignored: list[Ignored] = Field(default_factory=list)


def conversation_id(phone_number_id: str, sender: str) -> str:
    """One conversation per (business number, person): a deployment may serve several numbers."""
    return f"{CONVERSATION_PREFIX}{phone_number_id}:{sender}"


def split_conversation_id(value: str) -> tuple[str, str] | None:
    """(business number, person) of a WhatsApp conversation id; None for any other id."""
    prefix, _, rest = value.partition(":")
    number, _, sender = rest.partition(":")
    if prefix != "wa" or not number or not sender:
        return None
    return number, sender


def error_list(raw: Any) -> list[dict[str, Any]]:
    """Meta error objects, flattened to code/title/message/details (any may be missing)."""
    out: list[dict[str, Any]] = []
    for item in _list(raw):
        err = _dict(item)
        out.append(
            {
                "code": _int(err.get("code")),
                "title": _str(err.get("title")),
                "message": _str(err.get("message")),
                "details": _str(_dict(err.get("error_data")).get("details"))
                or _str(err.get("details")),
            }
        )
    return out


# What ``decode`` gives for a body that is not JSON at all.
NOT_JSON = object()


def decode(raw: bytes) -> Any:
    """A webhook body decoded once, for both the tenant lookup and the parse (``NOT_JSON``
    when it is not JSON)."""
    try:
        return json.loads(raw)
    except ValueError:
        return NOT_JSON


def business_numbers(payload: Any) -> set[str]:
    """The business numbers (``metadata.phone_number_id``) a decoded webhook body names, read
    before its signature is checked: they say whose app secret must have signed it. Never
    raises."""
    body = _dict(_readable(payload))
    numbers = set()
    for entry in _list(body.get("entry")):
        for change in _list(_dict(entry).get("changes")):
            value = _dict(_dict(change).get("value"))
            if number := _str(_dict(value.get("metadata")).get("phone_number_id")):
                numbers.add(number)
    return numbers


def parse_webhook(payload: Any, *, received_at: datetime, tz: tzinfo) -> Webhook:
    """Read one webhook body (already JSON-decoded). Never raises."""
    out = Webhook()
    body = _dict(_readable(payload))
    if body.get("object") != OBJECT:
        keys = sorted(str(k) for k in body)[:10]
        out.ignored.append(Ignored(reason="foreign_payload", detail={"keys": keys}))
        return out
    for entry in _list(body.get("entry")):
        for change in _list(_dict(entry).get("changes")):
            change = _dict(change)
            field = _str(change.get("field")) or "?"
            value = _dict(change.get("value"))
            if field == ECHOES_FIELD:
                _read_echoes(value, received_at, tz, out)
                continue
            if field != MESSAGES_FIELD:
                out.ignored.append(Ignored(reason=f"field:{field}", detail=_summary(value)))
                continue
            _read_messages_value(value, received_at, tz, out)
    return out


def _read_echoes(value: dict[str, Any], received_at: datetime, tz: tzinfo, out: Webhook) -> None:
    number = _str(_dict(value.get("metadata")).get("phone_number_id"))
    for raw in _list(value.get("message_echoes")):
        echo = _dict(raw)
        wamid = _str(echo.get("id"))
        person = _str(echo.get("to")) or _str(echo.get("to_user_id"))
        if not (number and person and wamid and _addressable(number, person, wamid)):
            out.ignored.append(Ignored(reason="malformed_echo", detail=_summary(echo)))
            continue
        kind = _str(echo.get("type")) or "unknown"
        content = _content(kind, echo)
        text = content[0] if isinstance(content, tuple) and content[0] else f"[{kind}]"
        out.echoes.append(
            Echo(
                conversation_id=conversation_id(number, person),
                message_id=wamid,
                text=text,
                at=_time(echo.get("timestamp"), tz) or received_at.astimezone(tz),
            )
        )


def _read_messages_value(
    value: dict[str, Any], received_at: datetime, tz: tzinfo, out: Webhook
) -> None:
    metadata = _dict(value.get("metadata"))
    number = _str(metadata.get("phone_number_id"))
    contacts = [_dict(c) for c in _list(value.get("contacts"))]
    errors = error_list(value.get("errors"))
    if errors:
        out.ignored.append(Ignored(reason="errors", detail={"errors": errors}))
    for index, raw in enumerate(_list(value.get("messages"))):
        message = _dict(raw)
        result = _read_message(message, index, contacts, number, metadata, received_at, tz)
        if isinstance(result, InboundMessage):
            out.messages.append(result)
        else:
            out.ignored.append(result)
    for raw in _list(value.get("statuses")):
        status = _dict(raw)
        wamid = _str(status.get("id"))
        kind = _str(status.get("status"))
        if not wamid or not kind:
            out.ignored.append(Ignored(reason="malformed_status", detail=_summary(status)))
            continue
        recipient = _str(status.get("recipient_id"))
        conv = conversation_id(number, recipient) if number and recipient else None
        out.statuses.append(
            StatusUpdate(
                wamid=wamid,
                status=kind,
                at=_time(status.get("timestamp"), tz),
                recipient_id=recipient,
                phone_number_id=number,
                conversation_id=conv if conv and is_conversation_id(conv) else None,
                errors=error_list(status.get("errors")),
            )
        )


def _read_message(
    message: dict[str, Any],
    index: int,
    contacts: list[dict[str, Any]],
    number: str | None,
    metadata: dict[str, Any],
    received_at: datetime,
    tz: tzinfo,
) -> InboundMessage | Ignored:
    wamid = _str(message.get("id"))
    kind = _str(message.get("type")) or "unknown"
    contact = _contact_for(message, index, contacts)
    sender = (
        _str(message.get("from"))
        or _str(message.get("from_user_id"))
        or _str(contact.get("user_id"))
        or _str(contact.get("wa_id"))
    )
    if not number or not sender or not wamid or not _addressable(number, sender, wamid):
        detail = {"type": kind, "has_sender": bool(sender), "has_number": bool(number)}
        return Ignored(reason="unaddressable", message_id=wamid, detail=detail)
    conv = conversation_id(number, sender)
    errors = error_list(message.get("errors"))
    if kind in IGNORED_KINDS:
        detail: dict[str, Any] = {"type": kind, "errors": errors}
        system = _dict(message.get("system"))
        if system:
            detail["system"] = _str(system.get("type"))
        return Ignored(reason=kind, conversation_id=conv, message_id=wamid, detail=detail)
    content, edited = message, None
    if kind == EDIT_KIND:
        edit = _dict(message.get(EDIT_KIND))
        content, edited = _dict(edit.get("message")), _str(edit.get("original_message_id"))
        kind = _str(content.get("type")) or ""
    read = _content(kind, content) if kind not in ("", EDIT_KIND) else "malformed_edit"
    if isinstance(read, str):
        detail = {"type": kind, "errors": errors}
        return Ignored(reason=read, conversation_id=conv, message_id=wamid, detail=detail)
    text, final_kind, extra = read
    meta: dict[str, Any] = {
        "wamid": wamid,
        "phone_number_id": number,
        "display_phone_number": _str(metadata.get("display_phone_number")),
        **extra,
    }
    if edited:
        meta["edited"] = edited
    name = _str(_dict(contact.get("profile")).get("name"))
    if name:
        meta["profile_name"] = name
    context = _dict(content.get("context")) or _dict(message.get("context"))
    if context:
        meta["context"] = {k: context[k] for k in sorted(context) if _scalar(context[k])}
    referral = _dict(message.get("referral"))
    if referral:
        meta["referral"] = {
            k: referral[k]
            for k in ("source_type", "source_id", "source_url", "headline", "ctwa_clid")
            if _scalar(referral.get(k))
        }
    return InboundMessage(
        channel=CHANNEL,
        conversation_id=conv,
        message_id=wamid,
        text=text,
        kind=final_kind,
        sent_at=_time(message.get("timestamp"), tz) or received_at,
        received_at=received_at,
        contact=sender,
        metadata=meta,
    )


def _content(kind: str, message: dict[str, Any]) -> tuple[str, str, dict[str, Any]] | str:
    """(text, kind, metadata) of a message, or the reason it is ignored."""
    body = _dict(message.get(kind))
    if kind == "text":
        return _str(body.get("body")) or "", "text", {}
    if kind == "button":
        text = _str(body.get("text")) or _str(body.get("payload"))
        if not text:
            return "malformed_button"
        meta = {"reply_type": "quick_reply", "reply_id": _str(body.get("payload"))}
        return text, "text", meta
    if kind == "interactive":
        return _interactive(body)
    if kind in MEDIA_KINDS:
        meta = {
            "media": {
                k: body[k]
                for k in ("id", "mime_type", "filename", "voice", "animated")
                if _scalar(body.get(k))
            }
        }
        return _str(body.get("caption")) or "", kind, meta
    if kind == "location":
        keys = ("latitude", "longitude", "name", "address")
        return "", kind, {"location": {k: body[k] for k in keys if _scalar(body.get(k))}}
    if kind == "contacts":
        return "", kind, {"contacts": len(_list(message.get("contacts")))}
    if kind == "reaction":
        emoji = _str(body.get("emoji"))
        if not emoji:
            return "reaction_removed"
        return "", kind, {"reaction": {"emoji": emoji, "message_id": _str(body.get("message_id"))}}
    if kind in UNSUPPORTED_KINDS:
        codes = [e["code"] for e in error_list(message.get("errors")) if e["code"] is not None]
        meta = {"unsupported": {"type": _str(body.get("type")), "errors": codes}}
        return "", "unsupported", meta
    if kind == "order":
        items = _list(body.get("product_items"))
        meta = {"order": {"catalog_id": _str(body.get("catalog_id")), "items": len(items)}}
        return _str(body.get("text")) or "", kind, meta
    return "unknown_type"


def _interactive(body: dict[str, Any]) -> tuple[str, str, dict[str, Any]] | str:
    subtype = _str(body.get("type"))
    if subtype in ("button_reply", "list_reply"):
        reply = _dict(body.get(subtype))
        title = _str(reply.get("title"))
        if not title:
            return "malformed_interactive"
        meta = {"reply_type": subtype, "reply_id": _str(reply.get("id"))}
        return title, "text", meta
    if subtype == "nfm_reply":
        flow = _dict(body.get("nfm_reply"))
        return "", "flow", {"flow": {"name": _str(flow.get("name"))}}
    return "unsupported_interactive"


def _contact_for(
    message: dict[str, Any], index: int, contacts: list[dict[str, Any]]
) -> dict[str, Any]:
    """The sender's contact entry: by wa_id; without ``from``, the entry at the same position."""
    sender = _str(message.get("from"))
    if sender:
        return next((c for c in contacts if _str(c.get("wa_id")) == sender), {})
    if index < len(contacts):
        return contacts[index]
    return contacts[0] if len(contacts) == 1 else {}


def _summary(value: dict[str, Any]) -> dict[str, Any]:
    """A short, scalar-only view of an ignored value for the journal."""
    return {k: value[k] for k in sorted(value)[:12] if _scalar(value[k])}


def _readable(value: Any) -> Any:
    """``value`` with every lone surrogate (a ``\\ud800`` escape in the JSON: never text)
    replaced by U+FFFD. A string holding one cannot be encoded, so it could be neither stored
    nor journaled."""
    if isinstance(value, str):
        if value.isascii():
            return value
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, list):
        return [_readable(v) for v in value]
    if isinstance(value, dict):
        return {_readable(k): _readable(v) for k, v in value.items()}
    return value


def _time(raw: Any, tz: tzinfo) -> datetime | None:
    seconds = _int(raw)
    if seconds is None or seconds <= 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC).astimezone(tz)
    except (OverflowError, OSError, ValueError):
        return None


def _addressable(number: str, sender: str, wamid: str) -> bool:
    return safe_id(wamid) and is_conversation_id(conversation_id(number, sender))


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None
