"""A conversation's reply window, as the meta slice keeps it.

Some channels take free-form messages from a business only for a while after the customer's
last message (WhatsApp: 24 hours; the gateway's channel adapters declare theirs). The gateway's
ingest stores the expiry as ``window_expires_at`` for such a channel, and null for any other,
so a service that messages a customer (trial's staff cancellations) reads the window from the
meta slice without knowing which channel has one.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

FIELD = "window_expires_at"


def window_expires_at(sent_at: datetime, window: timedelta | None) -> str | None:
    """The stored expiry after a customer's message at ``sent_at``; None without a window."""
    return (sent_at + window).isoformat() if window is not None else None


def window_closed(meta: Mapping[str, Any], now: datetime) -> bool:
    """Whether the stored window has passed at ``now``: a message then goes as a template."""
    expires = meta.get(FIELD)
    if not expires:
        return False
    return datetime.fromisoformat(expires) <= now
