"""A time said as a limit, not as an hour: "depois das 20h", "antes das 18h", "a partir das
19h", "das 18h em diante", "19h ou mais cedo", and, against the hour the conversation already
has, "tem algo mais tarde?", "e mais cedo?".

An hour inside such a phrase is not the hour wished for: "e depois das 20h?" asks what comes
after 20:00, and reading it as 20:00 proposes the very class the person is asking past. The
booking uses a bound as a filter on the class times it offers (``TimeBound.admits``).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from shared.nlu.dates import resolve_time
from shared.nlu.normalize import normalize
from shared.nlu.numbers import NUMBER_WORDS

BoundSide = Literal["after", "before"]

# An hour as a limit says it: digits or a number word, minutes, "h", and a part of the day.
_HOUR = (
    rf"(?P<hour>(?:\d{{1,2}}|{NUMBER_WORDS})(?::\d{{2}})?(?:\s?(?:h|hs|hr|hrs|horas?)(?![a-z]))?"
    r"(?:\s+(?:da|de|a|pela|na)\s+(?:manha|tarde|noite))?)"
)
# A number followed by a unit is a span or a count ("depois de 2 anos", "antes de uma semana").
_NOT_AN_HOUR_AFTER = (
    r"(?!\s*(?:anos?|mes|meses|dias?|semanas?|minutos?|vezes|aulas?|pessoas?|reais|jogos?))"
)
# The article before the hour ("das", "as"): a number word needs it ("depois de um jogo" is no
# hour) where digits do not ("depois de 19h").
_ARTICLE = r"(?:(?P<article>das|da|as|a|dos|do|os|o)\s+|de\s+)?"
_LEADING: tuple[tuple[BoundSide, bool, re.Pattern[str]], ...] = (
    (
        "after",
        False,
        re.compile(
            rf"\b(?:depois|apos|mais tarde (?:do )?que)\s+{_ARTICLE}{_HOUR}{_NOT_AN_HOUR_AFTER}"
        ),
    ),
    ("after", True, re.compile(rf"\ba partir\s+{_ARTICLE}{_HOUR}{_NOT_AN_HOUR_AFTER}")),
    (
        "before",
        False,
        re.compile(rf"\b(?:antes|mais cedo (?:do )?que)\s+{_ARTICLE}{_HOUR}{_NOT_AN_HOUR_AFTER}"),
    ),
)
# The limit said after the hour: "das 18h em diante", "19h pra frente", "20h ou antes".
_TRAILING: tuple[tuple[BoundSide, bool, re.Pattern[str]], ...] = (
    (
        "after",
        True,
        re.compile(
            rf"(?<![\w/:]){_ARTICLE}{_HOUR}\s+"
            r"(?:em diante|para frente|pra frente|para cima|pra cima|ou (?:mais tarde|depois))\b"
        ),
    ),
    (
        "before",
        True,
        re.compile(rf"(?<![\w/:]){_ARTICLE}{_HOUR}\s+ou (?:mais cedo|antes)\b"),
    ),
)
# Later or earlier than the hour the conversation has, said without an hour ("tem algo mais
# tarde?", "e mais cedinho?"); "o mais tarde" is the last class and "mais tarde que" names
# its hour (``_LEADING``).
_NOT_AN_ARTICLE_BEFORE = r"(?<!\bo )(?<!\ba )"
_NO_HOUR_AFTER = r"(?! (?:do )?que| possivel)"
_RELATIVE: tuple[tuple[BoundSide, re.Pattern[str]], ...] = (
    ("after", re.compile(rf"{_NOT_AN_ARTICLE_BEFORE}\bmais (?:tarde|tardinho)\b{_NO_HOUR_AFTER}")),
    ("before", re.compile(rf"{_NOT_AN_ARTICLE_BEFORE}\bmais (?:cedo|cedinho)\b{_NO_HOUR_AFTER}")),
)
# A relative limit asks for another class only in a question ("tem mais tarde?", "e mais
# cedo?"): "te falo mais tarde" puts the answer off.
_ASKS = re.compile(r"^(?:e|mas|tem|teria|nao tem|so|algum|alguma|algo|nada|outro|outra)\b")


@dataclass(frozen=True)
class TimeBound:
    """Classes after (or before) ``hour``; ``inclusive`` when the hour itself counts ("a
    partir das 19h", "20h ou antes")."""

    side: BoundSide
    hour: str  # HH:MM
    inclusive: bool = False

    def admits(self, hh_mm: str) -> bool:
        """Whether a class at ``hh_mm`` ("HH:MM") is within the limit."""
        if hh_mm == self.hour:
            return self.inclusive
        return hh_mm > self.hour if self.side == "after" else hh_mm < self.hour


def time_bound(
    text: str,
    *,
    valid_times: Collection[str] | None = None,
    reference: str | None = None,
) -> TimeBound | None:
    """The limit a message puts on the time, if any (rules in the module doc).

    An hour with no period takes the reading among ``valid_times`` (the class times), as an
    hour wished for does. ``reference`` ("HH:MM") is the hour the conversation has: "mais
    tarde" is after it; without one a relative word is no limit.
    """
    normalized = normalize(text)
    for side, inclusive, pattern in (*_LEADING, *_TRAILING):
        for match in pattern.finditer(normalized):
            hour = _hour_of(match, valid_times)
            if hour is not None:
                return TimeBound(side, hour, inclusive)
    if reference is None or not ("?" in text or _ASKS.search(normalized)):
        return None
    return next(
        (TimeBound(side, reference) for side, pattern in _RELATIVE if pattern.search(normalized)),
        None,
    )


def _hour_of(match: re.Match[str], valid_times: Collection[str] | None) -> str | None:
    """The hour a limit names, "HH:MM"; None for a bare number word with no article."""
    said = match["hour"]
    if not said[0].isdigit() and match["article"] is None:
        return None
    # "às" marks the number as an hour for the time reader, whatever preposition was said.
    found = resolve_time(f"as {said}", valid_times=valid_times)
    return found.strftime("%H:%M") if found is not None else None


def limits_time(text: str) -> bool:
    """Whether a message puts a limit on the time, with its hour ("depois das 19h") or against
    an hour it does not say, asked ("tem algo mais tarde?"): while a booking asks for a time,
    it is about the classes the booking offers, not the opening hours."""
    if time_bound(text) is not None:
        return True
    normalized = normalize(text)
    asked = "?" in text or _ASKS.search(normalized) is not None
    return asked and any(pattern.search(normalized) for _, pattern in _RELATIVE)
