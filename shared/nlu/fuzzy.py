"""Typos corrected against the pack's vocabulary ("esperimental" → "experimental").

Keyword rules only see the words they were written with, so a misspelt keyword loses its
intent. A ``Vocabulary`` holds the *targets* (the words of the pack's intent keywords and FAQ
questions; ``agend*`` is a stem) and the *known* words (targets, every word the pack writes, and
``shared.nlu.lexicon``). A token is corrected only when it is not a known word, has no digit,
starts with the same letter as the target, and is within a small edit distance of it
(Damerau–Levenshtein with adjacent swaps, via rapidfuzz): one edit for words of 6–8 letters,
two from 9 letters; when two targets are equally near, the token is left alone. Known
infinitives make their regular forms known ("perguntar" → "perguntou"). A short word alone is
never corrected: at that length a typo and another word (or a name) cannot be told apart. The
word after it can tell them: a short unknown word one edit from the first word of a two-word
target phrase whose second word follows it as written ("nuca joguei" → "nunca joguei") is
that word.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import OSA

from shared.nlu.lexicon import COMMON_WORDS
from shared.nlu.normalize import SLANG, normalize
from shared.pack import Pack

MIN_LENGTH = 6
LONG_LENGTH = 9
# The shortest word the word after it may correct (one edit): a two- or three-letter word is
# too often another word.
PAIRED_MIN_LENGTH = 4
# Regular verb endings: a known infinitive makes its common forms known too ("perguntar" →
# "perguntou"), so a verb form is not "corrected" into another one.
_INFLECTIONS = {
    "ar": ("o", "a", "as", "am", "amos", "ei", "ou", "aram", "ava", "avam", "ando", "ado", "ada",
           "e", "em", "aria"),
    "er": ("o", "e", "es", "em", "emos", "i", "eu", "eram", "ia", "iam", "endo", "ido", "ida",
           "a", "am", "eria"),
    "ir": ("o", "e", "es", "em", "imos", "i", "iu", "iram", "ia", "iam", "indo", "ido", "ida",
           "a", "am", "iria"),
}  # fmt: skip


def _with_inflections(words: Iterable[str]) -> set[str]:
    """``words`` with a known infinitive's common forms ("perguntar" → "perguntou"), so a verb
    form is not "corrected" into another one."""
    known = set(words)
    for word in list(known):
        endings = _INFLECTIONS.get(word[-2:]) if len(word) >= 5 else None
        if endings:
            known.update(word[:-2] + ending for ending in endings)
    return known


def _max_edits(length: int) -> int:
    return 0 if length < MIN_LENGTH else 1 if length < LONG_LENGTH else 2


class Vocabulary:
    """Targets to correct towards and the words that are never corrected."""

    def __init__(
        self,
        words: Iterable[str],
        stems: Iterable[str],
        known: Iterable[str],
        pairs: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.words = frozenset(w for w in words if w.isalpha())
        self.stems = frozenset(s for s in stems if s.isalpha())
        # Two-word targets (first word, second word or a stem ending in "*"), by the second.
        self._pairs: dict[str, list[str]] = {}
        for first, second in pairs:
            if first.isalpha() and len(first) < MIN_LENGTH:
                self._pairs.setdefault(second, []).append(first)
        self.known = frozenset(
            _with_inflections({*known, *self.words, *COMMON_WORDS, *SLANG.values()})
        )
        self._by_letter: dict[str, list[str]] = {}
        for word in self.words:
            self._by_letter.setdefault(word[0], []).append(word)

    @classmethod
    def from_phrases(cls, phrases: Iterable[str], known: Iterable[str] = ()) -> Vocabulary:
        """Targets from keyword phrases as packs write them (accents allowed, ``*`` a stem)."""
        words: set[str] = set()
        stems: set[str] = set()
        pairs: set[tuple[str, str]] = set()
        for phrase in phrases:
            normalized = normalize(phrase.rstrip("*"))
            if not normalized:
                continue
            *body, last = normalized.split()
            words.update(body)
            (stems if phrase.endswith("*") else words).add(last)
            written = [*body, last + "*" if phrase.endswith("*") else last]
            pairs.update(zip(body, written[1:], strict=True))
        return cls(words, stems, known, pairs)

    def is_known(self, token: str) -> bool:
        """A known word, a word of a stem, an infinitive of which a form is known ("cobrar"
        when the pack says "cobram", "deixar" for "deixa"), or the plural of a known word that
        is no target ("quintas" is no typo of "quantas"; "iniciantes" is still read as the
        target "iniciante")."""
        if token in self.known or any(token.startswith(stem) for stem in self.stems):
            return True
        for plural in ("s", "es"):
            singular = token.removesuffix(plural)
            if singular != token and singular in self.known and singular not in self.words:
                return True
        endings = _INFLECTIONS.get(token[-2:]) if len(token) >= 5 else None
        return endings is not None and any(token[:-2] + ending in self.known for ending in endings)

    def correct_token(self, token: str) -> str:
        """The target ``token`` is a typo of, or ``token`` itself."""
        limit = _max_edits(len(token))
        if limit == 0 or not token.isalpha() or self.is_known(token):
            return token
        found: dict[str, int] = {}
        for word in self._by_letter.get(token[0], ()):
            distance = OSA.distance(token, word, score_cutoff=limit)
            if distance <= limit:
                found[word] = distance
        for stem in self.stems:
            if stem[0] != token[0] or len(token) <= len(stem):
                continue
            # The typo is in the stem's letters: as many edits as a word of the stem's length
            # allows, at least one ("agnedar" → "agendar"), never the whole token's ("com" of
            # "compromisso" is two edits from "chov", not a typo of "chov*").
            stem_limit = min(limit, max(1, _max_edits(len(stem))))
            for cut in (len(stem) - 1, len(stem), len(stem) + 1):
                distance = OSA.distance(token[:cut], stem, score_cutoff=stem_limit)
                corrected = stem + token[cut:]
                if distance <= stem_limit and distance < found.get(corrected, limit + 1):
                    found[corrected] = distance
        if not found:
            return token
        best = min(found.values())
        nearest = [word for word, distance in found.items() if distance == best]
        # Two targets equally near: the typo cannot be told, so it is left as written.
        return nearest[0] if len(nearest) == 1 else token

    def correct_before(self, token: str, following: str) -> str:
        """The first word of a two-word target that short ``token`` is a typo of, read with
        the word ``following`` it; or ``token`` itself."""
        if (
            not PAIRED_MIN_LENGTH <= len(token) < MIN_LENGTH
            or not token.isalpha()
            or self.is_known(token)
        ):
            return token
        firsts = {
            first
            for second, candidates in self._pairs.items()
            if (following.startswith(second[:-1]) if second.endswith("*") else following == second)
            for first in candidates
            if first[0] == token[0] and OSA.distance(token, first, score_cutoff=1) <= 1
        }
        return firsts.pop() if len(firsts) == 1 else token

    def correct(self, normalized: str) -> str:
        """A normalized message with every typo replaced by its target."""
        tokens = [self.correct_token(token) for token in normalized.split()]
        if self._pairs and tokens:
            tokens = [
                self.correct_before(token, following) if following else token
                for token, following in zip(tokens, [*tokens[1:], ""], strict=True)
            ]
        return " ".join(tokens)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _keyword_phrases(triage: dict[str, Any]) -> Iterable[str]:
    for rules in (triage.get("intents") or {}).values():
        yield from (rules.get("keywords") or {}).keys()
    for kind in triage.get("general") or []:
        yield from kind.get("keywords") or []
    for option in (triage.get("clarification") or {}).get("options") or []:
        yield from option.get("words") or []


def _faq_phrases(faq: dict[str, Any]) -> Iterable[str]:
    for entry in faq.get("entries") or []:
        yield from entry.get("questions") or []
        yield from entry.get("keywords") or []


@lru_cache(maxsize=8)
def _cached(pack: Pack) -> Vocabulary:
    sections = pack.sections
    phrases = [*_keyword_phrases(sections.get("triage") or {})]
    phrases += _faq_phrases(sections.get("faq") or {})
    known = {word for text in _strings(sections) for word in normalize(text).split()}
    return Vocabulary.from_phrases(phrases, known)


def pack_vocabulary(pack: Pack) -> Vocabulary:
    """The vocabulary of a domain pack: intent keywords and FAQ questions as targets, every word
    the pack writes as known (built once per pack object)."""
    return _cached(pack)
