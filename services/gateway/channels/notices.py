"""Turns the gateway answers itself: only media, locations, contacts, reactions... (pure).

A turn made only of messages the bot cannot read (no text, no caption) would give triage
nothing to classify, so the gateway answers it directly with the pack's ``channel_<kind>`` text
(``channel_other`` when the kind has none), one bubble per kind, in order of arrival. The turn
still follows the normal lifecycle (lease, egress, release), so its answer never overtakes the
reply of an earlier turn. A turn with any text goes to triage as usual, and triage mentions its
non-text messages in its own part (``shared/notices.py`` holds what both say). Every messaging
channel whose people send photos and audios answers them so (its adapter's ``own_answer``).
"""

from __future__ import annotations

from datetime import datetime

from shared.contracts import Reply, Turn
from shared.notices import notice_key, notice_keys, unreadable
from shared.pack import Pack


def notice_kinds(turn: Turn) -> list[str]:
    """The distinct kinds of a turn made only of unreadable messages; [] if any has text."""
    if not all(unreadable(m) for m in turn.messages):
        return []
    return list(dict.fromkeys(m.kind for m in turn.messages))


def notice_reply(turn: Turn, pack: Pack, *, created_at: datetime) -> Reply | None:
    """The gateway's own reply to a notice-only turn; None when triage should answer it."""
    texts = pack.sections.get("texts", {})
    kinds = notice_kinds(turn)
    if not kinds or any(notice_key(kind, texts) is None for kind in kinds):
        return None
    bubbles = [pack.text(key, seed=turn.turn_id) for key in notice_keys(turn.messages, texts)]
    return Reply(
        turn_id=turn.turn_id,
        conversation_id=turn.conversation_id,
        channel=turn.channel,
        to=turn.contact,
        text="\n\n".join(bubbles),
        bubbles=bubbles,
        created_at=created_at,
    )
