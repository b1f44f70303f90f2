"""Layer 1, the intent detector: what the person signals. It never decides the mode.

Keyword rules come from the pack in the seed's priority order (most specific first: recusa,
pronto_fechar, objecao, interesse, duvida, voltando); the first rule with a matching pattern
wins, with the rule's confidence and the seed's evidence string ``"<label>: '<match>'"``. No LLM
in V1, as the seed asks.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from services.mode_router.config import ModesConfig, TextForm
from services.mode_router.types import DetectedIntent
from shared.nlu.normalize import normalize


class IntentResult(BaseModel):
    """The detected intent, how sure the rule is, and what in the text showed it."""

    model_config = ConfigDict(frozen=True)

    intent: DetectedIntent
    confidence: float
    evidence: str


def match_form(text: str, form: TextForm) -> str:
    """The form of ``text`` that a pack's patterns are written against."""
    return normalize(text) if form == "normalized" else text.lower()


def first_match(text: str, patterns: list[re.Pattern[str]]) -> str | None:
    """The text matched by the first pattern that matches (the seed's ``_check_keywords``)."""
    for pattern in patterns:
        found = pattern.search(text)
        if found:
            return found.group()
    return None


def contains_phrase(text: str, phrase: str, form: TextForm) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words, both in the pack's match form."""
    wanted = match_form(phrase, form).strip()
    if not wanted:
        return False
    return re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", match_form(text, form)) is not None


class IntentDetector:
    """Detects the person's intent in one message with the pack's keyword rules."""

    def __init__(self, config: ModesConfig) -> None:
        self.config = config

    def detect(self, mensagem: str) -> IntentResult:
        """The intent of ``mensagem``; an empty message is neutral with confidence 0."""
        if not mensagem or not mensagem.strip():
            empty = self.config.empty
            return IntentResult(
                intent=DetectedIntent.NEUTRO,
                confidence=empty.confidence,
                evidence=empty.evidence,
            )
        text = match_form(mensagem, self.config.text_form)
        for rule in self.config.intents:
            matched = first_match(text, rule.patterns)
            if matched is not None:
                return IntentResult(
                    intent=rule.intent,
                    confidence=rule.confidence,
                    evidence=f"{rule.label}: '{matched}'",
                )
        neutral = self.config.neutral
        return IntentResult(
            intent=DetectedIntent.NEUTRO,
            confidence=neutral.confidence,
            evidence=neutral.evidence,
        )
