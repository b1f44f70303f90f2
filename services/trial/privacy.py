"""A customer asking for their data to be erased (LGPD): recognized by the pack's words,
answered with the pack's explanation and handed to staff (a handoff with reason ``privacy``).

The bot erases nothing itself: who asks through a chat is not proven to be the data's owner,
and erasure cannot be undone, so a person on staff checks and runs ``orquestra erase``.
The words live in the pack's ``privacy:`` section; triage's ``handoff`` intent has matching
patterns so such a message reaches the trial service whatever the stage.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from services.trial.models import ContextState, TrialOutcome, TrialState
from services.trial.replies import TextSource
from shared.nlu.normalize import normalize

REASON = "privacy"
_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    """Normalized words, punctuation dropped ("lgpd:" is "lgpd")."""
    return _WORD.findall(normalize(text))


class PrivacyConfig(BaseModel):
    """The pack's ``privacy:`` section (phrases compared after normalization)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # An erasure request is a verb ("apagar") followed, a few words later, by an object
    # ("meus dados"): "apaga todos os meus dados", "pode excluir meu cadastro?".
    verbs: list[str] = Field(min_length=1)
    objects: list[str] = Field(min_length=1)
    # Phrases that are a request on their own ("lgpd").
    phrases: list[str] = Field(default_factory=list)
    # Words allowed between the verb and the object.
    max_gap_words: int = Field(default=3, ge=0)
    text_key: str
    # The same, as normalized words: computed once, not for every message.
    _verbs: list[list[str]] = PrivateAttr(default_factory=list)
    _objects: list[list[str]] = PrivateAttr(default_factory=list)
    _phrases: list[list[str]] = PrivateAttr(default_factory=list)
    # What a request's first word is or begins with: a message with none of them (nearly
    # every message) asks for no erasure, found without looking for each phrase.
    _first_words: frozenset[str] = PrivateAttr(default=frozenset())
    _first_stems: tuple[str, ...] = PrivateAttr(default=())

    def model_post_init(self, _context: object) -> None:
        self._verbs = [_words(v) for v in self.verbs]
        self._objects = [_words(o) for o in self.objects]
        self._phrases = [_words(p) for p in self.phrases]
        self._first_words = frozenset(
            [p[0] for p in self._phrases if p] + [v[0] for v in self._verbs if len(v) > 1]
        )
        self._first_stems = tuple(v[0] for v in self._verbs if len(v) == 1)

    def may_ask(self, words: list[str]) -> bool:
        """Whether ``words`` hold a phrase's or a verb's first word (a one-word verb as the
        beginning of one): the condition of every request ``asks_erasure`` finds."""
        return not self._first_words.isdisjoint(words) or any(
            word.startswith(self._first_stems) for word in words
        )


def _starts(words: list[str], phrase: list[str], *, prefix: bool = False) -> list[int]:
    """Where ``phrase`` occurs in ``words``; with ``prefix`` its last word may be a prefix.
    (Asked for every phrase of the pack on every message: a position is looked at further only
    where the phrase's first word is.)"""
    n = len(phrase)
    if n > 1 or not prefix:
        first = phrase[0]
        candidates = [i for i, word in enumerate(words[: len(words) - n + 1]) if word == first]
    else:
        candidates = range(len(words))
    found = []
    for i in candidates:
        head, last = words[i : i + n - 1], words[i + n - 1]
        if head == phrase[:-1] and (last.startswith(phrase[-1]) if prefix else last == phrase[-1]):
            found.append(i)
    return found


def asks_erasure(text: str, config: PrivacyConfig) -> bool:
    """Whether the message asks for the person's data to be erased."""
    words = _words(text)
    return config.may_ask(words) and requested(words, config)


def requested(words: list[str], config: PrivacyConfig) -> bool:
    """Whether normalized ``words`` hold an erasure request: a phrase, or a verb followed by
    an object within ``max_gap_words``."""
    if any(_starts(words, phrase) for phrase in config._phrases):
        return True
    object_starts = {i for obj in config._objects for i in _starts(words, obj)}
    for verb_words in config._verbs:
        # A verb matches as a word prefix ("apag" covers apaga, apagar, apaguem).
        for i in _starts(words, verb_words, prefix=True):
            after = i + len(verb_words)
            if any(after <= j <= after + config.max_gap_words for j in object_starts):
                return True
    return False


def erasure_handoff(
    state: TrialState | None,
    context: ContextState | None,
    *,
    pack: TextSource,
    seed: str,
    config: PrivacyConfig,
) -> TrialOutcome:
    """The reply and the handoff for an erasure request; the booking flow is paused, not lost."""
    handed, event = (state or TrialState()).handed_off(REASON)
    return TrialOutcome(
        text=pack.text(config.text_key, seed=seed),
        asks_question=False,
        state=handed,
        context=context or ContextState(),
        events=[event],
        journal={"stage": "handoff_requested", "handoff": REASON},
    )
