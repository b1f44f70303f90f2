"""Where a conversation came from, read from its meta slice (written by the gateway's ingest).

The click-to-WhatsApp ad (``referral``: ``ctwa_clid``, ``source_id``, ``headline``...) names the
source when there is one; otherwise the first message's ``origin`` (the HTTP channel's field:
``inbound``, ``campaign:<id>``). Bookings and the funnel carry the same attribution.
"""

from __future__ import annotations

from typing import Any

from shared.contracts import MetaView


def source_of(meta: MetaView | None) -> str:
    """``ctwa:<source_id>`` for an ad click, else the first message's origin."""
    referral = (meta.referral if meta else None) or {}
    if referral.get("source_id"):
        return f"ctwa:{referral['source_id']}"
    return (meta.origin if meta else None) or "inbound"


def attribution(meta: MetaView | None) -> dict[str, Any]:
    """The fields a booking keeps: its source, and the ad's referral when there was one."""
    fields: dict[str, Any] = {"source": source_of(meta)}
    referral = meta.referral if meta else None
    if referral:
        fields["referral"] = {
            k: referral[k] for k in ("ctwa_clid", "source_id", "headline") if k in referral
        }
    return fields
