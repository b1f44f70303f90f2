"""A conversation's reply window, as the meta slice keeps it.

Some channels take free-form messages from a business only for a while after the customer's
last message (WhatsApp: 24 hours; the gateway's channel adapters declare theirs). The gateway's
ingest stores the expiry as ``window_expires_at`` for such a channel, and null for any other,
so a service that messages a customer (trial's staff cancellations) reads the window from the
meta slice without knowing which channel has one (``shared.contracts.MetaView.window_closed``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

FIELD = "window_expires_at"


def window_expires_at(sent_at: datetime, window: timedelta | None) -> str | None:
    """The stored expiry after a customer's message at ``sent_at``; None without a window."""
    return (sent_at + window).isoformat() if window is not None else None
