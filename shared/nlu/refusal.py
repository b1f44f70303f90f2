"""A day refused before anything is booked: "não vai dar terça", "terça não posso", "dia 10
não consigo", "posso não, terça".

The date reader skips a day followed by "não" ("terça não, quarta" corrects it), and a "não
vai dar" reads as cancelling: so a day the person cannot make was lost, or stopped the
booking. A day said with a negated verb of being able or going, and no other day proposed, is
the day refused: the booking offers the ones after it.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from zoneinfo import ZoneInfo

from shared.nlu.dates import resolve_date
from shared.nlu.normalize import normalize

_ABLE = (
    r"(?:da|dar|posso|poder|consigo|conseguir|rola|rolar|tenho como|vou poder|vou conseguir"
    r"|fica bom|serve)"
)
# Not being able, the "não" before the verb ("não vai dar", "não posso") or after it ("posso
# não", "dá não").
_CANNOT = re.compile(rf"\bnao\s+(?:vai\s+|vou\s+)?{_ABLE}\b|\b(?:vai\s+)?{_ABLE}\s+nao\b")
# Words that propose another day beside the one refused ("só quarta", "a outra", "pode ser
# dia 17"): the date reader reads that one.
_ANOTHER = re.compile(
    r"\b(?:pode ser|prefiro|melhor|que tal|quero|queria|so|mas|entao|outra|outro|seguinte"
    r"|proxima|proximo|em vez)\b"
)
_NOT = re.compile(r"\bnao\b")


def refused_day(text: str, now: datetime, tz: ZoneInfo) -> date | None:
    """The day a message says the person cannot make, or None (rules in the module doc)."""
    normalized = normalize(text)
    if _CANNOT.search(normalized) is None or _ANOTHER.search(normalized) is not None:
        return None
    return resolve_date(_NOT.sub(" ", normalized), now, tz)
