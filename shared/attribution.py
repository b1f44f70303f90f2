"""Where a conversation came from, read from its meta slice (written by the gateway's ingest).

The click-to-WhatsApp ad (``referral``: ``ctwa_clid``, ``source_id``, ``headline``...) names the
source when there is one; otherwise the first message's ``origin`` (the HTTP channel's field:
``inbound``, ``campaign:<id>``). Bookings and the funnel carry the same attribution.
"""

from __future__ import annotations

from typing import Any


def source_of(meta: dict[str, Any] | None) -> str:
    """``ctwa:<source_id>`` for an ad click, else the first message's origin."""
    meta = meta or {}
    referral = meta.get("referral") or {}
    if isinstance(referral, dict) and referral.get("source_id"):
        return f"ctwa:{referral['source_id']}"
    return str(meta.get("origin") or "inbound")


def attribution(meta: dict[str, Any] | None) -> dict[str, Any]:
    """The fields a booking keeps: its source, and the ad's referral when there was one."""
    meta = meta or {}
    fields: dict[str, Any] = {"source": source_of(meta)}
    referral = meta.get("referral")
    if isinstance(referral, dict) and referral:
        fields["referral"] = {
            k: referral[k] for k in ("ctwa_clid", "source_id", "headline") if k in referral
        }
    return fields
