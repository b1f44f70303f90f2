"""Portuguese text normalization for matching (never for display).

Lower case, no accents, repeated letters folded ("siiim" → "sim"), common WhatsApp spellings
expanded ("vc" → "voce", "qro" → "quero"), a tourist's English or Spanish days and months
read as Portuguese ("friday", "viernes" → "sexta"), idioms of wanting rewritten ("tô afim de" →
"quero"), punctuation turned into spaces, whitespace collapsed. Typos are not fixed here: that
needs a vocabulary (``shared.nlu.fuzzy``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Spellings people type on WhatsApp, mapped to the word rules are written against.
SLANG = {
    "vc": "voce",
    "vcs": "voces",
    "q": "que",
    "pq": "porque",
    "porq": "porque",
    "tb": "tambem",
    "tbm": "tambem",
    "td": "tudo",
    "tds": "todos",
    "blz": "beleza",
    "msg": "mensagem",
    "hj": "hoje",
    "n": "nao",
    "naum": "nao",
    "s": "sim",
    "ss": "sim",
    "pfv": "por favor",
    "pfvr": "por favor",
    "obg": "obrigado",
    "obgd": "obrigado",
    "vlw": "valeu",
    "qto": "quanto",
    "qnto": "quanto",
    "qdo": "quando",
    "qnd": "quando",
    "cmg": "comigo",
    "agr": "agora",
    "p": "para",
    "pra": "para",
    "pro": "para o",
    "ta": "esta",
    "tah": "esta",
    "eh": "e",
    "aki": "aqui",
    "aq": "aqui",
    "mto": "muito",
    "mt": "muito",
    "oq": "o que",
    "dps": "depois",
    "ctz": "certeza",
    "vdd": "verdade",
    "qd": "quando",
    "hr": "hora",
    "hrs": "horas",
    "sab": "sabado",
    "qro": "quero",
    "qero": "quero",
    "kero": "quero",
    "qria": "queria",
    "keria": "queria",
    "qm": "quem",
    "qt": "quanto",
    "qnt": "quanto",
    "qts": "quantos",
    "msm": "mesmo",
    "nd": "nada",
    "fds": "fim de semana",
    "afim": "a fim",
    "fzr": "fazer",
}
# Days and months of a tourist's English or Spanish, as the Portuguese words every date rule
# reads ("next friday, the 3rd" → "proxima sexta, dia 3"; "el jueves 4 de marzo"); a
# weekday read as a date is then never taken for a name either. "may" and "march" are English
# verbs too, so they are left out.
FOREIGN_CALENDAR = {
    "monday": "segunda",
    "tuesday": "terca",
    "wednesday": "quarta",
    "thursday": "quinta",
    "friday": "sexta",
    "saturday": "sabado",
    "sunday": "domingo",
    "lunes": "segunda",
    "martes": "terca",
    "miercoles": "quarta",
    "jueves": "quinta",
    "viernes": "sexta",
    "january": "janeiro",
    "february": "fevereiro",
    "april": "abril",
    "june": "junho",
    "july": "julho",
    "august": "agosto",
    "september": "setembro",
    "october": "outubro",
    "november": "novembro",
    "december": "dezembro",
    "enero": "janeiro",
    "febrero": "fevereiro",
    "marzo": "marco",
    "mayo": "maio",
    "junio": "junho",
    "julio": "julho",
    "septiembre": "setembro",
    "setiembre": "setembro",
    "octubre": "outubro",
    "noviembre": "novembro",
    "diciembre": "dezembro",
    "today": "hoje",
    "hoy": "hoje",
    "tomorrow": "amanha",
    "next": "proxima",
}
# Idioms that say what a person wants, rewritten to the word the pack's rules are written
# against ("tô afim de jogar" is "quero jogar"); applied after the word spellings above.
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:(?:estou|esta|to|tou|tava|estava)\s+)?a fim(?:\s+de)?\b"), "quero"),
    # An English ordinal day ("the 3rd"), Spanish "a las 18" and "30 years old" read as
    # "dia 3", "as 18" and "30 anos".
    (re.compile(r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b"), r"dia \1"),
    (re.compile(r"\ba las\b"), "as"),
    (re.compile(r"\b(\d{1,3}) years? old\b"), r"\1 anos"),
)

_REPEATS = re.compile(r"([a-z])\1{2,}")
_NON_WORD = re.compile(r"[^\w:/@+-]+")
_SPACES = re.compile(r"\s+")


def strip_accents(text: str) -> str:
    """Text without diacritics ("terça" → "terca"): people type both, rules match one form."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=512)
def normalize(text: str) -> str:
    """Matching form of a message: lower, unaccented, slang expanded, one space.

    Cached: every extractor reads the same message, and a pure function of a string may."""
    lowered = strip_accents(text.casefold())
    folded = _REPEATS.sub(r"\1", lowered)
    words = _NON_WORD.sub(" ", folded).split()
    expanded = " ".join(SLANG.get(w) or FOREIGN_CALENDAR.get(w, w) for w in words)
    for pattern, replacement in PHRASES:
        expanded = pattern.sub(replacement, expanded)
    return _SPACES.sub(" ", expanded).strip()


def tokens(text: str) -> list[str]:
    """Normalized words of a message."""
    return normalize(text).split()
