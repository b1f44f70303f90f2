"""The YAML conversation-scenario format, as pydantic models (pure: parsing only).

A scenario is a conversation written down: what the person says, when, and what must be true
after each message — the reply text, state slices, the intents triage saw and the events in the
decision journal. ``orquestra test`` runs it against a real system (``scenario_run``); this
module only says what a valid scenario is, so a typo in a file fails with a clear message
before anything is sent.

    name: Booking, one field per message
    start: 2026-02-05T10:00:00-03:00       # business clock of the first message
    steps:
      - say: quero agendar uma aula experimental
        expect:
          reply: qual .* seu nome            # regex, case- and accent-insensitive
          intents: [trial]                   # triage.last_intents, order ignored
          state: {trial.stage: collect_client_info}
          journal: [turn.started, {event: merge.complete, sources: [trial, mode_router]}]
      - say: João
        after: 2m                            # two minutes after the previous message
        expect: {reply: quantos anos}
      - say: [oi, queria saber, quanto custa?]
        gap: 1.5s                            # a burst typed 1.5 s apart (real waiting)

A file holds one scenario, or several under ``scenarios:``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

_DURATION = re.compile(
    r"^(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m(?!s))?\s*(?:(\d+(?:\.\d+)?)s)?\s*(?:(\d+)ms)?$"
)


_VARIABLE = re.compile(r"[A-Za-z_]\w*")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]\w*)\}")


def parse_duration(value: Any) -> timedelta:
    """``"2m"``, ``"1h30m"``, ``"45s"``, ``"1.5s"``, ``"2d"``, ``"250ms"`` or seconds."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return timedelta(seconds=value)
    if isinstance(value, str):
        match = _DURATION.match(value.strip())
        if match and any(match.groups()):
            days, hours, minutes, seconds, millis = (float(g or 0) for g in match.groups())
            return timedelta(
                days=days, hours=hours, minutes=minutes, seconds=seconds, milliseconds=millis
            )
    raise ValueError(f"not a duration: {value!r} (write e.g. 30s, 2m, 1h30m, 2d)")


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]

# The longest real pause between the messages of a burst: the runner waits it out.
MAX_GAP = timedelta(seconds=30)

# What a dialog is for: a trial class booked, questions answered, a request refused with the
# rule, a booking cancelled or moved, an enrollment request made for staff with what was asked.
Goal = Literal["booked", "answered", "refused", "cancelled", "rescheduled", "enrolled"]


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str | dict) else value


def _messages(value: Any) -> Any:
    """``say: 41`` is the message "41": YAML reads bare numbers as numbers."""
    items = value if isinstance(value, list) else [value]
    return [str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for v in items]


class _Strict(BaseModel):
    # A misspelt key ("expcet:") is an error, not a silently ignored expectation.
    model_config = ConfigDict(extra="forbid", frozen=True)


class Expect(_Strict):
    """What must hold once a step's messages were answered.

    ``reply``: regexes that must all be found in the reply (``reply_not``: none of them);
    matched case- and accent-insensitively. ``state``: dotted paths into the conversation
    (``trial.stage``, ``mode.mode``, ``triage.last_intents``) and their expected values (see
    ``scenario_check`` for the matchers). ``intents``: triage's intents, in any order.
    ``journal``: events of this step's turn(s) that must appear, by name or as a mapping of
    ``event`` plus fields; ``journal_not``: events that must not.
    """

    reply: Annotated[list[str], BeforeValidator(_as_list)] = Field(default_factory=list)
    reply_not: Annotated[list[str], BeforeValidator(_as_list)] = Field(default_factory=list)
    state: dict[str, Any] = Field(default_factory=dict)
    intents: list[str] | None = None
    journal: Annotated[list[str | dict[str, Any]], BeforeValidator(_as_list)] = Field(
        default_factory=list
    )
    journal_not: Annotated[list[str | dict[str, Any]], BeforeValidator(_as_list)] = Field(
        default_factory=list
    )

    @field_validator("reply", "reply_not")
    @classmethod
    def _valid_regexes(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regex {pattern!r}: {exc}") from exc
        return patterns

    @field_validator("journal", "journal_not")
    @classmethod
    def _events_named(cls, items: list[str | dict[str, Any]]) -> list[str | dict[str, Any]]:
        for item in items:
            if isinstance(item, dict) and not isinstance(item.get("event"), str):
                raise ValueError(f"a journal expectation needs an 'event' name: {item!r}")
        return items

    def is_empty(self) -> bool:
        return not (
            self.reply
            or self.reply_not
            or self.state
            or self.intents is not None
            or self.journal
            or self.journal_not
        )


class Step(_Strict):
    """One or more messages sent together (a burst becomes one turn), then expectations.

    Business time of the messages: ``sent_at`` when given, else the previous message's time
    plus ``after`` (default: no gap); the first message starts from the scenario's ``start``.
    """

    say: Annotated[list[str], BeforeValidator(_messages)] = Field(min_length=1)
    after: Duration = timedelta(0)
    # Real time between the messages of ``say`` (a person typing a burst): they are posted this
    # far apart on the wall clock, and their business times advance by as much.
    gap: Duration | None = None
    sent_at: datetime | None = None
    origin: str | None = None
    campaign_mode: str | None = None
    note: str | None = None
    expect: Expect = Field(default_factory=Expect)
    # Values to remember after this step: variable name → state path (e.g. the booking code);
    # later steps use them as ``{name}`` in ``say`` and in reply patterns.
    save: dict[str, str] = Field(default_factory=dict)

    @field_validator("save")
    @classmethod
    def _names(cls, save: dict[str, str]) -> dict[str, str]:
        for name in save:
            if not _VARIABLE.fullmatch(name):
                raise ValueError(f"variable names are letters, digits and _: {name!r}")
        return save

    @field_validator("gap")
    @classmethod
    def _short_gap(cls, gap: timedelta | None) -> timedelta | None:
        if gap is not None and not timedelta(0) < gap <= MAX_GAP:
            raise ValueError(f"a gap is more than 0 and at most {MAX_GAP.seconds}s (real waiting)")
        return gap

    @model_validator(mode="after")
    def _gap_needs_a_burst(self) -> Step:
        if self.gap is not None and len(self.say) < 2:
            raise ValueError("a gap separates the messages of a burst: say needs 2 or more")
        return self

    def message_offsets(self) -> list[timedelta]:
        """How long after the step's first message each of its messages is sent."""
        gap = self.gap or timedelta(0)
        return [gap * index for index in range(len(self.say))]

    @field_validator("say")
    @classmethod
    def _not_blank(cls, texts: list[str]) -> list[str]:
        if any(not isinstance(t, str) or not t.strip() for t in texts):
            raise ValueError("every message needs some text")
        return texts


class Scenario(_Strict):
    """A conversation from a fresh conversation id: its steps, in order.

    ``persona`` and ``goal`` describe a dialog of the evaluation corpus (``orquestra eval
    dialogs``): who is writing, and what the conversation is for. The runner ignores them.
    """

    name: str = Field(min_length=1)
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    persona: str | None = None
    goal: Goal | None = None
    # Business time of the first message; without it, the wall clock when the run starts.
    start: datetime | None = None
    # Defaults for every step (a step may override them).
    origin: str | None = None
    campaign_mode: str | None = None
    steps: list[Step] = Field(min_length=1)


class ScenarioFile(BaseModel):
    """The scenarios of one file, with where they came from."""

    model_config = ConfigDict(frozen=True)

    source: str
    scenarios: list[Scenario]


def parse_scenarios(text: str, source: str) -> ScenarioFile:
    """Read a file's YAML text. Raises ``ValueError`` (with the file name) when it is invalid."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"{source}: not valid YAML: {exc}") from exc
    if isinstance(data, dict) and "scenarios" in data:
        if set(data) != {"scenarios"} or not isinstance(data["scenarios"], list):
            raise ValueError(f"{source}: 'scenarios' must be the only key, holding a list")
        items = data["scenarios"]
    else:
        items = [data]
    scenarios = []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise ValueError(f"{source}: scenario {index} is not a mapping")
        try:
            scenarios.append(Scenario.model_validate(item))
        except ValueError as exc:
            raise ValueError(f"{source}: scenario {index}: {exc}") from exc
    return ScenarioFile(source=source, scenarios=scenarios)


def message_times(scenario: Scenario, start: datetime) -> list[datetime]:
    """The business time of each step's messages (all of a step's messages share it).

    ``start`` is used when the scenario gives none (the runner passes the wall clock).
    """
    clock = scenario.start or start
    times = []
    for step in scenario.steps:
        clock = step.sent_at if step.sent_at is not None else clock + step.after
        times.append(clock)
    return times


def substitute(text: str, variables: dict[str, str], *, escape: bool = False) -> str:
    """``{name}`` → its saved value (regex-escaped when ``escape``); other braces stay."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in variables:
            return match.group(0)
        return re.escape(variables[name]) if escape else variables[name]

    return _PLACEHOLDER.sub(value, text)


def _fill(value: Any, variables: dict[str, str], *, regex: bool = False) -> Any:
    """Saved values put into an expected value; escaped inside regexes (``match``)."""
    if isinstance(value, str):
        return substitute(value, variables, escape=regex)
    if isinstance(value, list):
        return [_fill(item, variables, regex=regex) for item in value]
    if isinstance(value, dict):
        return {k: _fill(v, variables, regex=regex or k == "match") for k, v in value.items()}
    return value


def with_variables(step: Step, variables: dict[str, str]) -> Step:
    """The step with saved values put into its messages and expectations."""
    if not variables:
        return step
    expect = step.expect
    filled = expect.model_copy(
        update={
            "reply": _fill(expect.reply, variables, regex=True),
            "reply_not": _fill(expect.reply_not, variables, regex=True),
            "state": _fill(expect.state, variables),
            "journal": _fill(expect.journal, variables),
            "journal_not": _fill(expect.journal_not, variables),
        }
    )
    say = [substitute(text, variables) for text in step.say]
    return step.model_copy(update={"say": say, "expect": filled})
