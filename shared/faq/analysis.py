"""From a WhatsApp message to the terms the FAQ index matches on.

No maintained Portuguese stemmer is installed (bm25s takes one as a callable, PyStemmer is
not a dependency), so :func:`stem` is a deliberately light suffix stripper: it only has to make
"fica"/"ficam", "preço"/"precos", "levar"/"levo" meet, not to be linguistically right. The
stopword list is bm25s's Portuguese list plus the pack's own words, and its English and Spanish
lists for a tourist's function words (less any word the pack's own text uses).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from bm25s.stopwords import STOPWORDS_EN_PLUS, STOPWORDS_PORTUGUESE, STOPWORDS_SPANISH

from shared.nlu.normalize import normalize, strip_accents

# Plural endings, longest first: (suffix, replacement).
_PLURALS = (
    ("oes", "ao"),
    ("aes", "ao"),
    ("ais", "al"),
    ("eis", "el"),
    ("ois", "ol"),
    ("res", "r"),
    ("zes", "z"),
    ("s", ""),
)
_GERUNDS = ("ando", "endo", "indo")
_INFINITIVES = ("ar", "er", "ir")
_FINAL_VOWELS = ("a", "e", "o")
# normalize() keeps these inside words ("2x/semana", "06:00"); retrieval wants the parts.
_WORD_SPLIT = re.compile(r"[:/@+\-_]+")
# Sentence ends always separate questions; "." only when followed by a space or the end,
# so "R$ 2.50" or "06.00" stay whole. A ":" before a space ends a lead-in ("duas dúvidas:"),
# while "06:00" stays whole.
_SENTENCE_END = re.compile(r"(\?+|[!;\n]+|[.:](?=\s|$))")
# A letter typed more than once ("ahh", "eee"): squeezed, an interjection meets its stopword.
_DOUBLED = re.compile(r"(.)\1+")
_JOINERS = re.compile(r"(,|\s+(?:e|ou|tambem|também)\s+)", re.IGNORECASE)


def _depluralize(word: str) -> str:
    if word.endswith(("ss", "us")):
        return word
    if word.endswith("ns") and len(word) > 4 and word[-3] in "aeiou":
        return word[:-2] + "m"
    for suffix, replacement in _PLURALS:
        if word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    return word


def stem(word: str) -> str:
    """A light Portuguese stem of a normalized (unaccented, lower) word."""
    if len(word) <= 3 or not word.isalpha():
        return word
    word = _depluralize(word)
    if len(word) > 5 and word.endswith(_GERUNDS):
        word = word[:-3]
    elif len(word) > 4 and word.endswith(("am", "em")):
        word = word[:-1]
    elif len(word) > 4 and word.endswith(_INFINITIVES):
        word = word[:-2]
    if len(word) > 3 and word.endswith(_FINAL_VOWELS):
        word = word[:-1]
    return word


@dataclass(frozen=True)
class Clause:
    """One question inside a message, as typed, and whether it is shaped like a question."""

    text: str
    question_shaped: bool
    # Closed by a "?" of its own (not only shaped like a question by its first word).
    asked: bool = False


class Analyzer:
    """Normalization, filler removal and stopwords for one pack, built once."""

    def __init__(
        self,
        *,
        extra_stopwords: list[str],
        kept_words: Sequence[str] = (),
        filler_phrases: list[str],
        question_words: list[str],
        synonyms: dict[str, str],
        own_words: Collection[str] = (),
    ) -> None:
        library = {strip_accents(w.casefold()) for w in STOPWORDS_PORTUGUESE}
        # A tourist's function words ("are you", "los", "una") say nothing about the topic,
        # unless the pack's own text uses the word ("antes", "nada" are Portuguese too).
        foreign = {strip_accents(w.casefold()) for w in (*STOPWORDS_EN_PLUS, *STOPWORDS_SPANISH)}
        library |= foreign - set(own_words)
        kept = {normalize(w) for w in kept_words}
        self.stopwords = frozenset((library | {normalize(w) for w in extra_stopwords}) - kept)
        # Longest first so "boa tarde" goes before "boa".
        fillers = sorted({normalize(p) for p in filler_phrases if normalize(p)}, key=len)
        self._fillers = [re.compile(rf"(?<!\S){re.escape(p)}(?!\S)") for p in reversed(fillers)]
        self.question_words = frozenset(normalize(w) for w in question_words)
        mapped = {normalize(k): normalize(v) for k, v in synonyms.items()}
        self._synonyms = {k: v for k, v in mapped.items() if " " not in k}
        # A phrase that means one word the base uses ("quantos anos" asks an age), longest first.
        phrases = sorted((k for k in mapped if " " in k), key=len, reverse=True)
        self._phrases = [(re.compile(rf"(?<!\S){re.escape(k)}(?!\S)"), mapped[k]) for k in phrases]

    def words(self, text: str) -> list[str]:
        """Content words of ``text``: normalized, fillers and stopwords removed, synonyms
        mapped, unstemmed."""
        normalized = normalize(text)
        for phrase, word in self._phrases:
            normalized = phrase.sub(word, normalized)
        for filler in self._fillers:
            normalized = filler.sub(" ", normalized)
        parts = (p for w in normalized.split() for p in _WORD_SPLIT.split(w))
        return [
            self._synonyms.get(p, p)
            for p in parts
            if p and not self._is_stopword(p) and (len(p) > 1 or p.isdigit())
        ]

    def _is_stopword(self, word: str) -> bool:
        """A stopword, also typed with a letter doubled ("ahh", "entaoo")."""
        return word in self.stopwords or _DOUBLED.sub(r"\1", word) in self.stopwords

    def clauses(self, text: str) -> list[Clause]:
        """Split a message into its questions.

        Sentence punctuation always splits. A comma or "e"/"ou"/"também" splits only when
        both sides start with a question word: "onde fica e quanto custa?" is two questions,
        while "preciso levar raquete e bolinha?" and "aula experimental, quanto custa?" (a
        topic, then the question about it) stay one.
        """
        clauses: list[Clause] = []
        pieces = _SENTENCE_END.split(text)
        for sentence, end in zip(pieces[::2], [*pieces[1::2], ""], strict=True):
            asked = end.startswith("?")
            parts = _JOINERS.split(sentence)
            current = parts[0]
            for joiner, piece in zip(parts[1::2], parts[2::2], strict=True):
                if self._starts_as_question(current) and self._starts_as_question(piece):
                    clauses.append(self._clause(current, asked=False))
                    current = piece
                else:
                    current = current + joiner + piece
            if current.strip():
                clauses.append(self._clause(current, asked=asked))
        return clauses

    def pieces(self, text: str) -> list[str]:
        """``text`` cut at every comma and "e"/"ou"/"também": the parts of a list of topics
        such as "endereço e preço?", tried when one entry does not explain the whole clause."""
        return [p.strip() for p in _JOINERS.split(text)[::2] if p.strip()]

    def question_shaped(self, text: str) -> bool:
        """Whether a piece of text starts with a question word or ends with "?"."""
        return text.rstrip().endswith("?") or self._starts_as_question(text)

    def _starts_as_question(self, text: str) -> bool:
        first = normalize(text).split()[:1]
        return bool(first) and first[0] in self.question_words

    def _clause(self, text: str, *, asked: bool) -> Clause:
        return Clause(
            text=text.strip(),
            question_shaped=asked or self._starts_as_question(text),
            asked=asked,
        )
