"""Every message on the bus, as versioned pydantic models.

Readers ignore unknown fields, so a producer can be upgraded before its consumers. ``v`` is
the schema version of the message; bump it when a field changes meaning.
"""

from __future__ import annotations

import re
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasPath,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
)

SCHEMA_VERSION = 1

# Conversation ids become part of Redis key names (inside a ``{...}`` hash tag) and of URL
# paths, so one rule holds everywhere an id enters: no braces, slashes, blanks or controls,
# and not "." or ".." (a URL path cannot carry them: clients resolve them as dot segments).
CONVERSATION_ID_PATTERN = r"^[A-Za-z0-9:_.@+-]{1,128}$"
DOT_SEGMENTS = (".", "..")
_CONVERSATION_ID = re.compile(CONVERSATION_ID_PATTERN)


def _not_a_dot_segment(value: str) -> str:
    if value in DOT_SEGMENTS:
        raise ValueError("a conversation id cannot be . or ..")
    return value


ConversationId = Annotated[
    str,
    Field(
        pattern=CONVERSATION_ID_PATTERN,
        description="1 to 128 of A-Z a-z 0-9 and : _ . @ + - (not . or ..)",
    ),
    AfterValidator(_not_a_dot_segment),
]

# Message times before this are refused: no real message is that old, and the turn machinery
# stores epoch milliseconds as unsigned numbers.
EARLIEST_SENT_AT = datetime(2000, 1, 1, tzinfo=UTC)


def is_conversation_id(value: str) -> bool:
    return _CONVERSATION_ID.fullmatch(value) is not None and value not in DOT_SEGMENTS


def sent_at_problem(sent_at: datetime, now: datetime, max_future_days: int) -> str | None:
    """Why an (aware) message time cannot be used, or None when it can. The business clock of
    a turn is its latest message's time, and date arithmetic on it (the 24-hour window, slot
    dates) must not overflow: times before ``EARLIEST_SENT_AT`` or more than
    ``max_future_days`` ahead of ``now`` are refused where a message enters."""
    if sent_at < EARLIEST_SENT_AT:
        return f"sent_at must not be before {EARLIEST_SENT_AT.date().isoformat()}"
    if sent_at - now > timedelta(days=max_future_days):
        return f"sent_at must not be more than {max_future_days} days ahead"
    return None


def new_id() -> str:
    return uuid.uuid4().hex


def utcnow() -> datetime:
    """Wall-clock time, for machinery only (leases, deadlines, created_at); never business."""
    return datetime.now(UTC)


def now_ms() -> int:
    """Wall-clock epoch milliseconds, for machinery scores (pending starts, merge deadlines)."""
    return int(time.time() * 1000)


class Contract(BaseModel):
    model_config = ConfigDict(extra="ignore")

    v: int = SCHEMA_VERSION


class SliceView(BaseModel):
    """The public part of a slice another service owns: what others may read of it."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ModeView(SliceView):
    """The ``mode`` slice (mode_router's) as other services read it."""

    mode: str
    pending_transition: str | None = None
    last_decision: str | None = None
    # The turn (or event) of the last decision.
    last_turn_id: str | None = None


class TriageView(SliceView):
    """The ``triage`` slice (triage's) as other services read it."""

    # The intents of the conversation's latest turn (staff's summary line shows them).
    last_intents: list[str] = Field(default_factory=list)


class FlowView(SliceView):
    """What triage reads of any specialist's multi-turn flow (the pack's ``active_contexts``
    name the slices): its stage, and whether it waits for a yes or for a new date.

    Read from the owner's names through validation aliases (see ``TrialView``)."""

    model_config = ConfigDict(extra="ignore", frozen=True, validate_by_name=True)

    stage: str | None = None
    # The tool (cancel_booking, reschedule_booking...) waiting for the person's yes.
    confirming: str | None = Field(default=None, validation_alias=AliasPath("pending_tool", "tool"))
    # The person asked to move the class and has not given the new date yet.
    rescheduling: bool = False
    # After a booking, the next person of a group was offered: a yes books them.
    offering_next: bool = Field(default=False, validation_alias="next_person")

    @field_validator("offering_next", mode="before")
    @classmethod
    def _offered(cls, value: object) -> bool:
        return bool(value)


class TrialView(FlowView):
    """The ``trial`` slice (the trial specialist's) as other services read it.

    Public names may differ from the owner's: a field is read from its owner's name through its
    validation alias, so the owner can rename a private field by changing one alias here (and
    ``tests/unit/test_slice_views.py`` fails until it does).
    """

    # Stages: collect_client_info, ask_date, awaiting_confirmation, booked, handoff_requested,
    # cancelled.
    # What the last reply asked the person for (nome, idade, nivel, date, time, confirmation).
    awaiting_field: str | None = Field(default=None, validation_alias="asked")
    nome: str | None = None
    idade: int | None = None
    nivel: str | None = None
    desired_date: str | None = None
    desired_time: str | None = None
    booking_id: str | None = None
    # Who writes, when the student (nome) is someone else.
    contact_name: str | None = None


class FactView(SliceView):
    """One fact of the conversation's memory and where it came from."""

    value: str | int | bool
    turn_id: str
    message_id: str
    at: AwareDatetime
    # The words of the message it came from (shortened).
    said: str
    # The value it replaced, when the person corrected it.
    previous: str | int | bool | None = None


class HeardView(SliceView):
    """A customer message the memory kept (the latest few), with its turn and time."""

    turn_id: str
    message_id: str
    at: AwareDatetime
    text: str


class MemoryView(SliceView):
    """The ``memory`` slice (triage's) as other services read it: the latest fact per field
    (nome, idade, nivel, contact_name, for_someone_else, desired_date, desired_time), read from
    every customer message of the conversation, whichever service answered it."""

    facts: dict[str, FactView] = Field(default_factory=dict)
    # The last customer messages, oldest first (a flow reads its own slots in them).
    heard: list[HeardView] = Field(default_factory=list)

    def heard_before(self, turn_id: str) -> list[str]:
        """The kept customer messages of the turns before ``turn_id``, oldest first."""
        return [said.text for said in self.heard if said.turn_id != turn_id]

    def value(self, name: str) -> str | int | bool | None:
        fact = self.facts.get(name)
        return fact.value if fact is not None else None


class MetaView(SliceView):
    """The ``meta`` slice (the gateway's) as other services read it."""

    channel: str | None = None
    contact: str | None = None
    contact_name: str | None = None
    # When the channel stops taking free-form messages from the business (WhatsApp: 24 hours
    # after the customer's last message); None: the channel has no such window.
    window_expires_at: AwareDatetime | None = None
    # The first message's origin (``inbound``, ``campaign:<id>``) and the click-to-WhatsApp ad
    # it came from (``ctwa_clid``, ``source_id``, ``headline``...), if any.
    origin: str | None = None
    referral: dict[str, Any] | None = None

    def window_closed(self, now: datetime) -> bool:
        """Whether a message at ``now`` must go as a template (the window has passed)."""
        return self.window_expires_at is not None and self.window_expires_at <= now


class InboundMessage(Contract):
    """One message from a person, as a channel adapter understood it."""

    channel: str
    conversation_id: ConversationId
    message_id: str
    text: str
    kind: str = "text"
    sent_at: AwareDatetime
    received_at: AwareDatetime
    contact: str | None = None
    origin: str = "inbound"
    campaign_mode: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Turn(Contract):
    """Everything the conversation said since the last reply: one correlation id."""

    turn_id: str
    conversation_id: str
    channel: str
    seq: int
    messages: list[InboundMessage]
    text: str
    now: AwareDatetime
    previous_message_at: AwareDatetime | None = None
    # The conversation's state hash as the turn started (slice name -> its JSON), read by the
    # script that started it: the turn's first handlers decide on it instead of reading the
    # hash again (their commits still compare versions). In a specialist's task: the state as
    # triage's commit left it (``TurnDecision.complete``). None: not sent along (the merger's
    # record of the turn; the turn a handler is given: ``on_turns`` and ``on_tasks`` take it
    # off; a gateway that did not send it).
    state: dict[str, str] | None = None

    @property
    def contact(self) -> str | None:
        return self.messages[-1].contact if self.messages else None

    @property
    def first(self) -> InboundMessage:
        return self.messages[0]


class SpecialistTask(Contract):
    """Triage asks one specialist to handle a turn."""

    turn: Turn
    route: str
    intents: list[str]
    text: str
    forced_by_clarification: bool = False


def stateless(message: object) -> Turn | SpecialistTask | None:
    """``message`` without the state it carries (a turn's or a task's), None when it carries
    none: what a stream keeps of a message this process takes on write (``shared.bus``). The
    taker runs the message with its state; a reader of the stream's copy (another process, a
    redelivery) reads the state itself, as for a message that never carried one."""
    if isinstance(message, Turn) and message.state is not None:
        return message.model_copy(update={"state": None})
    if isinstance(message, SpecialistTask) and message.turn.state is not None:
        return message.model_copy(update={"turn": message.turn.model_copy(update={"state": None})})
    return None


class Part(Contract):
    """One service's contribution to a turn's reply."""

    kind: Literal["part"] = "part"
    turn_id: str
    conversation_id: str
    source: str
    text: str | None = None
    asks_question: bool = False
    data: dict[str, Any] = Field(default_factory=dict)
    # The journal entries of the commit that added it (one Redis): written with the turn's
    # reply (``shared.merge.Merged.carried``) rather than one append per handler.
    journal: list[str] = Field(default_factory=list)


class TurnPlan(Contract):
    """Triage tells the merger which parts to wait for, plus its own inline parts."""

    kind: Literal["plan"] = "plan"
    turn_id: str
    conversation_id: str
    expected: list[str]
    parts: list[Part] = Field(default_factory=list)
    journal: list[str] = Field(default_factory=list)  # as a Part's


class MergeReady(Contract):
    """A producer's commit added the input that completed the turn to its merge hash (one
    Redis: ``shared/lua.py`` ``COMMIT``), and sends the turn on the outbound stream, where the
    gateway composes its reply (``shared.merge.reply_of``). ``fields``: the merge hash as that
    commit read it (the turn, its plan and parts), so nobody reads it again. Published by the
    commit script, which fills them in. (Before the gateway composed, the script sent it to
    the merger, which still takes one that a producer of that version sends it.)"""

    kind: Literal["ready"] = "ready"
    turn_id: str
    conversation_id: str
    fields: dict[str, str]


MergeInput = Annotated[Part | TurnPlan | MergeReady, Field(discriminator="kind")]


class Reply(Contract):
    """The composed answer to one turn, ready for the channel."""

    turn_id: str
    conversation_id: str
    channel: str
    to: str | None = None
    text: str
    bubbles: list[str]
    partial: bool = False
    created_at: AwareDatetime = Field(default_factory=utcnow)
    # Who wrote it: the bot (the reply to a turn) or a staff member (an agent message, which
    # answers no turn and releases no lease).
    author: Literal["bot", "agent"] = "bot"
    agent: str | None = None
    # An agent message outside WhatsApp's 24-hour window goes out as the pack's template.
    template: bool = False
    # A scheduled message (reminder, follow-up): a turn of its own that holds no lease.
    scheduled: bool = False
    # Its approved WhatsApp template (and body parameters), sent instead of the text when the
    # 24-hour window is closed; None: the pack's re-engagement template.
    template_name: str | None = None
    template_params: list[str] = Field(default_factory=list)


def _outbound_kind(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return "ready" if kind == "ready" else "reply"


# What the outbound stream carries: a composed reply, or (one Redis) a turn a producer's commit
# completed, which the gateway composes.
Outbound = Annotated[
    Annotated[Reply, Tag("reply")] | Annotated[MergeReady, Tag("ready")],
    Discriminator(_outbound_kind),
]


class DomainEvent(Contract):
    """Something that happened in the business (trial.booked, handoff.requested...)."""

    event_id: str = Field(default_factory=new_id)
    type: str
    conversation_id: str
    turn_id: str | None = None
    at: AwareDatetime
    data: dict[str, Any] = Field(default_factory=dict)


FunnelStepName = Literal["started", "plan_interest", "trial_asked"]


class FunnelStep(Contract):
    """A funnel step a turn showed (``started``, ``plan_interest``, ``trial_asked``), found by
    triage the first time the conversation shows it and counted once per conversation: by
    triage's own commit on one Redis, else by the scheduler (``services/scheduler/funnel.py``).
    ``source``: the conversation's attribution (``shared.attribution.source_of``) as triage read
    it; a step without one is attributed by the scheduler from the meta slice."""

    conversation_id: str
    step: FunnelStepName
    at: AwareDatetime
    source: str | None = None


class BookingCommand(Contract):
    """Staff ask the trial service to change a booking it owns (the gateway only relays).

    ``command_id`` makes it idempotent: a redelivered command changes nothing twice.
    """

    command_id: str = Field(default_factory=new_id)
    action: Literal["attendance", "cancel"]
    booking_id: str
    status: Literal["attended", "no_show"] | None = None
    reason: str = ""
    by: str = "staff"
    at: AwareDatetime = Field(default_factory=utcnow)


class Unanswered(Contract):
    """A question the knowledge base could not answer, for the business to add."""

    question: str
    conversation_id: str
    turn_id: str
    at: AwareDatetime


class DeadLetter(Contract):
    """A message a handler failed on too many times, kept for an operator."""

    stream: str
    group: str
    message_id: str
    attempts: int
    error: str
    payload: str
    at: AwareDatetime = Field(default_factory=utcnow)
