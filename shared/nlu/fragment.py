"""Is a message only the start of what someone is about to say?

People on WhatsApp often type one thing in several messages, a second or a few apart: "oi",
"queria marcar a experimental", "sou a Ana", "32", "iniciante". Answering each piece alone asks
for what the next piece is about to say, so the gateway waits longer after a message that may go
on (a *fragment*) and only its short window after one that is done.

A message is done when it asks something: it has a question mark ("quanto custa?", "tem vaga
terça?"), unless it is only a greeting ("oi, tudo bem?"), which is the start of a talk, not its
subject. Everything else may go on: a greeting or opener, a request, a name, an age, a level, a
day, a "sim" — a statement is where people split what they say, a question is where they stop
and wait. A question typed without its question mark is answered after the longer wait, not
lost. Greetings and openers come from the pack: the triage's small-talk entries named in
``burst.general`` and the phrases of ``burst.openers``. The pack's ``burst.unfinished`` are
questions that do not yet say what they are about ("quanto custa", "qual o valor"): with no end
mark, the message after them is their subject, and the two are read as one sentence. Pure: no
I/O, the same answer for the same text and pack.
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
        """True when ``text`` asks nothing (no question mark) or is only greetings and openers.
        An empty text (a photo without caption) is not a fragment: nothing was typed."""
        if not text.strip():
            return False
        return not asks(text) or self.covers(text)

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


def asks(text: str) -> bool:
    """Whether ``text`` has a question mark (the Spanish opening one too)."""
    return "?" in text or "¿" in text


def _same(pattern: str, word: str) -> bool:
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1])
    return pattern == word


@cache
def fragments_of(pack: Pack) -> Fragments:
    """The compiled vocabulary of a (loaded, cached) pack."""
    return Fragments.from_pack(pack)


def is_fragment(text: str, pack: Pack) -> bool:
    """Whether ``text`` may be followed by more of the same thought (see the module doc)."""
    return fragments_of(pack).is_fragment(text)
