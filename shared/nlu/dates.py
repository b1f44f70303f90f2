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
ter às 19h?"), alone as the whole message ("qua", "sex"), or in a list of days ("seg ou qua").
"terça seguinte" is "terça que vem". A week marker anywhere beside a weekday ("na terça, semana
que vem", Portugal's "para a semana") puts it in the next week. "daqui a duas semanas", "em 10
dias": that many days ahead (with a weekday named too, that weekday nearest to it).

A weekday followed by a number is that day of the month when the number cannot be an hour, a
time follows it, or that day is the named weekday ("terça 24", "terca 10 então, às 20h", "3ª 16").
"terça seguinte", "a outra terça" and a bare "a outra"/"na seguinte"/"na próxima" are the ones
after the day named before them in the message ("dia 24 não posso, pode ser na terça
seguinte?", "essa terça não dá, a outra"), else after ``reference`` (the conversation's date);
"uma semana pra frente", "dois dias depois" count from that day too (else from today).
A day right after "para (o|a)" wins over other days named ("só volto dia 10, passa pro dia 12").

Numeric dates take "/", "-" or "." ("1.3.2013", "15.02"); a two-digit year is read forward for a
booking ("8/12/26" → 2026) and backward for a birth date (``resolve_birth_date``: "31/10/74" →
1974); a date with a year right after "nasci"/"nascimento" is never a booking date. Day words:
"um de março", "dia primeiro". A weekday counted within a month ("a primeira terça de março",
"a última terça do mês (que vem)") is that day of the next such month that has not passed it.

Corrections: the latest mention wins. The text after the last correction marker ("não",
"aliás", "melhor", "na verdade", "prefiro", "ops", "quis dizer", "digo"...) is read first
("terça... aliás quarta" → Wednesday; "19h, não, 18h" → 18:00), then the whole message; with
``expecting`` a bare hour after it is the time ("7 não, 18" → 18:00).
A mention directly followed by "não" is skipped ("terça não, quarta" → Wednesday). Among several
mentions of the same kind the first wins. Impossible dates ("31/02") are ignored. With
``expecting=True`` (the bot just asked for the date) a message that is only a day number
("10", "dia 10") is read as rule 3.

Time rules: an hour counts as a time only with a marker, so "dia 10", "10/02" and "27 anos"
never give one. Markers: ``h``/``hrs``/``horas``, ``:mm``, a preposition (``às``, ``das``,
``pelas``, ``umas``, ``até as``, ``a partir das``), ``e meia``/``e 15``, a period (``da manhã``,
``da tarde``, ``da noite``, ``de madrugada``) or am/pm. An hour in words up to twelve needs more
than ``horas`` ("sete horas" can be a duration; "às sete", "sete e meia" are times; "dezenove
horas" is one). "entre 18 e 19" is the first hour. ``da tarde`` and ``da noite`` move 1–11 to
the afternoon/evening; "12 da noite" is midnight. "18.30" is 18:30
when it cannot be a day and month ("10.02" is not a time). An hour 1–11 without a period has two
readings (``time_candidates``: "às 8" → 08:00 and 20:00): ``resolve_time`` takes the one among
``valid_times`` (the business's slots) when there is one, else the literal hour unless it is
before 07:00 ("às 3" → 15:00, "às 7" → 07:00); words around the hour decide first when they say
which half of the day it is ("às 7, antes de ir pro trabalho" → 07:00, "às 7 saindo do
trabalho" → 19:00, "de noite, lá pelas 8" → 20:00). An hour right after "dia", "daqui",
"durante", "há", "faz", "cada", "por", "de" or "em" is a date or a duration, not a time ("aula
de 1h", "daqui 2 horas"). Without a correction the first time wins ("das 18h às 20h" → 18:00).
``meio-dia``/``meia-noite`` (with an optional "e meia") are understood, and so are minutes
before an hour ("quinze para o meio dia" → 11:45, "dez para as sete da noite" → 18:50) and
"pela manhã"/"na noite" as periods ("as seis pela manhã" → 06:00). With ``expecting=True``
(the bot just asked for the time) a bare hour ("19", "sete") is read as that hour; a bare
number after the day said is its class hour (``hour_after_day``: "terça 20").

With no hour said, ``resolve_time`` reads a preference: a part of the day moves the time the
conversation already has into it ("às 7", then "da noite" → 19:00); with ``valid_times``, the
only class in that part of the day ("de manhã cedo" → 07:00) or the first or last class ("o
último horário", "o primeiro horário da noite").
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from typing import Literal, cast
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
    rf"(?<![\d/:-])(\d{{1,2}}|primeiro|um)o?(?:\s+(?:de\s+)?|\s?[/-]\s?)({_MONTH_WORDS})\b"
    rf"(?:(?:\s+(?:de\s+)?|\s?[/-]\s?)(\d{{4}})\b)?" + _NOT
)
# "a primeira terça de março", "última terça do mês", "a segunda terça do mês que vem": a
# weekday counted within a month.
_NTH_WEEKDAY = re.compile(
    r"\b(?P<nth>primeir[ao]|segund[ao]|terceir[ao]|quart[ao]|ultim[ao])\s+"
    r"(?P<day>segunda|terca|quarta|quinta|sexta|sabado|domingo)(?:[-\s]feira)?\s+"
    r"(?:de\s+|do\s+|deste\s+|desse\s+)?(?:mes\s+de\s+)?"
    rf"(?:(?P<month>{_MONTH_WORDS})\b|(?P<next>mes que vem|proximo mes)|(?P<this>mes)\b)" + _NOT
)
_NTH = {"primeir": 1, "segund": 2, "terceir": 3, "quart": 4, "ultim": -1}
_DAY_OF_MONTH = re.compile(r"\bdia\s+(\d{1,2}|primeiro|um)o?(?![\d/:-])" + _NOT)
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
    r"\b(?:nao|alias|melhor|na verdade|prefiro|pensando bem|mudei de ideia|troca|trocando"
    r"|ops|quis dizer|quer dizer|digo|corrigindo|errei|pera|perai)\b"
)
_WEEKDAY_DAY = re.compile(
    r"\b(?P<day>segunda|terca|quarta|quinta|sexta|sabado|domingo|[2-6]a)(?:[-\s]feira)?\s+(?:dia\s+)?"
    r"(?P<number>\d{1,2})"
    r"(?![\d/:-])(?!\s*(?:h|hs|hr|hrs|horas?)\b)(?!h)" + _NOT
)
# "a outra", "na seguinte", "a próxima" with no weekday after it: the one after the day named
# before ("essa terça não dá, pode ser a outra?"), or after the conversation's date.
_ELLIPTIC_NEXT = re.compile(
    r"\b(?:n?a|n?o)\s+(?:outra|outro|seguinte|proxima|proximo)\b"
    r"(?!\s+(?:semana|mes|ano|vez|segunda|terca|quarta|quinta|sexta|sabado|domingo|[2-6]a)\b)"
)
# "a outra terça": the named weekday after the day named before.
_OTHER_WEEKDAY = re.compile(
    r"\b(?:n?a|n?o|para)\s+outr[ao]\s+(?P<day>segunda|terca|quarta|quinta|sexta|sabado|domingo)"
)
# Said anywhere with a weekday, the weekday is in the next calendar week ("na terça, para a
# semana" in Portugal, "na terça, semana que vem").
_WEEK_MARK = re.compile(r"\b(?:semana que vem|proxima semana|para a semana)\b")
# "daqui a duas semanas", "em 10 dias", "dentro de uma semana".
_IN_PERIOD = re.compile(
    r"\b(?:daqui(?:\s+a)?|dentro de|em)\s+(\d{1,2}|um|uma|dois|duas)\s+(dias?|semanas?)\b"
)
_SMALL = {"um": 1, "uma": 1, "dois": 2, "duas": 2}
# "uma semana pra frente", "dois dias depois": from the day named before, else the
# conversation's date (a booking being moved), else today.
_SHIFT = re.compile(
    r"\b(\d{1,2}|um|uma|dois|duas)\s+(dias?|semanas?)\s+(?:para frente|depois|adiante|mais tarde)\b"
    # "adia uma semana", "empurrar em duas semanas", "atrasa 1 semana": a delay by that much.
    r"|\b(?:adi|empurr|atras)\w*\s+(?:(?:em|por)\s+)?(\d{1,2}|um|uma|dois|duas)\s+(dias?|semanas?)\b"
)
# "na semana seguinte" with no weekday: a week after the day named before, or the reference.
_NEXT_WEEK = re.compile(
    r"\b(?:n?a|para(?: a)?)\s+semana\s+seguinte\b"
    r"(?!\s+(?:n?a|n?o)?\s*(?:segunda|terca|quarta|quinta|sexta|sabado|domingo)\b)"
)
# A date right after "para (o|a)" is where the person wants to go ("só volto dia 10, muda para o
# dia 12"): it wins over the other days the message names.
_DESTINATION = re.compile(
    r"\bpara\s+(?:o\s+|a\s+)?(?=(?:dia\s+)?\d|hoje\b|amanha\b|depois de amanha\b"
    r"|(?:proxim[ao]\s+)?(?:segunda|terca|quarta|quinta|sexta|sabado|domingo)\b)"
)
# Birth dates are not booking dates ("nasci em 31/10/74").
_BIRTH_BEFORE = re.compile(r"\b(?:nasci|nascid[oa]|nasceu|nascimento)\b(?:\s+\S+){0,2}\s*$")
_BARE_DAY = re.compile(r"^(?:(?:no|o|para o)\s+)?(?:dia\s+)?(\d{1,2})o?$")

_HOUR = rf"\d{{1,2}}|{NUMBER_WORDS}"
_TIME = re.compile(
    r"(?<![\w/:-])"
    r"(?:(?P<pre>as|das|pelas|umas|ate as|depois das|a partir das|entre)\s+)?"
    rf"(?P<h>{_HOUR})"
    r"(?::(?P<clock>\d{2}))?"
    r"(?:\s?(?P<suffix>h|hs|hr|hrs|horas?)(?![a-z]))?"
    r"(?:\s?(?P<after_h>\d{2})(?!\d)(?:\s?min(?:utos)?\b)?)?"
    rf"(?:\s+e\s+(?P<and_min>meia|\d{{1,2}}|{NUMBER_WORDS})(?:\s?min(?:utos)?\b)?)?"
    r"(?:\s+(?:horas\s+)?(?:da|de|a|pela|na)\s+(?P<period>manha|tarde|noite|madrugada))?"
    r"(?:\s?(?P<ampm>am|pm))?"
    r"(?![\w/:])"
)
_NOON = re.compile(
    rf"\b(?P<which>meio dia|meio-dia|meiodia|meia noite|meia-noite)"
    rf"(?:\s+e\s+(?P<and_min>meia|\d{{1,2}}|{NUMBER_WORDS})\b)?"
)
# "quinze para o meio-dia", "dez para as sete da noite": minutes before an hour.
_BEFORE_HOUR = re.compile(
    r"(?<![\w/:-])(?P<minutes>5|10|15|20|25|cinco|dez|quinze|vinte|vinte e cinco|um quarto)"
    r"\s+(?:minutos\s+)?para\s+(?:o\s+|a\s+|as\s+)?"
    rf"(?P<target>meio dia|meio-dia|meiodia|meia noite|meia-noite|\d{{1,2}}|{NUMBER_WORDS})"
    r"(?:\s?(?:h|hs|horas?)(?![a-z]))?"
    r"(?:\s+(?:da|de|a|pela|na)\s+(?P<period>manha|tarde|noite|madrugada))?"
    r"(?![\w/:])"
)
# A part of the day said with no hour ("de manhã cedo", "à noite", "pela tarde"); "boa tarde"
# has no preposition and is a greeting.
# "somos 5 para as 19h" counts people, not minutes.
_COUNTED_BEFORE = frozenset({"somos", "seremos", "sao", "vamos", "com", "mais", "de", "ate"})
# The parts of the day a wish names without an hour (``part_of_day``).
PartOfDay = Literal["manha", "tarde", "noite"]
_PERIOD_ONLY = re.compile(
    r"\b(?:de|da|a|pela|na|no periodo da|durante a)\s+(manha|tarde|noite)\b" + _NOT
)
# Hours (inclusive start, exclusive end) each part of the day covers; 18h is both "6 da tarde"
# and the start of the evening.
_PERIOD_HOURS = {"manha": (5, 12), "tarde": (12, 19), "noite": (18, 24)}
# "o mais tarde", "o último", "a primeira": the class itself, not a day ("o último dia") nor
# a first time ("a primeira aula é grátis?").
_NOT_A_DAY = r"(?!\s+(?:dia|terca|semana|mes|vez|aula|experimental))"
_FIRST_SLOT = re.compile(
    r"\b(?:primeiro horario|horario mais cedo|mais cedo possivel|bem cedo)\b"
    rf"|^(?:(?:pode ser|quero|prefiro)\s+)?(?:o|a)\s+(?:mais cedo|primeir[oa])\b{_NOT_A_DAY}"
)
_LAST_SLOT = re.compile(
    r"\b(?:ultimo horario|horario mais tarde|mais tarde possivel)\b"
    rf"|^(?:(?:pode ser|quero|prefiro)\s+)?(?:o|a)\s+(?:mais tarde|ultim[oa])\b{_NOT_A_DAY}"
)
# No preference for the time, said of the time ("qualquer horário", "a hora tanto faz", "sem
# preferência de horário")...
_ANY_TIME = re.compile(
    r"\b(?:qualquer (?:horario|hora)|tanto faz (?:o |a )?(?:horario|hora)"
    r"|(?:horario|hora) tanto faz"
    r"|(?:sem|nao tenho|nenhuma) preferencia (?:de|por) (?:horario|hora))\b"
)
# ... or said as the answer to the question for the time ("tanto faz", "qualquer um").
_ANY_ANSWER = re.compile(
    rf"\b(?:tanto faz|qualquer uma?\b{_NOT_A_DAY}|qualquer$|(?:sem|nao tenho) preferencia)"
)
SlotPreference = Literal["first", "last", "any"]
# Words around an hour with no period that say which half of the day it is ("às 7, cedinho"
# is 07:00, "às 7, saindo do serviço" 19:00) when both readings are class times.
_EARLY_HINT = re.compile(
    r"\b(?:antes d[oe] (?:ir (?:pro |para o )?)?(?:trabalho|trabalhar|servico|expediente|aula)"
    r"|cedo|cedinho|madrugada)\b"
)
_LATE_HINT = re.compile(
    r"\b(?:depois d[oe] (?:trabalho|trabalhar|servico|expediente)|saindo do (?:trabalho|servico)"
    r"|apos o (?:trabalho|servico|expediente)|fim do dia|final do dia)\b"
)
# Ways of naming a part of the day without its name, and the part each names: early on a
# day ("terça cedinho", "amanhã cedo", "antes do trabalho"), after lunch, after work. "o mais
# cedo possível" is the first class (``_FIRST_SLOT``), not a part of the day.
_PART_HINTS: tuple[tuple[PartOfDay, re.Pattern[str]], ...] = (
    (
        "manha",
        re.compile(
            r"\b(?:cedinho|(?:bem|logo|hoje|amanha|segunda|terca|quarta|quinta|sexta|sabado"
            r"|domingo) cedo"
            r"|antes d[oe] (?:ir (?:pro |para o )?)?(?:trabalho|trabalhar|servico|expediente))\b"
        ),
    ),
    ("tarde", re.compile(r"\b(?:depois|apos) d?o almoco\b")),
    ("noite", _LATE_HINT),
)
# A reply's opening words before the number ("então 19", "pode ser 7", "ok, 20").
_REPLY_FILLER = r"(?:(?:entao|pode ser|ok|beleza|blz|sim|isso|prefiro|melhor|vamos de|vai ser)\s+)?"
_BARE_HOUR = re.compile(rf"^{_REPLY_FILLER}(?:(?:as|a)\s+)?({_HOUR})$")
_DOTTED = re.compile(r"(?<![\d.,/])(\d{1,2})\.(\d{2})(?![\d.,/])")
_DOTTED_DATE = re.compile(r"(?<![\d.,/])(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})(?![\d.,/])")
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


def full_year(year: str, today: date, *, past: bool = False) -> int:
    """A year as written: two digits are the latest such year up to today's when ``past`` (a
    birth date: "74" → 1974), else the first from last year on (a booking: "26" → 2026)."""
    if len(year) != 2:
        return int(year)
    two = int(year)
    if past:
        latest = today.year - (today.year - two) % 100
        return latest
    return today.year - 1 + (two - (today.year - 1)) % 100


def _day_number(word: str) -> int:
    return 1 if word in ("primeiro", "um") else int(word)


def _explicit(text: str, today: date, *, past: bool = False) -> date | None:
    if not past and (counted := _nth_weekday(text, today)) is not None:
        return counted
    for match in _ISO.finditer(text):
        found = _safe_date(int(match[1]), int(match[2]), int(match[3]))
        if found is not None:
            return found
    for match in _NUMERIC.finditer(text):
        day, month, year = int(match[1]), int(match[2]), match[3]
        if not past and year and _BIRTH_BEFORE.search(text[: match.start()]):
            continue
        found = (
            _safe_date(full_year(year, today, past=past), month, day)
            if year
            else _day_month_near(day, month, today)
        )
        if found is not None:
            return found
    for match in _MONTH_NAME.finditer(text):
        day = _day_number(match[1])
        month = _MONTHS[match[2]]
        found = (
            _safe_date(int(match[3]), month, day)
            if match[3]
            else _day_month_near(day, month, today)
        )
        if found is not None:
            return found
    return None


def _nth_weekday(text: str, today: date) -> date | None:
    """ "a primeira terça de março" (the next March that still has it), "a última terça do
    mês", "a segunda terça do mês que vem": that weekday counted within the month."""
    match = _NTH_WEEKDAY.search(text)
    if match is None:
        return None
    nth, weekday = _NTH[match["nth"][:-1]], _WEEKDAYS[match["day"]]
    if match["month"]:
        months = [(today.year, _MONTHS[match["month"]]), (today.year + 1, _MONTHS[match["month"]])]
    else:
        # "do mês" once this month's has passed is the next month's.
        ahead = (1,) if match["next"] else (0, 1)
        months = [
            (today.year + (today.month - 1 + n) // 12, (today.month - 1 + n) % 12 + 1)
            for n in ahead
        ]
    for year, month in months:
        first = date(year, month, 1)
        last = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
        if nth > 0:
            found = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
        else:
            found = last - timedelta(days=(last.weekday() - weekday) % 7)
        if found.month == month and found >= today:
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
    """ "terça 24", "terca 10 então, às 20h", "3ª 16": the number is the day of the month when
    it cannot be an hour (over 23), a time is said after it, or that day is the named weekday."""
    for match in _WEEKDAY_DAY.finditer(text):
        found = _next_day_of_month(int(match["number"]), today)
        if found is None:
            continue
        named = found.weekday() == _WEEKDAYS[match["day"]]
        if named or int(match["number"]) > 23 or _first_mention(text[match.end() :]) is not None:
            return found
    return None


# A bare number right after the day said ("terça 19", "terça que vem 20", "amanhã 18"), not
# a count, a date or an age.
_DAY_THEN_NUMBER = re.compile(
    r"\b(?:segunda|terca|quarta|quinta|sexta|sabado|domingo|[2-6]a|amanha|hoje|que vem|seguinte)"
    r"(?:[-\s]feira)?\s+(\d{1,2})(?![\d/:.h]|\s*(?:anos?|aninhos|de|dias?|semanas?|meses|vezes"
    r"|pessoas|reais)\b)"
)


def hour_after_day(text: str, day: date | None, valid_times: Collection[str]) -> time | None:
    """The class hour a bare number after the day said gives ("terça 19" → 19:00 when 19:00 is
    a class): a number no one reads as the day itself (``day``, the date read from ``text``:
    "terça 17" on a Tuesday the 17th is that day), and only an hour that is a class time, so
    "terça 8" with classes at 08:00 and 20:00 is not guessed."""
    for match in _DAY_THEN_NUMBER.finditer(with_digits(normalize(text))):
        number = int(match[1])
        if day is not None and day.day == number:
            continue
        if f"{number:02d}:00" in valid_times:
            return time(number, 0)
    return None


def _anchor(text: str, today: date) -> date | None:
    """The day named in ``text``, even one taken back ("dia 24 não posso", "essa terça não")."""
    said = re.sub(r"\bnao\b", " ", text)
    return _explicit(said, today) or _relative(said, today, following=False)


def _following(text: str, today: date, before: str, reference: date | None) -> date | None:
    """A day said relative to another: "terça seguinte", "a outra terça", "na outra" — the one
    after the day the message named before it, else after the conversation's date."""
    other = _OTHER_WEEKDAY.search(text)
    elliptic = _ELLIPTIC_NEXT.search(text)
    seguinte = next(
        (m for m in _WEEKDAY.finditer(text) if m["next_after"] and "seguinte" in m["next_after"]),
        None,
    )
    shift = _SHIFT.search(text)
    if shift is not None:
        start = _anchor(before + " " + text[: shift.start()], today) or reference or today
        said, unit = shift[1] or shift[3], shift[2] or shift[4]
        count = _SMALL.get(said) or int(said)
        return start + timedelta(days=count * (7 if unit.startswith("semana") else 1))
    next_week = _NEXT_WEEK.search(text)
    if next_week is not None:
        week_of = _anchor(before + " " + text[: next_week.start()], today) or reference
        if week_of is not None:
            return week_of + timedelta(days=7)
    match = other or seguinte or elliptic
    if match is None:
        return None
    anchor = _anchor(before + " " + text[: match.start()], today) or reference
    if anchor is None:
        return None
    named = match.groupdict().get("day")
    weekday = _WEEKDAYS[named] if named else anchor.weekday()
    return anchor + timedelta(days=(weekday - anchor.weekday()) % 7 or 7)


def names_a_period_only(text: str) -> bool:
    """Whether a message says when only as a span from today ("daqui a duas semanas", "em
    10 dias"), with no weekday or date of its own: a rough time, not a day."""
    normalized = _date_form(text)
    return (
        _IN_PERIOD.search(normalized) is not None
        and _WEEKDAY.search(normalized) is None
        and _DAY_OF_MONTH.search(normalized) is None
    )


# A week named alone ("semana que vem", "ainda essa semana"): which one, from this one.
_THIS_WEEK = re.compile(r"\b(?:n?essa|n?esta)\s+semana\b")


def weeks_ahead_only(text: str) -> int | None:
    """How many calendar weeks ahead a message says when it names only a week (1: "semana
    que vem", "na próxima semana"; 0: "ainda essa semana"), with no weekday or date of its
    own; None otherwise. The day is the business's to pick: its class day of that week."""
    normalized = _date_form(text)
    if _WEEKDAY.search(normalized) is not None or _DAY_OF_MONTH.search(normalized) is not None:
        return None
    if _WEEK_MARK.search(normalized) is not None:
        return 1
    if _THIS_WEEK.search(normalized) is not None:
        return 0
    return None


def nearest_weekday(day: date, weekday: int) -> date:
    """The ``weekday`` (Monday = 0) nearest to ``day``: up to three days before or after."""
    return day + timedelta(days=(weekday - day.weekday() + 3) % 7 - 3)


def _days_ahead(text: str, today: date) -> date | None:
    """ "daqui a duas semanas", "em 10 dias": that many days from today."""
    match = _IN_PERIOD.search(text)
    if match is None:
        return None
    count = _SMALL.get(match[1]) or int(match[1])
    return today + timedelta(days=count * (7 if match[2].startswith("semana") else 1))


def _relative(
    text: str,
    today: date,
    before: str = "",
    reference: date | None = None,
    *,
    following: bool = True,
) -> date | None:
    """Rules 3–5 on ``text``; ``before`` is what the message said ahead of it and ``reference``
    the date the conversation is about (anchors for "terça seguinte", "a outra")."""
    if following:
        found = _following(text, today, before, reference)
        if found is not None:
            return found
    for day in _DAY_OF_MONTH.finditer(text):
        found = _next_day_of_month(_day_number(day[1]), today)
        if found is not None:
            return found
    found = _weekday_and_day(text, today)
    if found is not None:
        return found
    match = _RELATIVE.search(text)
    if match:
        offset = {"hoje": 0, "amanha": 1}.get(match[1], 2)
        return today + timedelta(days=offset)
    ahead = _days_ahead(text, today)
    match = _WEEKDAY.search(text)
    if match is None:
        return ahead
    weekday = _WEEKDAYS[match["day"]]
    if ahead is not None:
        # "daqui a duas semanas, na terça": the named weekday nearest to that day.
        return nearest_weekday(ahead, weekday)
    if (
        match["next_before"]
        or match["week_before"]
        or match["next_after"]
        or _WEEK_MARK.search(text)
    ):
        next_monday = today + timedelta(days=7 - today.weekday())
        return next_monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7)


def _is_day_word(word: str) -> bool:
    return word in _WEEKDAYS or word in _ABBREVIATIONS or word in _ABBREVIATIONS.values()


def _in_day_list(words: list[str], at: int) -> bool:
    """ "seg, qua e sex", "qua ou qui": an abbreviation next to another day (across "e"/"ou")."""
    for step in (-1, 1):
        other = at + step
        if 0 <= other < len(words) and words[other] in ("e", "ou", "a"):
            other += step
        if 0 <= other < len(words) and _is_day_word(words[other]):
            return True
    return False


def _expand_abbreviations(normalized: str) -> str:
    words = normalized.split()
    for at, word in enumerate(words):
        if word not in _ABBREVIATIONS:
            continue
        before = words[at - 1] if at else ""
        after = words[at + 1] if at + 1 < len(words) else ""
        timed = after[:1].isdigit() or (
            after in _TIME_AFTER and (after != "que" or words[at + 2 : at + 3] == ["vem"])
        )
        alone = len(words) == 1
        listed = before not in _INFINITIVE_BEFORE and _in_day_list(words, at)
        if (
            alone
            or listed
            or before in _DAY_INTRODUCERS
            or (timed and before not in _INFINITIVE_BEFORE)
        ):
            words[at] = _ABBREVIATIONS[word]
    return " ".join(words)


@lru_cache(maxsize=512)
def mentions_date(text: str) -> bool:
    """Whether a message names a day at all (any reference day gives the same answer).
    Cached, as ``normalize``: a turn's message is read by several extractors and services."""
    normalized = _date_form(text)
    reference = date(2000, 1, 3)
    return (_explicit(normalized, reference) or _relative(normalized, reference)) is not None


_SAID_WHEN = (
    _ISO,
    _NUMERIC,
    _DOTTED_DATE,
    _MONTH_NAME,
    _DAY_OF_MONTH,
    _RELATIVE,
    _WEEKDAY,
    _PERIOD_ONLY,
)


def without_dates_and_times(text: str) -> str:
    """``text`` normalized, with the days and clock times it names taken out ("sábado dia 9
    às 10h abre cedo?" → "abre cedo?"): what is left is what a question
    asks about, the day and time being values the person gives. A bare number stays (it may
    count people or years)."""
    normalized = _dots_as_slashes(normalize(text))
    for pattern in _SAID_WHEN:
        normalized = pattern.sub(" ", normalized)

    def clock(match: re.Match[str]) -> str:
        said = match["clock"] or match["suffix"] or match["period"] or match["ampm"]
        return " " if said or match["pre"] else match[0]

    normalized = _TIME.sub(clock, normalized)
    return " ".join(normalized.split())


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
    normalized = _date_form(text)
    for part in _latest_first(normalized):
        before = normalized[: len(normalized) - len(part)]
        found = _destination(part, today, before, reference)
        found = found or _explicit(part, today) or _relative(part, today, before, reference)
        if found is not None:
            return found
    if expecting:
        bare = _BARE_DAY.match(normalized)
        if bare:
            return _next_day_of_month(int(bare[1]), today)
    return None


def resolve_birth_date(text: str, now: datetime, tz: ZoneInfo) -> date | None:
    """A birth date with its year ("31/10/74", "1.3.1990", "5 de maio de 1988"), not after today;
    a two-digit year is the latest such year up to today's ("74" → 1974)."""
    today = now.astimezone(tz).date()
    found = _explicit(_date_form(text), today, past=True)
    if found is None or found > today or found == today:
        return None
    return found


def _date_form(text: str) -> str:
    """The text dates are read from: dotted dates as slashes, numbers in words as digits,
    weekday abbreviations that name a day written out."""
    return _expand_abbreviations(with_digits(normalize(_dots_as_slashes(text))))


def _dots_as_slashes(text: str) -> str:
    """ "1.3.2013" → "1/3/2013", and "10.02" → "10/02" when it cannot be a time ("18.30")."""
    text = _DOTTED_DATE.sub(lambda m: f"{m[1]}/{m[2]}/{m[3]}", text)

    def day_month(match: re.Match[str]) -> str:
        return match[0] if _is_clock(int(match[1]), int(match[2])) else f"{match[1]}/{match[2]}"

    return _DOTTED.sub(day_month, text)


def _destination(text: str, today: date, before: str, reference: date | None) -> date | None:
    """The day said right after "para (o|a)", when the message names one there."""
    for match in _DESTINATION.finditer(text):
        rest = text[match.end() :]
        head = before + " " + text[: match.end()]
        found = _explicit(rest, today) or _relative(rest, today, head, reference)
        if found is not None:
            return found
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


# What follows a count of people rather than an hour ("as 3 no mesmo horário", "os dois juntos").
_PEOPLE_AFTER = re.compile(
    r"\s+(?:no mesmo horario|na mesma (?:turma|hora|aula)|junt[oa]s|amig[oa]s"
    r"|pessoas|de nos|de voces)\b"
)


# What a number counts when it is no hour ("entre 8 e 10 anos", "umas 2 vezes", "as 3 aulas").
_COUNT_AFTER = re.compile(
    r"\s*(?:anos|pessoas|dias|semanas|meses|vezes|alunos|alunas|aulas|aulinhas|reais)\b"
)


def _reading(match: re.Match[str], text: str) -> tuple[time, bool] | None:
    """The time a match says and whether its hour could also be read twelve hours later."""
    digits = match["h"].isdecimal()
    and_min = match["and_min"]
    if match["pre"] == "entre":
        if "min" in match[0] or _COUNT_AFTER.match(text, match.end()):
            # "entre 5 e 10 minutos", "entre 8 e 10 anos": a span of something else.
            return None
        if and_min is not None and and_min != "meia":
            # "entre 18 e 19": two hours, not 18:19; the first says when it can start.
            and_min = None
    minute_word = match["clock"] or match["after_h"] or and_min
    marked = match["pre"] or match["period"] or match["ampm"] or match["clock"] or and_min
    if match["suffix"] and (digits or (number_value(match["h"]) or 0) >= 13):
        # "19 horas"; in words only past noon ("dezenove horas"): no one's class lasts that
        # long, while "sete horas" can be a duration.
        marked = True
    if match["after_h"] and not match["suffix"]:
        return None
    if not marked or (
        not match["pre"] and _preceding_word(text, match.start()) in _NOT_TIME_BEFORE
    ):
        return None
    counted = _PEOPLE_AFTER.match(text, match.end()) or _COUNT_AFTER.match(text, match.end())
    if counted and not (match["suffix"] or match["clock"]):
        # "as 3 no mesmo horário", "as duas juntas", "umas 2 vezes": people or things
        # counted, not an hour.
        return None
    hour = number_value(match["h"])
    if hour is None:
        return None
    found = _clock(_with_period(hour, match["period"], match["ampm"]), _minutes(minute_word))
    if found is None:
        return None
    undecided = not (match["period"] or match["ampm"] or match["h"].startswith("0"))
    return found, undecided and 1 <= hour <= 11


def _before_hour(text: str) -> tuple[int, tuple[time, bool]] | None:
    """ "quinze para o meio-dia" → 11:45, "dez para as oito da noite" → 19:50."""
    match = _BEFORE_HOUR.search(text)
    if match is None or _preceding_word(text, match.start()) in _COUNTED_BEFORE:
        return None
    target = match["target"].replace("-", " ")
    noon = target in ("meio dia", "meiodia")
    if target.startswith("mei"):
        hour: int | None = 12 if noon else 24
    else:
        hour = number_value(target)
    minutes = 15 if match["minutes"] == "um quarto" else number_value(match["minutes"])
    if hour is None or minutes is None or not 1 <= hour <= 24:
        return None
    if not target.startswith("mei"):
        hour = _with_period(hour, match["period"], None) or 24
    found = _clock((hour * 60 - minutes) // 60 % 24, (hour * 60 - minutes) % 60)
    if found is None:
        return None
    undecided = not match["period"] and not target.startswith("mei")
    return match.start(), (found, undecided and 1 <= found.hour <= 11)


def _first_mention(text: str) -> tuple[time, bool] | None:
    """The first time mentioned that is not taken back ("19h não"), with its ambiguity."""
    mentions: list[tuple[int, tuple[time, bool]]] = []
    before = _before_hour(text)
    if before is not None:
        mentions.append(before)
        text = text[: before[0]]
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


def _is_clock(hour: int, minute: int) -> bool:
    """Whether "hh.mm" reads as a time rather than a day and month ("18.30" vs "10.02")."""
    return hour <= 23 and minute <= 59 and minute % 5 == 0 and (hour > 12 or minute > 12)


def _dots_as_colons(text: str) -> str:
    """ "18.30" → "18:30" when it cannot be a day and month ("10.02" stays a date)."""

    def clock(match: re.Match[str]) -> str:
        hour = int(match[1])
        return f"{hour}:{match[2]}" if _is_clock(hour, int(match[2])) else match[0]

    return _DOTTED.sub(clock, text)


def time_candidates(text: str, *, expecting: bool = False) -> list[time]:
    """The readings of the time a message refers to: one, or two for an hour without a period
    ("às 8" → 08:00 and 20:00), literal first. The latest correction wins; see the module doc."""
    return list(_time_candidates(text, expecting))


@lru_cache(maxsize=512)
def _time_candidates(text: str, expecting: bool) -> tuple[time, ...]:
    """``time_candidates``, cached (as ``normalize``) and immutable."""
    # Each message of a burst (a line of the turn's text) normalized apart: a "não" opening the
    # next message ("19h" / "não pera" / "dia 23") corrects what follows it, it does not take
    # back the hour that ended the message before.
    normalized = "\n".join(normalize(line) for line in _dots_as_colons(text).splitlines())
    targets = [m for m in _TO_HOUR.finditer(normalized) if not _minutes_before(normalized, m)]
    found = _first_mention(normalized[targets[-1].start() :]) if targets else None
    found = found or next(filter(None, map(_first_mention, _latest_first(normalized))), None)
    if found is None and expecting:
        # "7 não, 18": the hour after the latest correction is the one meant.
        bare = next(
            filter(None, (_BARE_HOUR.match(p.strip()) for p in _latest_first(normalized))), None
        )
        hour = number_value(bare[1]) if bare else None
        literal = _clock(hour, 0)
        if bare is not None and literal is not None and hour is not None:
            found = literal, 1 <= hour <= 11 and not bare[1].startswith("0")
    if found is None:
        return ()
    literal, ambiguous = found
    return (literal, literal.replace(hour=literal.hour + 12)) if ambiguous else (literal,)


def _hour_in(hour: int, period: str) -> bool:
    start, end = _PERIOD_HOURS[period]
    return start <= hour < end


def _preferred(
    normalized: str, valid_times: Collection[str] | None, previous: time | None
) -> time | None:
    """A time said by preference, not by hour: a part of the day moves the time said before
    into it ("às 7" then "da noite" → 19:00); with the class times, the only class of that part
    of the day ("de manhã cedo" → 07:00) or the first or last class ("o último horário")."""
    period = _part_named(normalized)
    if previous is not None and period is not None:
        if _hour_in(previous.hour, period):
            return previous
        for shift in (12, -12):
            if 0 <= previous.hour + shift <= 23 and _hour_in(previous.hour + shift, period):
                return previous.replace(hour=previous.hour + shift)
    if not valid_times:
        return None
    slots = sorted(time.fromisoformat(t) for t in valid_times)
    if period is not None:
        slots = [t for t in slots if _hour_in(t.hour, period)]
    if slots and _FIRST_SLOT.search(normalized):
        return slots[0]
    if slots and _LAST_SLOT.search(normalized):
        return slots[-1]
    return slots[0] if period is not None and len(slots) == 1 else None


def part_of_day(text: str) -> PartOfDay | None:
    """The part of the day a message names without an hour ("terça à noite", "pela manhã"):
    "manha", "tarde" or "noite", else None. A wish about when, kept until an hour is chosen, so
    the hours offered are that part's, not the whole day's."""
    return _part_named(normalize(text))


def _part_named(normalized: str) -> PartOfDay | None:
    """The part of the day named ("à noite") or said another way ("cedinho", "depois do
    almoço", "saindo do trabalho": ``_PART_HINTS``)."""
    match = _PERIOD_ONLY.search(normalized)
    if match is not None:
        return cast(PartOfDay, match[1])
    return next((part for part, hint in _PART_HINTS if hint.search(normalized)), None)


def in_part_of_day(hh_mm: str, part: PartOfDay) -> bool:
    """Whether a time "HH:MM" falls in a part of the day (``_PERIOD_HOURS``: 18:00 is both
    "6 da tarde" and the start of the evening)."""
    return _hour_in(int(hh_mm[:2]), part)


def slot_preference(text: str, *, time_asked: bool = False) -> SlotPreference | None:
    """ "first" for the first class of a day ("o primeiro horário que tiver"), "last" for the
    last one, "any" for no preference ("qualquer horário"; "tanto faz" when ``time_asked``:
    the message answers the question for the time), else None: the caller, who knows which
    classes are still free, picks it."""
    normalized = normalize(text)
    if _FIRST_SLOT.search(normalized):
        return "first"
    if _LAST_SLOT.search(normalized):
        return "last"
    if _ANY_TIME.search(normalized) or (time_asked and _ANY_ANSWER.search(normalized)):
        return "any"
    return None


def _half_of_day_hint(normalized: str, candidates: list[time]) -> time | None:
    """The reading of an hour with no period that the words around it choose: a part of the
    day said elsewhere ("de manhã, às 7"), or a hint such as "antes do trabalho", "cedo" (the
    earlier reading) or "depois do trabalho" (the later)."""
    period = _PERIOD_ONLY.search(normalized)
    if period is not None:
        return next((c for c in candidates if _hour_in(c.hour, period[1])), None)
    if _EARLY_HINT.search(normalized):
        return candidates[0]
    if _LATE_HINT.search(normalized):
        return candidates[1]
    return None


# "passa pras 20h", "para as 18": the hour a change goes to, which wins over an hour named
# before it ("não consigo às 19h, passa pras 20h?"), as "para o dia 12" wins among days.
_TO_HOUR = re.compile(r"\b(?:para(?: as| a| o das)?|pras|pros)\s+\d{1,2}(?:h|:|\b)")


# Words before "para as 9" that make it a time said to the hour ("um quarto para as 9", "cinco
# para as 20h"), not the hour a change goes to.
_MINUTE_WORDS = frozenset({"quarto", "minutos", "minuto", "cinco", "dez", "quinze", "vinte"})


def _minutes_before(normalized: str, match: re.Match[str]) -> bool:
    before = normalized[: match.start()].split()
    return bool(before) and (before[-1].isdigit() or before[-1] in _MINUTE_WORDS)


def resolve_time(
    text: str,
    *,
    expecting: bool = False,
    valid_times: Collection[str] | None = None,
    previous: time | None = None,
) -> time | None:
    """The time of day a message refers to (rules in the module doc).

    An hour without a period takes the reading among ``valid_times`` ("HH:MM", e.g. the pack's
    class times) when one is; else the literal hour, unless that is before
    ``EARLIEST_LITERAL_HOUR`` ("às 3" is 15:00: nobody books at three in the morning). With no
    hour, a preference is read against ``previous`` (the time the conversation has) and
    ``valid_times`` (see ``_preferred``).
    """
    candidates = time_candidates(text, expecting=expecting)
    if not candidates:
        return _preferred(normalize(text), valid_times, previous)
    if len(candidates) == 2:
        hinted = _half_of_day_hint(normalize(text), candidates)
        if hinted is not None and (not valid_times or hinted.strftime("%H:%M") in valid_times):
            return hinted
    if valid_times:
        valid = next((c for c in candidates if c.strftime("%H:%M") in valid_times), None)
        if valid is not None:
            return valid
    if len(candidates) == 2 and candidates[0].hour < EARLIEST_LITERAL_HOUR:
        return candidates[1]
    return candidates[0]
