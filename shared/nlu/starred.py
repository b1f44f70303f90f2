"""A starred word corrects the word just typed: "pro Rafael" then "Rafaela*".

On WhatsApp a message that is only a word with an asterisk ("Rafaela*", "*quinta") fixes a
typo or a slip in the message before it. Read as a message of its own it is a bare word that
every rule would take for a new name or answer, and the slip stays. So, when a turn's messages
are joined, each starred message replaces the most similar word of the messages before it and
disappears. Similar: the same first letter and at least half of the longer word's letters in
common (rapidfuzz's normalized Indel similarity on the unaccented lower-case forms); when no
word is similar, the starred message stays as it was (without its asterisks). Pure.
"""

from __future__ import annotations

import re

from rapidfuzz.distance import Indel

from shared.nlu.normalize import strip_accents

_STARRED = re.compile(r"^\s*\*\s*(?P<a>[^\W\d_][\w'’-]*)\s*$|^\s*(?P<b>[^\W\d_][\w'’-]*)\s*\*\s*$")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
MIN_SIMILARITY = 0.5


def _key(word: str) -> str:
    return strip_accents(word.casefold())


def _similar(a: str, b: str) -> float:
    ka, kb = _key(a), _key(b)
    if ka[:1] != kb[:1] or ka == kb:
        return 0.0
    return Indel.normalized_similarity(ka, kb)


def with_starred_corrections(texts: list[str]) -> list[str]:
    """The messages with every starred correction applied to the ones before it."""
    out: list[str] = []
    for text in texts:
        match = _STARRED.match(text)
        if match is None or not out:
            out.append(text)
            continue
        fix = match["a"] or match["b"]
        best: tuple[float, int, re.Match[str]] | None = None
        for index, earlier in enumerate(out):
            for word in _WORD.finditer(earlier):
                score = _similar(word[0], fix)
                # Ties go to the latest word: the slip is usually the last thing typed.
                if score >= MIN_SIMILARITY and (best is None or score >= best[0]):
                    best = (score, index, word)
        if best is None:
            out.append(fix)
            continue
        _, index, word = best
        earlier = out[index]
        out[index] = earlier[: word.start()] + fix + earlier[word.end() :]
    return out
