"""Triage's data: the classification, the ``triage`` state slice, and the turn decision."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, Field, create_model

from shared.contracts import FunnelStepName

# The pack's specialist intents, or "general" (small talk).
Intent = str
Source = Literal["rules", "llm"]


class LLMTriage(BaseModel):
    """What the LLM is asked to fill (the seed's schema, plus handoff).

    ``general`` comes alone; ``general_response`` is a short friendly reply, only with general.
    An empty ``intents`` list means the message cannot be placed without asking the person.
    """

    intents: list[Intent]
    general_response: str | None = None


def llm_triage_model(intents: Iterable[str]) -> type[LLMTriage]:
    """The schema the LLM fills for a pack: its intents and ``general``, no other name (an
    answer naming another is a schema error, and the rules decide)."""
    names = tuple(dict.fromkeys([*intents, "general"]))
    allowed: Any = Literal[names]
    return create_model("LLMTriage", __base__=LLMTriage, intents=(list[allowed], ...))


class TriageResult(LLMTriage):
    """A classification, from the rules or from the LLM, with per-intent confidences."""

    confidences: dict[str, float] = Field(default_factory=dict)
    source: Source = "rules"
    # Why nothing was placed (empty intents), or that a question was placed by its shape
    # alone ("asked_outright": the FAQ, which may not know it), for the decision journal and
    # the hybrid mode's LLM.
    reason: Literal["long_without_action", "no_evidence", "asked_outright"] | None = None


class PendingClarification(BaseModel):
    """An N1 menu or N2 question the person has not answered yet."""

    stage: Literal["awaiting_context", "awaiting_confirmation"]
    original_message: str
    chosen_option: str | None = None
    # How many times the menu has been shown for this clarification.
    menus_shown: int = 1
    # Business times (Turn.now): when the clarification started and when we last asked;
    # expiry counts from the last question so a slow but engaged person is not cut off.
    created_at: AwareDatetime
    asked_at: AwareDatetime


class LastMove(BaseModel):
    """What the bot's last reply offered, with its business time (``services.triage.acts``)."""

    kind: Literal["offer"] = "offer"
    # The intent the offer starts when accepted.
    intent: str
    at: AwareDatetime


class TriageState(BaseModel):
    """The ``triage`` slice of conversation state (written only by triage)."""

    last_intents: list[str] = Field(default_factory=list)
    last_source: Source | None = None
    last_confidences: dict[str, float] = Field(default_factory=dict)
    pending: PendingClarification | None = None
    # The offer the last reply closed with, read first on the next turn.
    last_move: LastMove | None = None
    # Funnel steps already published for the conversation (each is counted once anyway).
    funnel: list[FunnelStepName] = Field(default_factory=list)


ClarificationStep = Literal[
    "n1_menu",
    "n1_invalid",
    "n1_cancelled",
    "n1_new_request",
    "n1_handoff",
    "n1_chosen",
    "n2_confirm",
    "n2_confirm_again",
    "n2_yes",
    "n2_no",
    "mode_yes",
    "mode_no",
    "n1_fields",
    "n2_fields",
    "offer_accepted",
    "offer_declined",
    "option_named",
    "booking_fields",
    "question_unplaced",
]


class TriageDecision(BaseModel):
    """Everything the triage service does with one turn.

    ``routes`` are the specialists to send tasks to (empty: triage answers inline); each gets
    ``text`` to process — the original message when a clarification forced the route.
    ``inline_text`` is triage's own part of the reply (general answer, menu, confirmation).
    """

    intents: list[str]
    routes: list[str]
    text: str
    forced_by_clarification: bool = False
    inline_text: str | None = None
    asks_question: bool = False
    # What a route is given instead of ``text`` (the FAQ gets only the clauses that ask).
    route_texts: dict[str, str] = Field(default_factory=dict)
    state: TriageState
    journal: dict[str, Any]
