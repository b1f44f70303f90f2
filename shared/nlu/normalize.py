"""Portuguese text normalization for matching (never for display).

Lower case, no accents, repeated letters folded ("siiim" → "sim"), common WhatsApp spellings
expanded ("vc" → "voce", "qro" → "quero"), a tourist's English or Spanish read in Portuguese
words ("friday", "viernes" → "sexta"; "trial class" → "aula experimental":
``shared.nlu.foreign``), idioms of wanting rewritten ("tô afim de" →
"quero"), punctuation turned into spaces, whitespace collapsed. Typos are not fixed here: that
needs a vocabulary (``shared.nlu.fuzzy``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from shared.nlu.foreign import rewrite_phrases, rewrite_words

# Spellings people type on WhatsApp, mapped to the word rules are written against.
SLANG = {
    # Weekdays said fondly ("tercinha que vem", "sextou", "sabadão").
    "segundona": "segunda",
    "tercinha": "terca",
    "quintinha": "quinta",
    "sextinha": "sexta",
    "sabadinho": "sabado",
    "sabadao": "sabado",
    "domingao": "domingo",
    "vc": "voce",
    "vcs": "voces",
    "q": "que",
    "pq": "porque",
    "porq": "porque",
    "tb": "tambem",
    "tbm": "tambem",
    "vz": "vez",
    "vzs": "vezes",
    "vezs": "vezes",
    "td": "tudo",
    "tds": "todos",
    "blz": "beleza",
    "msg": "mensagem",
    # The booking's confirmation, clipped ("não chegou a conf").
    "conf": "confirmacao",
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
    # Parts of the day in the diminutive ("de manhãzinha", "à noitinha") are the parts.
    "manhazinha": "manha",
    "tardezinha": "tarde",
    "noitinha": "noite",
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
    "qlqr": "qualquer",
    "qlq": "qualquer",
    "qq": "qualquer",
    "qqr": "qualquer",
    # The morning said in slang ("7 da matina").
    "matina": "manha",
}
# Idioms that say what a person wants, rewritten to the word the pack's rules are written
# against ("tô afim de jogar" is "quero jogar"); applied after the word spellings above.
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:(?:estou|esta|to|tou|tava|estava)\s+)?a fim(?:\s+de)?\b"), "quero"),
)

_REPEATS = re.compile(r"([a-z])\1{2,}")
# "7 p.m.", "9 a. m.": the dotted am/pm an hour is written with, before punctuation goes (its
# "p" would be read as "para").
_DOTTED_AM_PM = re.compile(r"(?<=\d)\s*([ap])\.\s?m\b\.?")
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
    folded = _DOTTED_AM_PM.sub(r" \1m", _REPEATS.sub(r"\1", lowered))
    words = rewrite_phrases(" ".join(_NON_WORD.sub(" ", folded).split())).split()
    expanded = " ".join(SLANG.get(w) or w for w in rewrite_words(words))
    for pattern, replacement in PHRASES:
        expanded = pattern.sub(replacement, expanded)
    return _SPACES.sub(" ", expanded).strip()


def tokens(text: str) -> list[str]:
    """Normalized words of a message."""
    return normalize(text).split()
