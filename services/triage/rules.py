"""Rules-mode classification: keyword and pattern scoring from the pack, plus active context.

The rules decide alone in ``rules`` mode and go first in ``hybrid`` mode, where
:func:`needs_llm` says when they are unsure enough to ask the LLM.
"""

from __future__ import annotations

import re
from typing import Any

from services.triage.config import TriageConfig
from services.triage.models import TriageResult
from shared.nlu.fuzzy import pack_vocabulary
from shared.nlu.normalize import normalize
from shared.nlu.yesno import yes_no
from shared.pack import Pack

# Clause boundaries: "Maria, 27. onde fica?" has an answer clause and a question clause.
_CLAUSE_BREAK = re.compile(r"[,.;!?\n…]+|\s[-–—+]\s")


def trial_context(trial: dict[str, Any] | None) -> str | None:
    """The trial's effective stage, as triage sees it, from the trial slice.

    A booked trial that waits for an answer — a cancel or reschedule confirmation, or the new
    date of a reschedule — is a conversation going on, so "sim" or "19h" must reach trial.
    """
    if not trial:
        return None
    if trial.get("pending_tool"):
        return "awaiting_tool_confirmation"
    if trial.get("rescheduling"):
        return "rescheduling"
    return trial.get("stage")


def mode_awaits_answer(mode: dict[str, Any] | None, turn_id: str) -> bool:
    """Whether the funnel's micro-confirmation was waiting for this turn's answer.

    mode_router handles the same turn in parallel: if it already decided this turn, its last
    decision tells whether a pending question was answered (confirm/cancel); if not yet, the
    slice still shows the question pending.
    """
    if not mode:
        return False
    if mode.get("last_turn_id") == turn_id:
        return mode.get("last_decision") in ("confirm", "cancel")
    return bool(mode.get("pending_transition"))


def active_stage(trial_stage: str | None, config: TriageConfig) -> str | None:
    """The trial stage when a booking conversation is going on, else None."""
    if trial_stage and trial_stage not in config.active_context.idle_stages:
        return trial_stage
    return None


def _is_small_talk(normalized: str, config: TriageConfig) -> bool:
    return any(kind.matches(normalized) for kind in config.general)


def _answers_active_flow(text: str, config: TriageConfig) -> bool:
    """Whether some part of the message reads as an answer to the booking flow.

    A leading yes/no counts ("sim, e onde fica?"), and so does any clause that is neither
    about another intent nor small talk ("Pedro, 29. quanto custa?" — "Pedro" and "29" are
    answers). A message that is only a question about something else has no such part, which
    keeps "onde fica a CT?" a pure faq even mid-booking.
    """
    if yes_no(text) is not None:
        return True
    others = [
        rules for name, rules in config.intents.items() if name != config.active_context.intent
    ]
    for clause in _CLAUSE_BREAK.split(text):
        normalized = normalize(clause)
        if not normalized or _is_small_talk(normalized, config):
            continue
        if not any(rules.hit(normalized) for rules in others):
            return True
    return False


def classify(
    text: str,
    *,
    trial_stage: str | None,
    config: TriageConfig,
    pack: Pack,
    seed: str = "",
) -> TriageResult:
    """Classify one message with the pack's rules.

    Specialist intents whose confidence reaches the threshold are detected together
    (multi-intent). Mid-booking, the booking flow also gets the message when part of it answers
    the flow, or when nothing else claims it. Otherwise a long message with no action word is
    left unplaced (N1 asks), small talk is ``general`` alone with its reply, and anything else
    is unplaced. Typos are corrected to the pack's vocabulary before scoring.
    """
    normalized = pack_vocabulary(pack).correct(normalize(text))
    confidences = {name: rules.score(normalized) for name, rules in config.intents.items()}
    intents: list[str] = [name for name, conf in confidences.items() if conf >= config.threshold]
    context_intent = config.active_context.intent

    if active_stage(trial_stage, config):
        if context_intent not in intents and (not intents or _answers_active_flow(text, config)):
            intents.insert(0, context_intent)
            confidences[context_intent] = 1.0
        return TriageResult(intents=intents, confidences=confidences)

    clarify = config.clarification
    too_long = len(text.strip()) > clarify.long_message_chars
    if clarify.enabled and too_long and not clarify.has_action(normalized):
        return TriageResult(intents=[], confidences=confidences, reason="long_without_action")
    if intents:
        return TriageResult(intents=intents, confidences=confidences)

    kind = next((k for k in config.general if k.matches(normalized)), None)
    if kind is not None or not normalized:
        key = kind.text_key if kind is not None else config.fallback_text_key
        return TriageResult(
            intents=["general"],
            general_response=pack.text(key, seed=seed),
            confidences={**confidences, "general": 1.0},
        )
    return TriageResult(intents=[], confidences=confidences, reason="no_evidence")


def needs_llm(rules_result: TriageResult, config: TriageConfig) -> bool:
    """Whether hybrid mode should ask the LLM: the rules placed nothing, or saw some evidence
    for an intent without enough to detect it (a second intent may be hiding)."""
    if rules_result.source == "llm":
        return False
    if not rules_result.intents:
        return True
    if rules_result.intents == ["general"]:
        return False
    return any(
        config.llm_floor <= conf < config.threshold
        for name, conf in rules_result.confidences.items()
        if name not in rules_result.intents
    )
