"""One call per turn: every slot the rules can read from a message.

Cheap by construction (all patterns compiled at import, a few linear scans of one message), so a
service may call it on every turn whatever its stage and merge only the fields it cares about.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from shared.nlu.dates import resolve_date, resolve_time
from shared.nlu.models import Expecting, Slots
from shared.nlu.slots import extract_age, extract_level, extract_name
from shared.nlu.yesno import yes_no


def extract_slots(
    text: str, now: datetime, tz: ZoneInfo, expecting: Expecting | None = None
) -> Slots:
    """Slots in ``text``; ``now`` is ``Turn.now``, ``tz`` the business timezone, ``expecting``
    the field the bot just asked for (it makes a bare "João", "27", "10" or "19" count)."""
    return Slots(
        nome=extract_name(text, expecting_name=expecting == "nome"),
        idade=extract_age(text, expecting_age=expecting == "idade"),
        nivel=extract_level(text),
        date=resolve_date(text, now, tz, expecting=expecting == "date"),
        time=resolve_time(text, expecting=expecting == "time"),
        yes_no=yes_no(text),
    )
