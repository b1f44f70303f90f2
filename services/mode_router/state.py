"""The ``mode`` state slice (written only by mode_router) and the result of one decision."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from services.mode_router.types import ConversationMode, UtcDatetime
from services.mode_router.validator import TransitionDecision


class ModeState(BaseModel):
    """Where a conversation stands in the funnel.

    ``updated_at``/``updated_reason`` say when and why the mode last changed (bootstrap
    included). ``last_transition_at`` is the last *transition* (APPLY or CONFIRM) and feeds the
    cooldown; the bootstrap is not a transition, so a person can show interest in the second
    message without waiting out a cooldown. ``pending_transition_at`` is when the
    micro-confirmation question was asked; the pending timeout counts from it.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    mode: ConversationMode
    source: str
    updated_at: UtcDatetime
    updated_reason: str
    pending_transition: ConversationMode | None = None
    pending_transition_at: UtcDatetime | None = None
    last_transition_at: UtcDatetime | None = None
    last_decision: TransitionDecision | None = None
    # The turn (or event) of the last decision: triage, deciding the same turn in parallel,
    # reads it to know whether this turn answered a pending micro-confirmation.
    last_turn_id: str | None = None


class ModeOutcome(BaseModel):
    """Everything one decision produces; the service persists and publishes it.

    ``question`` (and its ``confirmation_type``) is set only when this decision opened a
    pending transition: the micro-confirmation to add to the reply. A kept pending asks nothing
    again.
    """

    model_config = ConfigDict(frozen=True)

    state: ModeState
    record: dict[str, Any]
    question: str | None = None
    confirmation_type: str | None = None
