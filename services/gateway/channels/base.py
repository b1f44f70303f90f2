"""What a channel adapter does: deliver a composed reply, exactly once per turn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from shared.contracts import Reply


@dataclass(frozen=True)
class Delivery:
    """Outcome of handing a reply to a channel."""

    status: str  # "sent" | "duplicate" | "failed" | "unknown" (a person's message, see WhatsApp)
    detail: str = ""


class Channel(Protocol):
    name: str
    # True when ``deliver`` also writes the reply into the conversation's history (in the
    # same step); otherwise egress writes it after the delivery.
    writes_history: bool

    async def deliver(self, reply: Reply) -> Delivery: ...
