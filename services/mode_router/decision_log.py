"""The black-box recorder: one structured record per mode decision.

The seed logged inside the router; here the core only builds the record (a pydantic model and
its JSON-ready dict) and the service writes it to the decision journal and the logs. It carries
the seed's fields (timestamp, conversa_id, current_mode, detected_intent, intent_confidence,
proposed_mode, validator_decision, transition_reason, capabilities_version) plus what makes a
timeline readable on its own: the turn, the intent's evidence, the trigger, the mode and pending
transition after the decision, and whether this turn bootstrapped the conversation.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from services.mode_router.intents import IntentResult
from services.mode_router.proposer import TransitionProposal
from services.mode_router.types import ConversationMode, UtcDatetime
from services.mode_router.validator import ValidationResult
from shared.capabilities import CapabilitiesConfig, get_capabilities_version


class ModeDecisionLog(BaseModel):
    """One decision of the mode router, as recorded in the journal."""

    model_config = ConfigDict(frozen=True)

    timestamp: UtcDatetime
    conversa_id: str
    turn_id: str | None
    current_mode: ConversationMode
    detected_intent: str
    intent_confidence: float
    intent_evidence: str
    proposed_mode: ConversationMode | None
    trigger: str
    validator_decision: str
    transition_reason: str
    final_mode: ConversationMode
    pending_transition: ConversationMode | None
    bootstrapped: bool
    capabilities_version: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the timestamp as ISO 8601, enums as their values."""
        return self.model_dump(mode="json")


def mode_decision_record(
    *,
    now: datetime,
    conversa_id: str,
    turn_id: str | None,
    intent: IntentResult,
    proposal: TransitionProposal,
    validation: ValidationResult,
    pending_transition: ConversationMode | None,
    bootstrapped: bool,
    capabilities: CapabilitiesConfig,
) -> ModeDecisionLog:
    """The record of one decision; ``now`` is the turn's business time."""
    return ModeDecisionLog(
        timestamp=now,
        conversa_id=conversa_id,
        turn_id=turn_id,
        current_mode=proposal.from_mode,
        detected_intent=intent.intent.value,
        intent_confidence=intent.confidence,
        intent_evidence=intent.evidence,
        proposed_mode=proposal.to_mode,
        trigger=proposal.trigger,
        validator_decision=validation.decision.value,
        transition_reason=validation.reason,
        final_mode=validation.final_mode,
        pending_transition=pending_transition,
        bootstrapped=bootstrapped,
        capabilities_version=get_capabilities_version(capabilities),
    )
