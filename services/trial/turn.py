"""What one trial turn decides from and what a branch of it decides.

``TrialTurn`` holds the turn's inputs and what was read off the message, fixed once by
``plan_turn``; ``Reply`` is what a branch (routing, before or after the booking, finishing with
the store's result) hands on to be concluded into a ``TrialOutcome``. They live apart from the
branches so that every branch module can take and return them without importing another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from services.trial.models import Asked, ContextState, ToolCall, TrialExtraction, TrialState
from services.trial.replies import TextSource
from services.trial.tool_gate import GateDecision
from services.trial.validators import SeatsTaken
from shared.trial.config import Action, TrialConfig


@dataclass(frozen=True)
class TrialTurn:
    """Everything one turn decides from (inputs, plus what was read off the message)."""

    text: str
    now: datetime
    now_local: datetime
    config: TrialConfig
    pack: TextSource
    seed: str
    seats: SeatsTaken
    allowed_tools: frozenset[str] | None
    mode: str | None
    conversation_id: str
    intents: tuple[str, ...]
    extraction: TrialExtraction
    action: Action | None
    code: str | None
    before: TrialState
    # The message asked something rather than answering (see ``flow._is_question``).
    question: bool
    # Triage sent the message to a service that answers questions too.
    answered_elsewhere: bool
    # A booking conversation had ended (stopped, refused, nothing to cancel): nothing is asked.
    idle: bool
    # The message shows an upset customer (``shared.nlu.upset``): a handoff says sorry first.
    upset: bool = False
    # The message complains of the service calmly (``shared.nlu.upset.complains``): the reply
    # says sorry before its question, and giving nothing is no failed answer.
    complaint: bool = False
    # The day (YYYY-MM-DD) the message says the person cannot make, with no other proposed
    # ("não vai dar terça": ``shared.nlu.refusal``): before a booking, the days after it.
    refused_day: str | None = None


@dataclass
class Reply:
    """What a branch decided: new slices, the reply (text key or rendered text) and the rest."""

    state: TrialState
    context: ContextState
    key: str | None = None
    text: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    asks: Asked | None = None
    error: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    gate: GateDecision | None = None
    tool: ToolCall | None = None
    handoff: str | None = None
    # Fields this message gave, said back before the next question ("Anotado: ...").
    noted: list[Asked] = field(default_factory=list)
    # Texts said after the reply (the guardian note after a minor's booking).
    after: list[str] = field(default_factory=list)
    # A text said before the reply's question: what is wrong with the day or time the message
    # gave while another field is asked ("a aula é às terças: ..."), filled from ``values``.
    aside: str | None = None
