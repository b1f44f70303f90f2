"""What the bot says about a message it cannot read (a photo, an audio, a location...).

Two services say it: the gateway answers a turn made only of such messages itself, and triage
adds the notice to its inline part when they come mixed with text ("oi" and a photo).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from shared.contracts import InboundMessage

NOTICE_KINDS = frozenset(
    {"image", "video", "audio", "document", "sticker", "location", "contacts", "reaction"}
    | {"order", "flow", "unsupported"}
)
TEXT_PREFIX = "channel_"
FALLBACK_KEY = "channel_other"


def unreadable(message: InboundMessage) -> bool:
    return message.kind in NOTICE_KINDS and not message.text.strip()


def notice_key(kind: str, texts: dict[str, Any]) -> str | None:
    """The pack text for ``kind``: ``channel_<kind>``, else ``channel_other``, else None."""
    for key in (f"{TEXT_PREFIX}{kind}", FALLBACK_KEY):
        if key in texts:
            return key
    return None


def notice_keys(messages: Iterable[InboundMessage], texts: dict[str, Any]) -> list[str]:
    """One text key per distinct unreadable kind, in order of arrival."""
    keys = [notice_key(m.kind, texts) for m in messages if unreadable(m)]
    return list(dict.fromkeys(k for k in keys if k))
