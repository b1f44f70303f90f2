"""Chatwoot Agent Bot webhook bodies, read into what the gateway acts on (pure: no I/O, no clock).

The conversation is ``cw:{account.id}:{conversation.id}`` (a conversation event carries its
account only in ``messages[].account_id``). What each event means:

- ``message_created``, ``message_type: incoming``, not ``private``: a customer's message
  (``Customer``), with ``owned_by_bot`` when the conversation's ``status`` is ``pending`` (the
  agent bot's); in any other status a person owns it. Its text is the top-level ``content``
  (``conversation.messages[]`` may hold another message); attachments only (``content: null``)
  keep their kind (image, audio...) so the pack's notices answer them;
- ``message_created``, ``outgoing`` from a ``user`` (an agent): a person writes (``Agent``);
  from the ``agent_bot`` (our own replies): ignored, like private notes, templates and activity
  messages;
- a status change (``conversation_status_changed``, ``conversation_opened``,
  ``conversation_resolved``, a ``status`` in ``conversation_updated``'s ``changed_attributes``):
  ``Ownership`` — ``open`` is a person's, ``pending`` the bot's again. The event's name decides
  for ``conversation_opened``/``resolved`` (their documented bodies carry stale statuses);
- anything else: ignored.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo
from typing import Any

from pydantic import BaseModel, Field

from services.gateway.channels.webhooks import Ignored
from services.gateway.chatwoot.settings import NAME
from services.gateway.chatwoot.spec import PREFIX
from shared.contracts import InboundMessage, is_conversation_id

BOT_STATUS = "pending"
# The reason a message the agent bot itself posted (our reply, coming back) is ignored.
OWN_MESSAGE = "own_message"
# Chatwoot's attachment file types → our kinds (the WhatsApp names, so the pack's notices apply).
KINDS = {
    "image": "image",
    "audio": "audio",
    "video": "video",
    "file": "document",
    "location": "location",
    "contact": "contacts",
}


class Customer(BaseModel):
    message: InboundMessage
    owned_by_bot: bool
    agent: str | None = None  # who is assigned, when a person owns it


class Agent(BaseModel):
    """A message an agent wrote in Chatwoot."""

    conversation_id: str
    message_id: str
    text: str
    at: datetime
    agent: str


class Ownership(BaseModel):
    conversation_id: str
    status: str
    agent: str | None = None


class Event(BaseModel):
    account: str | None = None
    customer: Customer | None = None
    agent: Agent | None = None
    ownership: Ownership | None = None
    ignored: list[Ignored] = Field(default_factory=list)


def conversation_id(account: str, conversation: str) -> str:
    return f"{PREFIX}{account}:{conversation}"


def split_conversation_id(value: str) -> tuple[str, str] | None:
    """(account, conversation) of a Chatwoot conversation id; None for any other id."""
    if not value.startswith(PREFIX):
        return None
    account, _, conversation = value.removeprefix(PREFIX).partition(":")
    return (account, conversation) if account.isdigit() and conversation.isdigit() else None


def decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


def account_of(payload: Any) -> str | None:
    """The account a decoded body names, read before it is authenticated (it says whose
    tenant, and so whose secret). Never raises."""
    body = _dict(payload)
    account = _id(_dict(body.get("account")).get("id"))
    if account is None:
        for message in _list(_dict(body.get("conversation")).get("messages")) or _list(
            body.get("messages")
        ):
            account = account or _id(_dict(message).get("account_id"))
    return account


def parse_event(payload: Any, *, received_at: datetime, tz: tzinfo) -> Event:
    """Read one webhook body (already JSON-decoded). Never raises."""
    body = _dict(payload)
    account = account_of(body)
    event = Event(account=account)
    name = _str(body.get("event")) or "?"
    if name == "message_created":
        _message(body, account, received_at, tz, event)
        return event
    status = _status_change(name, body)
    conversation = _id(body.get("id"))
    if status is None or account is None or conversation is None:
        event.ignored.append(Ignored(reason=f"event:{name}"))
        return event
    conv = conversation_id(account, conversation)
    if not is_conversation_id(conv):
        event.ignored.append(Ignored(reason="unaddressable"))
        return event
    event.ownership = Ownership(conversation_id=conv, status=status, agent=_assignee(body))
    return event


def _status_change(name: str, body: dict[str, Any]) -> str | None:
    if name == "conversation_opened":
        return "open"
    if name == "conversation_resolved":
        return "resolved"
    if name == "conversation_status_changed":
        return _str(body.get("status"))
    if name == "conversation_updated":
        for change in _list(body.get("changed_attributes")):
            status = _dict(_dict(change).get("status"))
            if "current_value" in status:
                return _str(status["current_value"])
    return None


def _message(
    body: dict[str, Any], account: str | None, received_at: datetime, tz: tzinfo, event: Event
) -> None:
    chat = _dict(body.get("conversation"))
    conversation = _id(chat.get("id"))
    message_id = _id(body.get("id"))
    conv = conversation_id(account, conversation) if account and conversation else None
    if conv is None or message_id is None or not is_conversation_id(conv):
        event.ignored.append(Ignored(reason="unaddressable", message_id=message_id))
        return
    kind = _str(body.get("message_type"))
    sender = _dict(body.get("sender"))

    def ignore(reason: str) -> None:
        event.ignored.append(Ignored(reason=reason, conversation_id=conv, message_id=message_id))

    if body.get("private") is True:
        ignore("private")
        return
    at = _time(body.get("created_at"), tz) or received_at.astimezone(tz)
    content = _str(body.get("content")) or ""
    if kind == "outgoing":
        who = _str(sender.get("type"))
        if who != "user":
            reason = OWN_MESSAGE if who == "agent_bot" else f"outgoing:{who or '?'}"
            ignore(reason)
            return
        name = _str(sender.get("available_name")) or _str(sender.get("name")) or "agent"
        event.agent = Agent(
            conversation_id=conv,
            message_id=message_id,
            text=content or "[attachment]",
            at=at,
            agent=f"{NAME}:{name}",
        )
        return
    if kind != "incoming":
        ignore(f"message_type:{kind or '?'}")
        return
    attachments = [_dict(a) for a in _list(body.get("attachments"))]
    message_kind = "text"
    metadata: dict[str, Any] = {"account": account, "chatwoot_conversation": conversation}
    if not content and attachments:
        file_type = _str(attachments[0].get("file_type")) or ""
        message_kind = KINDS.get(file_type, "unsupported")
        metadata["attachments"] = [_str(a.get("file_type")) for a in attachments]
    elif not content:
        ignore("no_content")
        return
    contact = _dict(_dict(chat.get("meta")).get("sender"))
    profile = _str(contact.get("name")) or _str(sender.get("name"))
    if profile:
        metadata["profile_name"] = profile
    status = _str(chat.get("status"))
    event.customer = Customer(
        message=InboundMessage(
            channel=NAME,
            conversation_id=conv,
            message_id=f"cw-{message_id}",
            text=content,
            kind=message_kind,
            sent_at=at,
            received_at=received_at,
            contact=_str(contact.get("phone_number")) or _id(contact.get("id")),
            metadata=metadata,
        ),
        owned_by_bot=status == BOT_STATUS,
        agent=_assignee(chat),
    )


def _assignee(conversation: dict[str, Any]) -> str | None:
    assignee = _dict(_dict(conversation.get("meta")).get("assignee"))
    name = _str(assignee.get("available_name")) or _str(assignee.get("name"))
    return f"{NAME}:{name}" if name else None


def _time(raw: Any, tz: tzinfo) -> datetime | None:
    """An ISO string (top-level message events) or unix seconds (inside ``messages[]``)."""
    try:
        if isinstance(raw, str):
            parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
            return parsed.astimezone(tz) if parsed.tzinfo else None
        if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0:
            return datetime.fromtimestamp(raw, UTC).astimezone(tz)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def _id(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return str(value)
    if isinstance(value, str) and value.isdigit():
        return value
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
