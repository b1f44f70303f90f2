"""Portuguese text normalization for matching (never for display).

Lower case, no accents, repeated letters folded ("siiim" → "sim"), common WhatsApp spellings
expanded ("vc" → "voce"), punctuation turned into spaces, whitespace collapsed.
"""

from __future__ import annotations

import re
import unicodedata

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
}

_REPEATS = re.compile(r"([a-z])\1{2,}")
_NON_WORD = re.compile(r"[^\w:/@+-]+")
_SPACES = re.compile(r"\s+")


def strip_accents(text: str) -> str:
    """Text without diacritics ("terça" → "terca"): people type both, rules match one form."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalize(text: str) -> str:
    """Matching form of a message: lower, unaccented, slang expanded, one space."""
    lowered = strip_accents(text.casefold())
    folded = _REPEATS.sub(r"\1", lowered)
    words = _NON_WORD.sub(" ", folded).split()
    return _SPACES.sub(" ", " ".join(SLANG.get(w, w) for w in words)).strip()


def tokens(text: str) -> list[str]:
    """Normalized words of a message."""
    return normalize(text).split()
