"""Portuguese number words, 0..99, as people write them ("sete", "vinte e sete", "duas").

Works on normalized text (lower case, no accents). ``NUMBER_WORDS`` is a regex fragment other
modules embed in their patterns; ``number_value`` turns what it matched into an int.
``with_digits`` rewrites every number written in words as digits with text2num, which knows all
of Portuguese number grammar ("trinta e cinco anos" → "35 anos", "dia vinte e três" → "dia 23")
and leaves the ambiguous "um"/"uma"/"duas" and ordinals ("segunda") alone.
"""

from __future__ import annotations

import re
from functools import lru_cache

from text_to_num import alpha2digit

_UNITS = {
    "zero": 0,
    "um": 1,
    "uma": 1,
    "dois": 2,
    "duas": 2,
    "tres": 3,
    "quatro": 4,
    "cinco": 5,
    "seis": 6,
    "sete": 7,
    "oito": 8,
    "nove": 9,
}
_TEENS = {
    "dez": 10,
    "onze": 11,
    "doze": 12,
    "treze": 13,
    "catorze": 14,
    "quatorze": 14,
    "quinze": 15,
    "dezesseis": 16,
    "dezasseis": 16,
    "dezessete": 17,
    "dezoito": 18,
    "dezenove": 19,
}
_TENS = {
    "vinte": 20,
    "trinta": 30,
    "quarenta": 40,
    "cinquenta": 50,
    "sessenta": 60,
    "setenta": 70,
    "oitenta": 80,
    "noventa": 90,
}
_SIMPLE = {**_UNITS, **_TEENS, **_TENS}
# Every number word, one word each ("dez", "vinte"): never a person's name ("dia dez").
NUMBER_WORD_SET = frozenset(_SIMPLE)


def _alternation(words: dict[str, int]) -> str:
    # Longest first so "dezessete" wins over "dez" and "duas" over "dua...".
    return "|".join(sorted(words, key=len, reverse=True))


_UNIT_WORDS = _alternation({k: v for k, v in _UNITS.items() if k != "zero"})

# A number word: "vinte e sete", "quinze", "duas"; bounded by \b in embedding patterns.
NUMBER_WORDS = f"(?:(?:{_alternation(_TENS)})(?: e (?:{_UNIT_WORDS}))?|{_alternation(_SIMPLE)})"


def number_value(words: str) -> int | None:
    """Value of a number written in words or digits ("vinte e sete" → 27, "27" → 27)."""
    words = words.strip()
    if words.isdecimal():
        return int(words)
    total = 0
    for part in words.split(" e "):
        value = _SIMPLE.get(part.strip())
        if value is None:
            return None
        total += value
    return total


# Ordinal words stay words: "quarta", "quinta" and "sexta" are weekdays, "segundo" a second.
_ORDINAL = re.compile(
    r"(\b(?:primeir|segund|terceir|quart|quint|sext|setim|oitav|non|decim)[oa]s?\b)"
)


@lru_cache(maxsize=512)
def with_digits(normalized: str) -> str:
    """Normalized text with numbers in words written as digits ("vinte e nove" → "29")."""
    parts = _ORDINAL.split(normalized)
    return "".join(
        part if index % 2 else alpha2digit(part, "pt") for index, part in enumerate(parts)
    )
