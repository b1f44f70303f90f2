"""What every channel's webhook does the same way.

- Read the raw body within a bound: a signature is computed over the exact bytes the provider
  sent, so routes read the raw body themselves (never a parsed model), and stop reading at the
  channel's limit: a missing or false Content-Length does not get a larger body past it.
- Say what a delivery carried that is not a message (``Ignored``), and journal it once per
  message id however often the provider delivers it (``journal_once``).
- Take a provider's message id into key names only when it is safe there (``safe_id``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from fastapi import Request
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from shared.service import Runtime

# A message id becomes part of Redis key names (inside a hash tag): no braces, blanks or
# controls.
_SAFE_ID = re.compile(r"^[^\s{}\x00-\x1f]{1,128}$")


def safe_id(message_id: str) -> bool:
    return bool(_SAFE_ID.match(message_id))


class Ignored(BaseModel):
    """Something a webhook delivered that is acknowledged and journaled, not turned into a
    message (a status, an event of no interest, a group message...)."""

    reason: str
    conversation_id: str | None = None
    message_id: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class StaffEchoes(Protocol):
    """The staff inbox's record of a message the business sent from elsewhere (a person on
    the provider's own app): it makes that person the conversation's owner."""

    async def record_echo(
        self, conversation_id: str, message_id: str, text: str, at: datetime, agent: str
    ) -> bool: ...


async def journal_once(rt: Runtime, conversation_id: str, once_id: str | None, entry: str) -> None:
    """Append ``entry`` to the conversation's journal, once per ``once_id`` (a dedupe claim:
    a redelivery of something already journaled writes nothing)."""
    if once_id:
        seen = rt.keys.dedupe(conversation_id, once_id)
        if not await rt.redis.set(seen, "1", nx=True, ex=rt.settings.dedupe_ttl_s):
            return
    await rt.store.append_journal(conversation_id, entry)


class BodyTooLarge(Exception):
    pass


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)
