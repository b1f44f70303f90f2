"""Ages told without telling the age: a birth date, a birth year, the age one turns soon.

Works on normalized text with digits (``with_digits(normalize(text))``); ``today`` is the
business date of the turn (``Turn.now`` in the business timezone), never the machine clock.

- a birth date after a birth word: "nasci em 12/08/1992", "nascida em 3.4.10", "data de
  nascimento 31/10/74" (a two-digit year is the past one) → the exact age on ``today``;
- a birth year: "nasci em 1988", "ela nasceu em 2011", "ela é de 2011", "sou de 1990" → the age
  turned this year (two digits only right after a birth word, "nasceu em 07", the past year:
  "sou de 90" may be anything), one less when the person says the birthday has not come yet
  ("ainda não fez aniversário") — said or not, the year alone cannot be more exact;
- the age one turns: "faço 30 mês que vem", "vai fazer 8 em maio", "completo 40 em março" →
  one less (the age today). "faz 2 anos que jogo" is a span of time, not a birthday.
- a typo of "anos" after a number ("41 anso", "30 anis") is read as "anos" (one edit, adjacent
  swaps included, via rapidfuzz), unless the word is a Portuguese word ("41 anoes" is not).
"""

from __future__ import annotations

import re
from datetime import date

from rapidfuzz.distance import OSA

from shared.nlu.lexicon import COMMON_WORDS
from shared.nlu.normalize import normalize

# The youngest age a birth year is read as (a year nearer than this is something else's).
MIN_YEARS_OLD = 3

_BIRTH_WORD = r"(?:nasci|nasceu|nascid[oa]|nascimento|nasc)"
_BIRTH_DATE = re.compile(
    rf"\b{_BIRTH_WORD}\b\D{{0,24}}?\b(\d{{1,2}})[/.-](\d{{1,2}})[/.-](\d{{4}}|\d{{2}})\b"
)
_BIRTH_YEAR = re.compile(
    rf"\b(?:{_BIRTH_WORD}(?:\s+(?:em|no ano de|no ano|de))?"
    r"|\b(?:e|sou)\s+(?:de|do ano de))\s+((?:19|20)\d{2})\b"
)
# "nasci em 88": two digits are a year only after a birth word, and not a day ("nasci em 12 de
# maio", "nasci em 12/5").
_BIRTH_SHORT_YEAR = re.compile(
    rf"\b{_BIRTH_WORD}(?:\s+(?:em|no ano de|no ano|de))?\s+(\d{{2}})\b"
    r"(?!\s*(?:de\s+)?(?:jan|fev|mar|abr|mai|jun|jul|ago|set|out|nov|dez)|\s*[/.-]\d|\s*anos?\b)"
)
_RAW_BIRTH_DATE = re.compile(
    r"(?i)(\bnasc\w*\b\D{0,24}?)\b\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})\b"
)
# A birthday and what follows it in its clause, where its day is said ("faço aniversário dia
# 12", "meu niver é semana que vem"): that day is the birthday's, not the class's.
_RAW_BIRTHDAY = re.compile(
    r"(?i)(\b(?:anivers[aá]rio|niver|(?:fa[cç]o|faz|fazer|farei|far[aá]|completo|completa)(?:\s+\d{1,3})?\s+anos)\b)[^,.;!?\n]{0,30}"
)
_NOT_YET = re.compile(
    r"\b(?:ainda nao (?:fez|fiz|faz|completou|completei)|nao (?:fez|fiz|completou|completei)"
    r" (?:aniversario|niver|anos) ainda|ainda vai fazer|ainda vou fazer)\b"
)
_TURNING = re.compile(
    r"\b(?:faco|farei|fara|vou fazer|vai fazer|completo|completa|vou completar|vai completar"
    r"|(?:ele|ela) faz)\s+(\d{1,3})(?:\s+anos)?\b(?!\s+(?:que|de)\b)"
    # Anyone's "faz 10 em julho", "faz 12 anos amanhã": a day to come says it is a birthday.
    r"|\bfaz\s+(\d{1,3})(?:\s+anos)?\s+(?=(?:em|no|na|mes que vem|semana que vem|ano que vem"
    r"|amanha|depois de amanha|daqui)\b)"
)
# An age just turned ("fez 12 em outubro", "completei 40 ontem"): that age, said with "anos"
# or before a time or the clause's end ("fiz 3 aulas" is no age).
_TURNED = re.compile(
    r"\b(?:fez|fiz|completou|completei|acabou de fazer|acabei de fazer)\s+(\d{1,3})"
    r"(?:\s+anos\b(?!\s+(?:que|de)\b)|(?=\s*(?:$|[,.;!?]|\s(?:em|no|na|agora|semana|mes|ontem|hoje|esse|este"
    r"|nesse|neste|ano|mes passado|semana passada)\b)))"
)
_NUMBER_THEN_WORD = re.compile(r"\b(\d{1,3})\s?([a-z]{3,5})\b")


def _year(digits: str, today: date) -> int:
    if len(digits) == 4:
        return int(digits)
    # A two-digit birth year is in the past: "74" is 1974, "10" is 2010 (in 2026).
    year = 2000 + int(digits)
    return year if year <= today.year else year - 100


def age_on(birth: date, today: date) -> int:
    """Whole years from ``birth`` to ``today``."""
    before_birthday = (today.month, today.day) < (birth.month, birth.day)
    return today.year - birth.year - (1 if before_birthday else 0)


def without_birth_date(text: str) -> str:
    """``text`` (as typed) without the birth date it gives, so the date is not read as the day
    of the class ("nasci em 12/08/1992, pode ser terça?"), nor the day of a birthday said in
    the same clause ("faço aniversário dia 12", "o niver dela é sábado")."""
    return _RAW_BIRTHDAY.sub(lambda match: match[1], _RAW_BIRTH_DATE.sub(lambda m: m[1], text))


def age_from_birth(text: str, normalized: str, today: date) -> int | None:
    """The age a birth date (read in ``text`` as typed: "05.11.01" keeps its dots) or a birth
    year (in ``normalized``) gives on ``today``, or None. A year is a birth year only for an
    age of at least ``MIN_YEARS_OLD`` ("o plano é de 2026" is not a birth)."""
    match = _BIRTH_DATE.search(normalize(text.replace(".", "/")))
    if match:
        day, month = int(match[1]), int(match[2])
        try:
            birth = date(_year(match[3], today), month, day)
        except ValueError:
            return None
        return age_on(birth, today) if birth <= today else None
    match = _BIRTH_YEAR.search(normalized) or _BIRTH_SHORT_YEAR.search(normalized)
    if match:
        year = _year(match[1], today)
        if today.year - year < MIN_YEARS_OLD:
            return None
        return today.year - year - (1 if _NOT_YET.search(normalized) else 0)
    return None


def turning_spans(normalized: str) -> list[tuple[int, int, int]]:
    """(start, end, age today) of every "faço 30 mês que vem": the age turned soon, minus one."""
    return [(m.start(), m.end(), int(m[1] or m[2]) - 1) for m in _TURNING.finditer(normalized)]


def turned_age(normalized: str) -> int | None:
    """The age a person just turned ("fez 12 em outubro"), or None."""
    match = _TURNED.search(normalized)
    return int(match[1]) if match else None


def with_years_typos_fixed(normalized: str) -> str:
    """ "41 anso" → "41 anos": a word one edit from "anos" right after a number."""

    def fix(match: re.Match[str]) -> str:
        word = match[2]
        if word in ("anos", "ano") or word in COMMON_WORDS or OSA.distance(word, "anos") > 1:
            return match[0]
        return f"{match[1]} anos"

    return _NUMBER_THEN_WORD.sub(fix, normalized)
