"""Yes/no answers in WhatsApp Portuguese.

Rule: a message is an answer only when the answer *leads* it. Greetings, laughter and
interjections in front are skipped ("oi! sim" → yes, "kkk claro" → yes); then the longest known
phrase at the start decides:

- *strong* phrases ("sim", "claro", "pode ser", "não", "agora não"...) decide even when more
  content follows, because people answer and go on in the same message: "sim, e onde fica?" →
  True, "não, prefiro quarta" → False;
- *weak* phrases ("quero", "pode", "isso", "vamos", "tá", "cancela") decide only when they make up
  the whole first clause, because they also start ordinary sentences: "quero" → True but
  "quero saber o preço" → None, "isso é caro?" → None;
- a "não"/"nem" followed by a word of doubt is not an answer: "não sei onde fica" → None,
  "nem lembro" → None (the person is unsure, not refusing);
- otherwise None, even when "sim" appears later ("eu queria saber se sim" → None): a word deep in
  a message is not an answer to the bot's question.

When no word decides, an emoji answers: 👍 ✅ 👌 🙌 ✔️ 🤙 for yes, 👎 ❌ 🚫 🙅 for no, when it comes
before any word or when the message has nothing but fillers around it ("👍", "oi 👍").

People do not type the lexicon's exact words, so a word is read as the lexicon word it is a
spelling of before any phrase is matched (:func:`_canonical`): repeated letters ("simm",
"fechouuu"), dropped double letters ("iso" → "isso"), a superlative or diminutive ("fechadíssimo",
"certinho") and, for longer words, one typo ("cofirmo", "perfeiro"). A weak phrase may be
followed in its clause by intensifiers, politeness and laughter, or by more agreement ("quero
muito", "pode mandar ver", "isso, perfeito"): agreement chained with agreement is still an answer.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rapidfuzz.distance import OSA

from shared.nlu.normalize import normalize

_STRONG_YES = (
    "sim",
    "s",
    "sim sim",
    "sim senhor",
    "sim senhora",
    "claro",
    "claro que sim",
    "com certeza",
    "certeza",
    "certeza que sim",
    "acho que sim",
    "por mim sim",
    "por mim pode",
    "bora",
    "vambora",
    "partiu",
    "dale",
    "beleza",
    "fechado",
    "fechou",
    "ok",
    "okay",
    "okey",
    "oks",
    "pode ser",
    "pode sim",
    "pode confirmar",
    "pode marcar",
    "pode agendar",
    "quero sim",
    "isso mesmo",
    "isso ai",
    "isso sim",
    "exato",
    "exatamente",
    "perfeito",
    "otimo",
    "combinado",
    "certo",
    "esta certo",
    "esta bom",
    "esta bem",
    "esta otimo",
    "esta combinado",
    "show",
    "top",
    "demorou",
    "confirmo",
    "confirmado",
    "confirma",
    "positivo",
    "afirmativo",
    "uhum",
    "aham",
    "yes",
    "yep",
    "tranquilo",
    "de boa",
    "sem problema",
    "sem problemas",
    "nao tem problema",
    "nao ha problema",
    "logico",
    "logico que sim",
    "obvio",
    "pode crer",
    "manda ver",
    "vamos nessa",
    "vamos sim",
    "aceito",
    "topo",
    "to dentro",
    "agora sim",
    "de acordo",
    "estou de acordo",
    "mandar ver",
    "manda bala",
    "sem duvida",
    "sem duvidas",
    "correto",
    "perfeitamente",
    "firmeza",
    "simbora",
    "yeah",
    "sure",
)
# "pode mandar" answers "posso enviar?" alone; "pode mandar o endereço?" asks something else.
_WEAK_YES = (
    "quero",
    "pode",
    "isso",
    "vamos",
    "vamo",
    "esta",
    "gostaria",
    "boa",
    "pode mandar",
    "pode enviar",
    "manda",
    "envia",
    # Spanish and Portugal's "sí": a whole first clause ("¡Sí, perfecto!").
    "si",
)
_STRONG_NO: tuple[str, ...] = (
    "nao",
    "n",
    "nn",
    "nops",
    "nope",
    "negativo",
    "nem",
    "nem pensar",
    "agora nao",
    "hoje nao",
    "ainda nao",
    "claro que nao",
    "acho que nao",
    "melhor nao",
    "prefiro nao",
    "tambem nao",
    "por enquanto nao",
    "deixa para la",
    "deixa quieto",
    "esquece",
    "dispenso",
    "jamais",
    "de jeito nenhum",
    "de forma alguma",
    "logico que nao",
    "obvio que nao",
    "nao precisa",
    "nada disso",
    "nem a pau",
    "errado",
    "errada",
    "esta errado",
    "esta errada",
)
# A no said after its verb, as the Northeast says it ("posso não", "dá não", "quero não"):
# the verbs of wanting, needing, being able and going that answer a booking's question.
_NEGATED_AFTER = (
    "quero", "precisa", "preciso", "posso", "consigo", "da", "vou", "vai", "rola", "vai dar",
    "vai rolar", "vou poder", "vou conseguir", "tenho como", "quer", "gostei", "serve",
)  # fmt: skip
_STRONG_NO += tuple(f"{verb} nao" for verb in _NEGATED_AFTER)
_WEAK_NO = ("cancela", "cancelar")

# Words after "não"/"nem" that turn the phrase into doubt ("não sei"), not a refusal.
_DOUBT = (
    ("sei",),
    ("entendi",),
    ("entendo",),
    ("lembro",),
    ("sabia",),
    ("conheco",),
    ("faco", "ideia"),
    ("tenho", "certeza"),
    ("tenho", "ideia"),
)
# Words that may precede or follow an answer without changing it.
_FILLERS = frozenset(
    {
        "oi",
        "ola",
        "opa",
        "ah",
        "oh",
        "hm",
        "hum",
        "ei",
        "eita",
        "entao",
        "olha",
        "uai",
        "pois",
        "mesmo",
        "obrigado",
        "obrigada",
        "valeu",
        "ai",
        "compreendo",
        "entendo",
        "entendi",
        # Intensifiers and politeness around an answer ("quero muito", "fechou demais",
        # "pode sim pls"): they strengthen it, they do not change it.
        "demais",
        "muito",
        "total",
        "totalmente",
        "ja",
        "pls",
        "please",
        "tmj",
        "grato",
        "grata",
        "gracias",
        "mano",
        "cara",
    }
)
_FILLER_PHRASES = (
    ("bom", "dia"),
    ("boa", "tarde"),
    ("boa", "noite"),
    ("e", "ai"),
    ("por", "favor"),
)
_LAUGHTER = re.compile(r"^(?:k+|(?:ha){2,}h?|(?:he){2,}|(?:rs)+|hehe\w*|haha\w*)$")

_YES_EMOJI = frozenset("👍👌🙌✅✔☑🆗🤝🤙💯")
_NO_EMOJI = frozenset("👎❌🚫✖🙅⛔")

_CLAUSE_BREAK = re.compile(r"[,.;!?\n…]+|\s[-–—]\s")
_DOUBLES = re.compile(r"(.)\1+")
# Superlatives and diminutives of an answer word: "fechadissimo" is "fechado", "certinho" "certo".
_DEGREE = re.compile(r"(?:iss?im|inh)[oa]$")
# Shortest word a one-letter typo is corrected in: shorter ones collide with ordinary words.
_TYPO_MIN_LENGTH = 6
_WORD_CHAR = re.compile(r"\w")
_EDGE_MARKS = ":/@+-"


def _phrase_table() -> dict[str, list[tuple[tuple[str, ...], bool, bool]]]:
    """Phrases indexed by first word, longest first: (words, answer, strong)."""
    table: dict[str, list[tuple[tuple[str, ...], bool, bool]]] = {}
    groups: tuple[tuple[tuple[str, ...], bool, bool], ...] = (
        (_STRONG_YES, True, True),
        (_WEAK_YES, True, False),
        (_STRONG_NO, False, True),
        (_WEAK_NO, False, False),
    )
    for phrases, answer, strong in groups:
        for phrase in phrases:
            words = tuple(phrase.split())
            table.setdefault(words[0], []).append((words, answer, strong))
    for entries in table.values():
        entries.sort(key=lambda entry: len(entry[0]), reverse=True)
    return table


_PHRASES = _phrase_table()
_VOCABULARY = frozenset(
    {word for entries in _PHRASES.values() for words, _, _ in entries for word in words} | _FILLERS
)


def _folded_index() -> dict[str, str]:
    """Known words by their form with every double letter single ("isso" → "iso"), for the
    forms that fold to one known word only."""
    index: dict[str, set[str]] = {}
    for word in _VOCABULARY:
        index.setdefault(_DOUBLES.sub(r"\1", word), set()).add(word)
    return {key: words.pop() for key, words in index.items() if len(words) == 1}


_FOLDED = _folded_index()
_LONG_WORDS = tuple(w for w in _VOCABULARY if len(w) >= _TYPO_MIN_LENGTH - 1)


@lru_cache(maxsize=2048)
def _canonical(word: str) -> str:
    """The lexicon word ``word`` spells, or ``word`` itself when it spells none.

    Tried in order, the first known word wins: the word as typed; with repeated letters folded
    ("simm", "okk"); a known word whose double letters were typed single ("iso" → "isso");
    without a superlative or diminutive ending ("fechadissimo", "certinho"); one edit (or a swap
    of two neighbours) away from exactly one known word with the same first and last letter,
    for words of ``_TYPO_MIN_LENGTH`` letters or more ("cofirmo", "confrimo"; not "esqueci",
    another form of "esquece": Portuguese inflects at the end of a word).
    """
    word = word.strip(_EDGE_MARKS)
    if word in _VOCABULARY or not word.isalpha():
        return word
    folded = _DOUBLES.sub(r"\1", word)
    if folded in _VOCABULARY:
        return folded
    if folded in _FOLDED:
        return _FOLDED[folded]
    base = _DEGREE.sub("", folded)
    for stem in (base + "o", base + "a"):
        if base != folded and stem in _VOCABULARY:
            return stem
    if len(word) >= _TYPO_MIN_LENGTH:
        close = [
            w
            for w in _LONG_WORDS
            if (w[0], w[-1]) == (folded[0], folded[-1])
            and OSA.distance(folded, w, score_cutoff=1) <= 1
        ]
        if len(close) == 1:
            return close[0]
    return word


def _words_by_clause(text: str) -> list[tuple[str, int]]:
    """Normalized words, each with the index of the clause it belongs to."""
    words: list[tuple[str, int]] = []
    for index, clause in enumerate(_CLAUSE_BREAK.split(text)):
        words.extend((w, index) for w in map(_canonical, normalize(clause).split()) if w)
    return words


def _is_filler(words: list[tuple[str, int]], at: int) -> int:
    """How many words starting at ``at`` are filler (0 when none)."""
    word = words[at][0]
    if word in _FILLERS or _LAUGHTER.match(word):
        return 1
    pair = tuple(w for w, _ in words[at : at + 2])
    return 2 if pair in _FILLER_PHRASES else 0


def _skip_fillers(words: list[tuple[str, int]], at: int) -> int:
    while at < len(words):
        skipped = _is_filler(words, at)
        if not skipped:
            break
        at += skipped
    return at


def _followed_by_doubt(texts: list[str], end: int) -> bool:
    """Whether a negative phrase ending at ``end`` reads "não sei", "nem lembro"..."""
    if texts[end - 1] not in ("nao", "n", "nn", "nem"):
        return False
    return any(tuple(texts[end : end + len(doubt)]) == doubt for doubt in _DOUBT)


def _clause_agrees(words: list[tuple[str, int]], at: int, answer: bool) -> bool:
    """Whether the rest of the clause from ``at`` only strengthens ``answer``: fillers,
    intensifiers, laughter, or phrases giving the same answer ("pode mandar ver", "isso,
    perfeito" within one clause)."""
    clause = words[at - 1][1]
    while at < len(words) and words[at][1] == clause:
        skipped = _is_filler(words, at)
        if skipped:
            at += skipped
            continue
        same, end = _match(words, at)
        if same is not answer:
            return False
        at = end
    return True


def _match(words: list[tuple[str, int]], at: int) -> tuple[bool | None, int]:
    """The answer of the phrase starting at ``at`` and the index right after it.

    Phrases are tried longest first; a weak one that other words follow in its clause gives
    way to a shorter one ("pode mandar ver": not "pode mandar" + "ver" but "pode" + "mandar
    ver")."""
    texts = [w for w, _ in words]
    for phrase, answer, strong in _PHRASES.get(texts[at], ()):
        end = at + len(phrase)
        if tuple(texts[at:end]) != phrase:
            continue
        if not answer and _followed_by_doubt(texts, end):
            return None, at
        if strong or _clause_agrees(words, end, answer):
            return answer, end
    return None, at


def _emoji_answer(text: str) -> bool | None:
    has_yes = any(ch in _YES_EMOJI for ch in text)
    has_no = any(ch in _NO_EMOJI for ch in text)
    if has_yes == has_no:
        return None
    return has_yes


def split_yes_no(text: str) -> tuple[bool | None, str]:
    """The leading answer and the message that follows it.

    ``split_yes_no("sim, e onde fica?") == (True, "e onde fica")``: a handler can take the answer
    and still look at the rest (a date, a question). The rest is in normalized form; it is the
    whole normalized message when there is no answer.
    """
    words = _words_by_clause(text)
    start = _skip_fillers(words, 0)
    if start < len(words):
        answer, end = _match(words, start)
        if answer is not None:
            return answer, " ".join(w for w, _ in words[_skip_fillers(words, end) :])
        leading = _WORD_CHAR.split(text, maxsplit=1)[0]
        return _emoji_answer(leading), " ".join(w for w, _ in words)
    return _emoji_answer(text), ""


def yes_no(text: str) -> bool | None:
    """True/False when the message leads with a yes/no answer, else None (rules in module doc)."""
    return split_yes_no(text)[0]


# "quero esse", "fico com essa": a demonstrative points at a thing the other side named.
_POINTING = re.compile(r"\b(?:esse|essa|este|desse|dessa|deste|nesse|nessa|neste|aquele|aquela)\b")


def points_at(text: str) -> bool:
    """Whether a reply points at something the last answer named ("fechado, quero esse"): it
    takes up an item of that answer, where a bare "sim" answers whatever yes/no was asked."""
    return bool(_POINTING.search(normalize(text)))
