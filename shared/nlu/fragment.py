"""Is a message only the start of what someone is about to say?

People on WhatsApp often send "oi", then "queria saber", then the question, a second or two
apart. Answering the first alone greets (or shows the clarification menu) while the question is
still being typed, so the gateway waits longer after such a *fragment* and only its short window
after a message that carries something to answer.

A fragment is a message made only of the pack's greetings and openers, plus emojis and
punctuation: every word is covered by one of those phrases. A question that does not yet say
what it is about ("quanto custa", "qual o valor") is a fragment too while it has no question
mark: "quanto custa" / "a aula experimental" is one question typed in two messages, while
"quanto custa?" is finished. Any other word (a request, a
question's subject, a name, an age, a date, "sim", a menu number) makes the message complete,
so the rule errs towards answering at once. The words come from the pack: the triage's
small-talk entries named in ``burst.general`` (the greetings) and the phrases of
``burst.openers``. Pure: no I/O, the same answer for the same text and pack.
"""

from __future__ import annotations

import re
from functools import cache

from pydantic import BaseModel, Field

from shared.nlu.normalize import normalize
from shared.pack import Pack

_DOUBLES = re.compile(r"([a-z])\1")
_KEPT_SYMBOLS = ":/@+-"


class BurstConfig(BaseModel):
    """The pack's ``burst`` section."""

    general: list[str] = Field(default_factory=list)
    openers: list[str] = Field(default_factory=list)
    # Questions that name no subject: fragments unless the message ends with "?".
    unfinished: list[str] = Field(default_factory=list)


class _General(BaseModel):
    name: str
    keywords: list[str] = Field(default_factory=list)


class _TriageWords(BaseModel):
    """The part of the triage section this module reads: its small-talk keywords."""

    general: list[_General] = Field(default_factory=list)


def _words(text: str) -> tuple[str, ...]:
    """Matching form of a phrase or message: normalized, doubled letters folded too ("oii"),
    the symbols normalizing keeps (":", "/"...) trimmed from word edges."""
    stripped = (w.strip(_KEPT_SYMBOLS) for w in _DOUBLES.sub(r"\1", normalize(text)).split())
    return tuple(w for w in stripped if w)


def _phrase(text: str) -> tuple[str, ...]:
    """A vocabulary phrase in matching form, keeping a word's trailing ``*`` (normalizing
    would drop it)."""
    words: list[str] = []
    for raw in text.split():
        folded = _words(raw.rstrip("*"))
        if folded and raw.endswith("*"):
            folded = (*folded[:-1], folded[-1] + "*")
        words.extend(folded)
    return tuple(words)


class Fragments:
    """The fragment vocabulary of one pack, compiled once: phrases as word tuples, longest
    first; a phrase word ending in ``*`` matches any word starting that way."""

    def __init__(self, phrases: list[str], unfinished: list[str] | None = None) -> None:
        self._unfinished = Fragments([*phrases, *unfinished]) if unfinished else None
        compiled = sorted({p for p in map(_phrase, phrases) if p}, key=len, reverse=True)
        # Candidates by first word, so a message is checked against a handful of phrases.
        self._by_first: dict[str, list[tuple[str, ...]]] = {}
        self._starred: list[tuple[str, ...]] = []
        for phrase in compiled:
            if phrase[0].endswith("*"):
                self._starred.append(phrase)
            else:
                self._by_first.setdefault(phrase[0], []).append(phrase)

    @classmethod
    def from_pack(cls, pack: Pack) -> Fragments:
        config = pack.section("burst", BurstConfig) if pack.has("burst") else BurstConfig()
        phrases = list(config.openers)
        if config.general and pack.has("triage"):
            triage = pack.section("triage", _TriageWords)
            for kind in triage.general:
                if kind.name in config.general:
                    phrases.extend(kind.keywords)
        return cls(phrases, config.unfinished)

    def is_fragment(self, text: str) -> bool:
        """True when ``text`` has words or symbols but says nothing beyond greetings and
        openers (or, with no question mark, a question that names no subject yet). An empty
        text (a photo without caption) is not a fragment."""
        if not text.strip():
            return False
        if self._unfinished is not None and not text.rstrip().endswith("?"):
            return self._unfinished.covers(text)
        return self.covers(text)

    def is_unfinished(self, text: str) -> bool:
        """A question that names no subject yet and has no end mark ("quanto custa"): the next
        message of the same burst is its subject, so the two are read as one sentence."""
        stripped = text.rstrip()
        return (
            self._unfinished is not None
            and bool(stripped)
            and not stripped.endswith(("?", ".", "!"))
            and not self.covers(text)
            and self._unfinished.covers(text)
        )

    def covers(self, text: str) -> bool:
        """Whether every word of ``text`` belongs to one of this vocabulary's phrases."""
        words = _words(text)
        i = 0
        while i < len(words):
            length = self._match(words, i)
            if length == 0:
                return False
            i += length
        return True

    def _match(self, words: tuple[str, ...], start: int) -> int:
        """Length of the longest phrase at ``start`` (0: none)."""
        candidates = self._by_first.get(words[start], []) + self._starred
        for phrase in sorted(candidates, key=len, reverse=True):
            end = start + len(phrase)
            if end <= len(words) and all(
                _same(pattern, word) for pattern, word in zip(phrase, words[start:end], strict=True)
            ):
                return len(phrase)
        return 0


def _same(pattern: str, word: str) -> bool:
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1])
    return pattern == word


@cache
def fragments_of(pack: Pack) -> Fragments:
    """The compiled vocabulary of a (loaded, cached) pack."""
    return Fragments.from_pack(pack)


def is_fragment(text: str, pack: Pack) -> bool:
    """Whether ``text`` is only a greeting/opener in ``pack``'s words (see the module doc)."""
    return fragments_of(pack).is_fragment(text)
