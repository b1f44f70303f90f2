"""Dates and times in Brazilian Portuguese, resolved against the turn's own clock.

Nothing here reads the wall clock: ``now`` is ``Turn.now`` (timezone-aware) and ``tz`` the
business timezone, so "amanhã" means the business's tomorrow even when ``now`` is UTC.

Date rules (the first rule that yields a valid date wins, in this order, because an explicit
date is more trustworthy than a relative one: "terça dia 10 de fevereiro" → the 10th):

1. ISO ``2026-02-10`` or a numeric date with a year (``10/02/2026``, ``10/2/26``, ``10-02-2026``):
   exactly that day, even in the past — so the trial service's ``past_date`` check is reachable.
2. A day and month without a year (``10/02``, ``10/2``, ``10 de fevereiro``, ``10 fev``,
   ``1º de março``): the first occurrence no earlier than 30 days before today. A date that
   passed recently stays in this year (so a typo is reported as past, not booked a year ahead);
   one long gone means next year ("05/01" said on 28 December is next January).
3. ``dia 10``: the next 10th on or after today (this month, else the next month that has one).
4. ``hoje``, ``amanhã``, ``depois de amanhã``.
5. A weekday (``terça``, ``terca-feira``, ``3ª feira``, ``sábado``...): the nearest one on or
   after today (today when today is that weekday). With ``que vem``, ``próxima``/``próximo`` or
   ``semana que vem``: that weekday in the next calendar week (weeks start on Monday), so on a
   Thursday "terça que vem" and "terça" are both the coming Tuesday, while on a Monday
   "terça" is tomorrow and "terça que vem" the Tuesday after.

Numbers in words are read with text2num first ("dia vinte e três" → "dia 23"). Weekday
abbreviations ("ter", "qua", "qui", "sex", "seg", "dom") count after a word that introduces a
day ("na qui"), before a time or "que vem" ("ter 19h") unless a verb wants an infinitive ("vai
ter às 19h?"), or alone when the date was asked. "terça seguinte" is "terça que vem".

A weekday followed by a number is that day of the month when the number cannot be an hour or a
time follows it ("terça 24", "terca 10 então, às 20h"). "terça seguinte" after a day named in
the same message is the one after that day ("dia 24 não posso, pode ser na terça seguinte?").

Corrections: the latest mention wins. The text after the last correction marker ("não",
"aliás", "melhor", "na verdade", "prefiro"...) is read first ("terça... aliás quarta" →
Wednesday; "19h, não, 18h" → 18:00), then the whole message.
A mention directly followed by "não" is skipped ("terça não, quarta" → Wednesday). Among several
mentions of the same kind the first wins. Impossible dates ("31/02") are ignored. With
``expecting=True`` (the bot just asked for the date) a message that is only a day number
("10", "dia 10") is read as rule 3.

Time rules: an hour counts as a time only with a marker, so "dia 10", "10/02" and "27 anos"
never give one. Markers: ``h``/``hrs``/``horas``, ``:mm``, a preposition (``às``, ``das``,
``pelas``, ``umas``, ``até as``, ``a partir das``), ``e meia``/``e 15``, a period (``da manhã``,
``da tarde``, ``da noite``, ``de madrugada``) or am/pm. An hour in words needs more than
``horas`` ("sete horas" can be a duration; "às sete", "sete e meia" are times). ``da tarde`` and
``da noite`` move 1–11 to the afternoon/evening; "12 da noite" is midnight. "18.30" is 18:30
when it cannot be a day and month ("10.02" is not a time). An hour 1–11 without a period has two
readings (``time_candidates``: "às 8" → 08:00 and 20:00): ``resolve_time`` takes the one among
``valid_times`` (the business's slots) when there is one, else the literal hour unless it is
before 07:00 ("às 3" → 15:00, "às 7" → 07:00). An hour right after "dia", "daqui",
"durante", "há", "faz", "cada", "por", "de" or "em" is a date or a duration, not a time ("aula
de 1h", "daqui 2 horas"). Without a correction the first time wins ("das 18h às 20h" → 18:00).
``meio-dia``/``meia-noite`` (with an optional "e meia") are understood. With ``expecting=True``
(the bot just asked for the time) a bare hour ("19", "sete") is read as that hour.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from shared.nlu.normalize import normalize
from shared.nlu.numbers import NUMBER_WORDS, number_value, with_digits

_RECENT_PAST = timedelta(days=30)

_MONTHS = {
    "janeiro": 1,
    "jan": 1,
    "fevereiro": 2,
    "fev": 2,
    "marco": 3,
    "mar": 3,
    "abril": 4,
    "abr": 4,
    "maio": 5,
    "mai": 5,
    "junho": 6,
    "jun": 6,
    "julho": 7,
    "jul": 7,
    "agosto": 8,
    "ago": 8,
    "setembro": 9,
    "set": 9,
    "outubro": 10,
    "out": 10,
    "novembro": 11,
    "nov": 11,
    "dezembro": 12,
    "dez": 12,
}
_WEEKDAYS = {
    "segunda": 0,
    "2a": 0,
    "terca": 1,
    "3a": 1,
    "quarta": 2,
    "4a": 2,
    "quinta": 3,
    "5a": 3,
    "sexta": 4,
    "6a": 4,
    "sabado": 5,
    "domingo": 6,
}
_MONTH_WORDS = "|".join(sorted(_MONTHS, key=len, reverse=True))

_NOT = r"(?!\s+nao\b)"
_ISO = re.compile(r"(?<![\d/-])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\d/-])" + _NOT)
_NUMERIC = re.compile(r"(?<![\d/:-])(\d{1,2})[/-](\d{1,2})(?:[/-](\d{4}|\d{2}))?(?![\d/:-])" + _NOT)
_MONTH_NAME = re.compile(
    rf"(?<![\d/:-])(\d{{1,2}}|primeiro)o?\s+(?:de\s+)?({_MONTH_WORDS})\b"
    rf"(?:\s+(?:de\s+)?(\d{{4}})\b)?" + _NOT
)
_DAY_OF_MONTH = re.compile(r"\bdia\s+(\d{1,2})o?(?![\d/:-])" + _NOT)
_RELATIVE = re.compile(r"\b(depois de amanha|amanha|hoje)\b" + _NOT)
_WEEKDAY = re.compile(
    r"\b(?:(?P<next_before>proxima|proximo|prox)\s+)?"
    r"(?:(?P<week_before>semana que vem|proxima semana)\s+(?:na\s+|no\s+|de\s+)?)?"
    r"(?P<day>segunda(?!\s+(?:vez|aula|opcao|chance|mao))|terca|quarta|quinta|sexta|[2-6]a(?=[-\s]feira)|sabado|domingo)"
    r"(?:[-\s]feira)?"
    r"(?P<next_after>\s+(?:que vem|seguinte|da semana que vem|da proxima semana))?\b" + _NOT
)
# Weekday abbreviations ("ter 19h", "na qui"); "ter" is also a verb ("vai ter aula?"), so an
# abbreviation counts only after a word that introduces a day, or before a time or "que vem"
# when no verb asks for an infinitive before it, or alone when the date was asked.
_ABBREVIATIONS = {
    "seg": "segunda",
    "ter": "terca",
    "qua": "quarta",
    "qui": "quinta",
    "sex": "sexta",
    "dom": "domingo",
}
_DAY_INTRODUCERS = frozenset(
    {"na", "no", "nessa", "nesta", "essa", "esta", "proxima", "proximo", "prox", "ate", "ser"}
)
_INFINITIVE_BEFORE = frozenset(
    {
        "vai",
        "vou",
        "vamos",
        "vao",
        "pode",
        "podem",
        "posso",
        "tem",
        "de",
        "que",
        "para",
        "deve",
        "precisa",
        "preciso",
        "quero",
        "queria",
        "gostaria",
        "sem",
        "ja",
        "nao",
    }
)
_TIME_AFTER = frozenset({"as", "pelas", "das", "a", "umas", "depois", "que", "seguinte"})
# After one of these the person corrects what they said before ("terça... aliás quarta", "19h,
# não, 18h"): the latest mention wins, so the text after the last one is read first.
_CORRECTION = re.compile(
    r"\b(?:nao|alias|melhor|na verdade|prefiro|pensando bem|mudei de ideia|troca|trocando)\b"
)
_WEEKDAY_DAY = re.compile(
    r"\b(?:segunda|terca|quarta|quinta|sexta|sabado|domingo)(?:[-\s]feira)?\s+(\d{1,2})"
    r"(?![\d/:-])(?!\s*(?:h|hs|hr|hrs|horas?)\b)(?!h)" + _NOT
)
_ANCHOR = re.compile(r"(?<![\d/:-])(\d{1,2})[/-](\d{1,2})(?![\d/:-])|\bdia\s+(\d{1,2})\b")
_BARE_DAY = re.compile(r"^(?:(?:no|o|para o)\s+)?(?:dia\s+)?(\d{1,2})o?$")

_HOUR = rf"\d{{1,2}}|{NUMBER_WORDS}"
_TIME = re.compile(
    r"(?<![\w/:-])"
    r"(?:(?P<pre>as|das|pelas|umas|ate as|depois das|a partir das)\s+)?"
    rf"(?P<h>{_HOUR})"
    r"(?::(?P<clock>\d{2}))?"
    r"(?:\s?(?P<suffix>h|hs|hr|hrs|horas?)(?![a-z]))?"
    r"(?:\s?(?P<after_h>\d{2})(?!\d)(?:\s?min(?:utos)?\b)?)?"
    rf"(?:\s+e\s+(?P<and_min>meia|\d{{1,2}}|{NUMBER_WORDS})(?:\s?min(?:utos)?\b)?)?"
    r"(?:\s+(?:da|de|a)\s+(?P<period>manha|tarde|noite|madrugada))?"
    r"(?:\s?(?P<ampm>am|pm))?"
    r"(?![\w/:])"
)
_NOON = re.compile(
    rf"\b(?P<which>meio dia|meio-dia|meiodia|meia noite|meia-noite)"
    rf"(?:\s+e\s+(?P<and_min>meia|\d{{1,2}}|{NUMBER_WORDS})\b)?"
)
_BARE_HOUR = re.compile(rf"^(?:(?:as|a)\s+)?({_HOUR})$")
_DOTTED = re.compile(r"(?<![\d.,/])(\d{1,2})\.(\d{2})(?![\d.,/])")
# The earliest hour read literally when no period is said ("às 3" → 15:00, "às 7" → 07:00).
EARLIEST_LITERAL_HOUR = 7
_NOT_TIME_BEFORE = frozenset({"dia", "daqui", "durante", "ha", "faz", "cada", "por", "de", "em"})


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _day_month_near(day: int, month: int, today: date) -> date | None:
    """Rule 2: the first occurrence no earlier than ``_RECENT_PAST`` before today."""
    for year in (today.year - 1, today.year, today.year + 1):
        found = _safe_date(year, month, day)
        if found is not None and found >= today - _RECENT_PAST:
            return found
    return None


def _full_year(year: str) -> int:
    return int(year) + 2000 if len(year) == 2 else int(year)


def _explicit(text: str, today: date) -> date | None:
    for match in _ISO.finditer(text):
        found = _safe_date(int(match[1]), int(match[2]), int(match[3]))
        if found is not None:
            return found
    for match in _NUMERIC.finditer(text):
        day, month, year = int(match[1]), int(match[2]), match[3]
        found = (
            _safe_date(_full_year(year), month, day) if year else _day_month_near(day, month, today)
        )
        if found is not None:
            return found
    for match in _MONTH_NAME.finditer(text):
        day = 1 if match[1] == "primeiro" else int(match[1])
        month = _MONTHS[match[2]]
        found = (
            _safe_date(int(match[3]), month, day)
            if match[3]
            else _day_month_near(day, month, today)
        )
        if found is not None:
            return found
    return None


def _next_day_of_month(day: int, today: date) -> date | None:
    """Rule 3: the next ``day`` of a month on or after today, within a year."""
    year, month = today.year, today.month
    for _ in range(13):
        found = _safe_date(year, month, day)
        if found is not None and found >= today:
            return found
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _weekday_and_day(text: str, today: date) -> date | None:
    """ "terça 24", "terca 10 então, às 20h": the number is the day of the month when it cannot
    be an hour (over 23) or a time is said after it."""
    for match in _WEEKDAY_DAY.finditer(text):
        day = int(match[1])
        if day > 23 or _first_mention(text[match.end() :]) is not None:
            found = _next_day_of_month(day, today)
            if found is not None:
                return found
    return None


def _anchor(text: str, today: date) -> date | None:
    """The first day named in ``text``, even one taken back ("dia 24 não posso")."""
    match = _ANCHOR.search(text)
    if match is None:
        return None
    if match[3]:
        return _next_day_of_month(int(match[3]), today)
    return _day_month_near(int(match[1]), int(match[2]), today)


def _relative(
    text: str, today: date, before: str = "", reference: date | None = None
) -> date | None:
    """Rules 3–5 on ``text``; ``before`` is what the message said ahead of it and ``reference``
    the date the conversation is about (anchors for "terça seguinte")."""
    for day in _DAY_OF_MONTH.finditer(text):
        found = _next_day_of_month(int(day[1]), today)
        if found is not None:
            return found
    found = _weekday_and_day(text, today)
    if found is not None:
        return found
    match = _RELATIVE.search(text)
    if match:
        offset = {"hoje": 0, "amanha": 1}.get(match[1], 2)
        return today + timedelta(days=offset)
    match = _WEEKDAY.search(text)
    if match is None:
        return None
    weekday = _WEEKDAYS[match["day"]]
    anchor = _anchor(before + " " + text[: match.start()], today) or reference
    if match["next_after"] and "seguinte" in match["next_after"] and anchor is not None:
        # "dia 24 não posso, pode ser na terça seguinte?": the one after the day named before.
        return anchor + timedelta(days=(weekday - anchor.weekday()) % 7 or 7)
    if match["next_before"] or match["week_before"] or match["next_after"]:
        next_monday = today + timedelta(days=7 - today.weekday())
        return next_monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def _expand_abbreviations(normalized: str, expecting: bool) -> str:
    words = normalized.split()
    for at, word in enumerate(words):
        if word not in _ABBREVIATIONS:
            continue
        before = words[at - 1] if at else ""
        after = words[at + 1] if at + 1 < len(words) else ""
        timed = after[:1].isdigit() or (
            after in _TIME_AFTER and (after != "que" or words[at + 2 : at + 3] == ["vem"])
        )
        alone = expecting and len(words) == 1
        if alone or before in _DAY_INTRODUCERS or (timed and before not in _INFINITIVE_BEFORE):
            words[at] = _ABBREVIATIONS[word]
    return " ".join(words)


def mentions_date(text: str) -> bool:
    """Whether a message names a day at all (any reference day gives the same answer)."""
    normalized = _expand_abbreviations(with_digits(normalize(text)), expecting=False)
    reference = date(2000, 1, 3)
    return (_explicit(normalized, reference) or _relative(normalized, reference)) is not None


def _latest_first(normalized: str) -> Iterator[str]:
    """The text after each correction marker, latest first, then the whole text."""
    for marker in reversed(list(_CORRECTION.finditer(normalized))):
        yield normalized[marker.end() :]
    yield normalized


def parse_iso_date(value: str | None) -> date | None:
    """A stored ``YYYY-MM-DD`` as a date, or None when it is absent or not a real day."""
    match = _ISO.fullmatch(value or "")
    return _safe_date(int(match[1]), int(match[2]), int(match[3])) if match else None


def resolve_date(
    text: str,
    now: datetime,
    tz: ZoneInfo,
    *,
    expecting: bool = False,
    reference: date | None = None,
) -> date | None:
    """The date a message refers to, relative to ``now`` in ``tz`` (rules in the module doc).

    ``reference`` is the date the conversation already has (a booking being moved): "terça
    seguinte" with no day named before it in the message is the Tuesday after it."""
    today = now.astimezone(tz).date()
    normalized = _expand_abbreviations(with_digits(normalize(text)), expecting)
    for part in _latest_first(normalized):
        before = normalized[: len(normalized) - len(part)]
        found = _explicit(part, today) or _relative(part, today, before, reference)
        if found is not None:
            return found
    if expecting:
        bare = _BARE_DAY.match(normalized)
        if bare:
            return _next_day_of_month(int(bare[1]), today)
    return None


def _minutes(word: str | None) -> int | None:
    if word is None:
        return 0
    return 30 if word == "meia" else number_value(word)


def _with_period(hour: int, period: str | None, ampm: str | None) -> int:
    if period in ("tarde", "noite") or ampm == "pm":
        if 1 <= hour <= 11:
            return hour + 12
        if hour == 12 and period == "noite":
            return 0
    if hour == 12 and (period == "madrugada" or ampm == "am"):
        return 0
    return hour


def _clock(hour: int | None, minute: int | None) -> time | None:
    if hour is None or minute is None or not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return time(hour, minute)


def _preceding_word(text: str, start: int) -> str:
    before = text[:start].rsplit(None, 1)
    return before[-1] if before else ""


def _reading(match: re.Match[str], text: str) -> tuple[time, bool] | None:
    """The time a match says and whether its hour could also be read twelve hours later."""
    digits = match["h"].isdecimal()
    minute_word = match["clock"] or match["after_h"] or match["and_min"]
    marked = match["pre"] or match["period"] or match["ampm"] or match["clock"] or match["and_min"]
    if digits and match["suffix"]:
        marked = True
    if match["after_h"] and not match["suffix"]:
        return None
    if not marked or (
        not match["pre"] and _preceding_word(text, match.start()) in _NOT_TIME_BEFORE
    ):
        return None
    hour = number_value(match["h"])
    if hour is None:
        return None
    found = _clock(_with_period(hour, match["period"], match["ampm"]), _minutes(minute_word))
    if found is None:
        return None
    undecided = not (match["period"] or match["ampm"] or match["h"].startswith("0"))
    return found, undecided and 1 <= hour <= 11


def _first_mention(text: str) -> tuple[time, bool] | None:
    """The first time mentioned that is not taken back ("19h não"), with its ambiguity."""
    mentions: list[tuple[int, tuple[time, bool]]] = []
    for match in _TIME.finditer(text):
        found = _reading(match, text)
        if found is not None and not text.startswith(" nao", match.end()):
            mentions.append((match.start(), found))
            break
    noon = _NOON.search(text)
    if noon:
        hour = 12 if noon["which"].startswith("meio") else 0
        found_noon = _clock(hour, _minutes(noon["and_min"]))
        if found_noon is not None:
            mentions.append((noon.start(), (found_noon, False)))
    return min(mentions, key=lambda mention: mention[0])[1] if mentions else None


def _dots_as_colons(text: str) -> str:
    """ "18.30" → "18:30" when it cannot be a day and month ("10.02" stays a date)."""

    def clock(match: re.Match[str]) -> str:
        hour, minute = int(match[1]), int(match[2])
        is_time = hour <= 23 and minute <= 59 and minute % 5 == 0 and (hour > 12 or minute > 12)
        return f"{hour}:{match[2]}" if is_time else match[0]

    return _DOTTED.sub(clock, text)


def time_candidates(text: str, *, expecting: bool = False) -> list[time]:
    """The readings of the time a message refers to: one, or two for an hour without a period
    ("às 8" → 08:00 and 20:00), literal first. The latest correction wins; see the module doc."""
    normalized = normalize(_dots_as_colons(text))
    found = next(filter(None, map(_first_mention, _latest_first(normalized))), None)
    if found is None and expecting:
        bare = _BARE_HOUR.match(normalized)
        hour = number_value(bare[1]) if bare else None
        literal = _clock(hour, 0)
        if bare is not None and literal is not None and hour is not None:
            found = literal, 1 <= hour <= 11 and not bare[1].startswith("0")
    if found is None:
        return []
    literal, ambiguous = found
    return [literal, literal.replace(hour=literal.hour + 12)] if ambiguous else [literal]


def resolve_time(
    text: str, *, expecting: bool = False, valid_times: Collection[str] | None = None
) -> time | None:
    """The time of day a message refers to (rules in the module doc).

    An hour without a period takes the reading among ``valid_times`` ("HH:MM", e.g. the pack's
    class times) when one is; else the literal hour, unless that is before
    ``EARLIEST_LITERAL_HOUR`` ("às 3" is 15:00: nobody books at three in the morning).
    """
    candidates = time_candidates(text, expecting=expecting)
    if not candidates:
        return None
    if valid_times:
        valid = next((c for c in candidates if c.strftime("%H:%M") in valid_times), None)
        if valid is not None:
            return valid
    if len(candidates) == 2 and candidates[0].hour < EARLIEST_LITERAL_HOUR:
        return candidates[1]
    return candidates[0]
