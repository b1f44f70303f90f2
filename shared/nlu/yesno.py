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

When no word decides, an emoji answers: 👍 ✅ 👌 🙌 ✔️ for yes, 👎 ❌ 🚫 🙅 for no, when it comes
before any word or when the message has nothing but fillers around it ("👍", "oi 👍").
"""

from __future__ import annotations

import re

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
)
_STRONG_NO = (
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
    "quero nao",
    "precisa nao",
    "nao precisa",
)
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

_YES_EMOJI = frozenset("👍👌🙌✅✔☑🆗🤝")
_NO_EMOJI = frozenset("👎❌🚫✖🙅⛔")

_CLAUSE_BREAK = re.compile(r"[,.;!?\n…]+|\s[-–—]\s")
_DOUBLES = re.compile(r"(.)\1+")
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


def _canonical(word: str) -> str:
    """Folds doubled letters ("simm", "naao", "okk") only when that yields a known word."""
    word = word.strip(_EDGE_MARKS)
    if word in _VOCABULARY:
        return word
    folded = _DOUBLES.sub(r"\1", word)
    return folded if folded in _VOCABULARY else word


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


def _match(words: list[tuple[str, int]], at: int) -> tuple[bool | None, int]:
    """The answer of the phrase starting at ``at`` and the index right after it."""
    texts = [w for w, _ in words]
    for phrase, answer, strong in _PHRASES.get(texts[at], ()):
        end = at + len(phrase)
        if tuple(texts[at:end]) != phrase:
            continue
        if not answer and _followed_by_doubt(texts, end):
            return None, at
        if strong:
            return answer, end
        clause = words[at][1]
        rest = end
        while rest < len(words) and words[rest][1] == clause:
            echo = texts[rest] == ("sim" if answer else "nao")
            skipped = _is_filler(words, rest) or int(echo)
            if not skipped:
                return None, at
            rest += skipped
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
