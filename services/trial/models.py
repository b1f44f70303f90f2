"""State slices and values the trial specialist reads and writes.

``TrialState`` is the ``trial`` slice and ``ContextState`` the ``context`` slice of a
conversation: the trial service is the only writer of both. They are plain pydantic
models so the shell stores them as JSON and a replay rebuilds the same decisions.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from shared.nlu.bounds import TimeBound
from shared.nlu.dates import PartOfDay
from shared.trial.bookings import BookingView
from shared.trial.config import ToolName

# ``cancelled``: the conversation's booking was cancelled (by the person or by staff); nothing
# is asked until the person wants another one.
Stage = Literal[
    "collect_client_info",
    "ask_date",
    "awaiting_confirmation",
    "booked",
    "handoff_requested",
    "cancelled",
]
Nivel = Literal["iniciante", "intermediario", "avancado"]
# What the last reply asked the person for; failed answers are counted per asked field.
Asked = Literal["nome", "idade", "nivel", "date", "time", "confirmation"]

CLIENT_FIELDS: tuple[Asked, ...] = ("nome", "idade", "nivel")
# A domain event a decision emits: {"type": ..., "data": {...}}, published by the shell.
Event = dict[str, Any]


class _Slice(BaseModel):
    # Slices are read back from Redis: unknown fields (a newer writer) are ignored.
    model_config = ConfigDict(extra="ignore")


class PendingTool(BaseModel):
    """A sensitive tool call waiting for the person's yes (its args already resolved)."""

    tool: ToolName
    args: dict[str, Any]
    question: str
    asked_at: AwareDatetime


class PartyMember(BaseModel):
    """The next person of a group, offered once a booking is made: what is known of them."""

    nome: str | None = None
    idade: int | None = None
    nivel: Nivel | None = None


class BookedClass(BaseModel):
    """A booking this conversation made, by whom it is for (a group books one at a time, and
    "o Dario já está marcado?" asks about one of them)."""

    nome: str
    booking_id: str


class TrialState(_Slice):
    """The ``trial`` slice; defaults are the seed's ``ensure_trial_defaults``."""

    stage: Stage = "collect_client_info"
    nome: str | None = None
    idade: int | None = None
    nivel: Nivel | None = None
    desired_date: str | None = None  # YYYY-MM-DD, kept even when invalid (seed)
    desired_time: str | None = None  # HH:MM
    # The part of the day wished for while no hour is chosen ("terça à noite"): the hours
    # offered are that part's.
    desired_period: PartOfDay | None = None
    # The slot refused with a "não" at the confirmation: a correction that names only its time
    # ("o horário, às 20h") or only its day keeps the other half from it.
    declined_date: str | None = None
    declined_time: str | None = None
    booking_id: str | None = None
    booking_created: bool = False
    # Who writes, when the student is someone else (a parent booking for a child): nome and
    # idade stay the student's.
    contact_name: str | None = None
    for_someone_else: bool = False
    handoff_requested: bool = False
    # Why a person was asked for: "asked" (the person's request), "upset", "attempts" (the same
    # question twice with no usable answer; a yes/no then still answers the paused step).
    handoff_reason: str | None = None
    # Stage to go back to when the person writes again after a handoff.
    resume_stage: Stage | None = None
    # A booked person asked to move the class and has not given the new date yet.
    rescheduling: bool = False
    asked: Asked | None = None
    # The last reply only re-asked the pending step after a question (said once per run).
    reasked: bool = False
    # The person put the answer off ("vou ver e te falo"): a plain "ok" next is acknowledged.
    deferred: bool = False
    attempts: dict[str, int] = Field(default_factory=dict)
    pending_tool: PendingTool | None = None
    last_error: str | None = None
    output: str | None = None
    # Several people in one booking (booked one at a time): how many, and the names given;
    # noted once when heard, the next booking offered after this one is made.
    party_size: int | None = None
    party_names: list[str] = Field(default_factory=list)
    # The message that told of the group, read again for each person's age and level.
    party_text: str | None = None
    # After a booking: the next person of the group, offered (their class is not booked yet).
    next_person: PartyMember | None = None
    # Every booking this conversation made, by person.
    booked: list[BookedClass] = Field(default_factory=list)

    def missing_client_field(self) -> Asked | None:
        return next((f for f in CLIENT_FIELDS if getattr(self, f) is None), None)

    def booked_as(self, booking_id: str, date: str, time: str) -> TrialState:
        """The slice once its booking is known to the store (just made, or found again)."""
        return self.model_copy(
            update={
                "stage": "booked",
                "booking_id": booking_id,
                "booking_created": True,
                "desired_date": date,
                "desired_time": time,
            }
        )

    def without_booking(self) -> TrialState:
        """The slice once its booking is gone (cancelled by the person or by staff, or not
        found): back to the first step still missing, nothing pending."""
        return self.model_copy(
            update={
                "stage": "collect_client_info" if self.missing_client_field() else "ask_date",
                "booking_id": None,
                "booking_created": False,
                "desired_date": None,
                "desired_time": None,
                "desired_period": None,
                "rescheduling": False,
                "pending_tool": None,
            }
        )

    def cancelled(self) -> TrialState:
        """The slice once the person cancelled their booking: nothing booked, and the stage
        says so, so that "ficou cancelada?" is answered and no booking step is pending (the
        flow is idle, like when booked) until the person asks to book again."""
        return self.without_booking().model_copy(update={"stage": "cancelled", "asked": None})

    def reopened(self) -> TrialState:
        """A cancelled slice the person writes to again about booking: back to the first step
        still missing (their data kept)."""
        if self.stage != "cancelled":
            return self
        return self.model_copy(
            update={"stage": "collect_client_info" if self.missing_client_field() else "ask_date"}
        )

    def handed_off(self, reason: str, field: str | None = None) -> tuple[TrialState, Event]:
        """The slice once a person is asked for (the booking flow paused where it was, to
        resume there) and the ``handoff.requested`` event that asks."""
        resume = self.resume_stage if self.stage == "handoff_requested" else self.stage
        handed = self.model_copy(
            update={
                "stage": "handoff_requested",
                "handoff_requested": True,
                "handoff_reason": reason,
                "resume_stage": resume,
                "pending_tool": None,
                "rescheduling": False,
            }
        )
        event: Event = {
            "type": "handoff.requested",
            "data": {"reason": reason, "field": field, "stage": self.stage},
        }
        return handed, event


class TrialExtraction(BaseModel):
    """What one message says about the trial (seed's structured-output model).

    The rules extractor and an LLM fill the same model; values are normalized when possible
    (date YYYY-MM-DD, time HH:MM) but only the validators decide whether they are valid.
    """

    nome: str | None = None
    idade: int | None = None
    nivel: Nivel | None = None
    desired_date: str | None = None
    desired_time: str | None = None
    desired_period: PartOfDay | None = None
    # A limit on the time ("e depois das 20h?", "antes das 18h tem?"): the classes offered
    # are those within it, and its hour is never ``desired_time``.
    time_bound: TimeBound | None = None
    confirmed: bool | None = None
    # The writer books for someone else ("pra minha filha Sofia"): nome/idade are the student's
    # and contact_name the writer's own name, when given.
    contact_name: str | None = None
    for_someone_else: bool | None = None

    def has_data(self) -> bool:
        """Whether the message carries a trial field or a limit on the time (a bare yes/no
        does not count)."""
        return any(
            value is not None
            for value in (
                self.nome,
                self.idade,
                self.nivel,
                self.desired_date,
                self.desired_time,
                self.time_bound,
            )
        )

    def mentions_slot(self) -> bool:
        return self.desired_date is not None or self.desired_time is not None


class ContextEntry(BaseModel):
    value: str
    set_at: AwareDatetime


class ContextState(_Slice):
    """The ``context`` slice: active ids of the conversation with their set-at business times."""

    entries: dict[str, ContextEntry] = Field(default_factory=dict)

    def fresh(self, key: str, now: datetime, ttl: timedelta) -> ContextEntry | None:
        """The entry when it is younger than ``ttl`` on business time, else None."""
        entry = self.entries.get(key)
        if entry is None or now - entry.set_at > ttl:
            return None
        return entry

    def with_value(self, key: str, value: str, now: datetime) -> ContextState:
        return ContextState(entries={**self.entries, key: ContextEntry(value=value, set_at=now)})

    def without(self, key: str) -> ContextState:
        return ContextState(entries={k: v for k, v in self.entries.items() if k != key})


class ToolCall(BaseModel):
    """A tool call with its arguments (resolved and validated once the gate approved it)."""

    tool: ToolName
    args: dict[str, Any] = Field(default_factory=dict)


ToolStatus = Literal[
    "created", "full", "found", "not_found", "rescheduled", "cancelled", "already_cancelled"
]


class ToolResult(BaseModel):
    """What the shell got from the booking store for an approved tool call."""

    status: ToolStatus
    booking: BookingView | None = None


class NlgRequest(BaseModel):
    """Everything an LLM needs to phrase this turn's reply, and what it must keep."""

    stage: Stage
    action: str
    error_code: str | None
    fallback: str
    # Substrings (dates, times, codes) a phrased reply must contain to be accepted.
    facts: list[str]
    messages: list[dict[str, str]]


class TrialOutcome(BaseModel):
    """The result of one trial turn: what to say, the new slices, what to publish and log."""

    text: str
    asks_question: bool
    state: TrialState
    context: ContextState
    # Domain events as {"type": ..., "data": {...}}; the shell wraps them in DomainEvent.
    events: list[dict[str, Any]] = Field(default_factory=list)
    journal: dict[str, Any] = Field(default_factory=dict)
    nlg: NlgRequest | None = None
