"""The trial specialist's pack section (``trial:`` in ``packs/<pack>/trial.yaml``).

Everything CT Smash decides about trial classes lives there — the class weekday and times, seats
per class, the age range, how many failed attempts lead to a person, the words that mean
"cancel" or "talk to someone", the tool gate's rules — so another business changes the YAML,
not this code. Texts people read are under the pack's ``texts:`` section (keys ``trial_...``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.nlu.slots import Level, LevelsByTime
from shared.pack import Pack
from shared.trial.calendar import BusinessCalendar

Action = Literal["handoff", "cancel", "reschedule", "status"]
ToolName = Literal["create_booking", "get_booking", "reschedule_booking", "cancel_booking"]


class _Section(BaseModel):
    # A typo in the pack must fail at load time, not silently fall back to a default.
    model_config = ConfigDict(extra="forbid", frozen=True)


class GateConfig(_Section):
    """Rules of the tool gate: where missing ids come from, defaults, what needs a yes first."""

    # Context entries older than this (on Turn.now) are treated as absent.
    context_ttl_minutes: int = Field(gt=0)
    # tool → {argument → context key} filled when the call leaves the argument empty.
    injections: dict[ToolName, dict[str, str]] = Field(default_factory=dict)
    # tool → {argument → value} applied when the argument is still empty after injection.
    defaults: dict[ToolName, dict[str, Any]] = Field(default_factory=dict)
    # tool → text key of the question asked before running it (sensitive tools).
    confirm_texts: dict[ToolName, str] = Field(default_factory=dict)
    # context key → text key said when the id is needed but the context has none.
    missing_context_texts: dict[str, str] = Field(default_factory=dict)
    not_allowed_text: str
    invalid_args_text: str

    @model_validator(mode="after")
    def _every_injected_key_has_a_refusal(self) -> GateConfig:
        keys = {key for rules in self.injections.values() for key in rules.values()}
        missing = keys - self.missing_context_texts.keys()
        if missing:
            raise ValueError(f"no missing_context_texts for context keys {sorted(missing)}")
        return self


class NlgConfig(_Section):
    """How the optional LLM phrasing is asked for; the deterministic text is always the fallback."""

    system_prompt: str
    max_chars: int = Field(default=600, gt=0)


class TrialConfig(_Section):
    """The ``trial:`` pack section."""

    # Day of the week of trial classes, Monday = 0 (CT Smash: Tuesday = 1).
    weekday: int = Field(ge=0, le=6)
    times: list[str] = Field(min_length=1)
    seats_per_slot: int = Field(gt=0)
    min_age: int = Field(gt=0)
    max_age: int = Field(gt=0)
    # Students younger than this are booked with the guardian note.
    adult_age: int = Field(gt=0)
    # Failed attempts at the same field before a person takes over.
    max_attempts: int = Field(gt=0)
    # How many class days ahead free times are looked up for suggestions.
    lookahead_weeks: int = Field(gt=0)
    # A yes/no question about a sensitive tool expires after this many minutes.
    confirmation_ttl_minutes: int = Field(gt=0)
    booking_id_prefix: str = Field(pattern=r"^[A-Z]{1,4}$")
    # What the customer said this long before a booking started is read for its client data.
    earlier_messages_minutes: int = Field(default=120, gt=0)
    # Context entry that remembers the conversation's booking (what the gate injects from).
    booking_context_key: str
    # Monday-first names used when showing dates ("terça, 10/02").
    weekday_names: list[str] = Field(min_length=7, max_length=7)
    # Joins the last item of a list ("07:00, 18:00 e 20:00").
    list_last_separator: str
    # Joins alternative days in a list of free times.
    options_separator: str
    # Phrases (matched on normalized text) that ask for an action, whatever the stage.
    keywords: dict[Action, list[str]]
    # A pattern per action (on normalized text) that asks for it in words the phrases do not
    # list ("não vou conseguir ir", "pode tirar meu nome?").
    action_patterns: dict[Action, str] = Field(default_factory=dict)
    # Triage intents that mean an action, for when triage already recognized it.
    intent_actions: dict[str, Action] = Field(default_factory=dict)
    # Triage intents that mean the message asks something (another service answers it): the
    # trial then re-asks its pending step in one line and does not count a failed answer.
    question_intents: list[str] = Field(default_factory=list)
    # A pattern (on normalized text) of a question about what an action costs ("remarcar tem
    # custo?"): a cancel or a reschedule it names is asked about, not asked for.
    terms_asked: str | None = None
    # A pattern (on normalized text) of a day or time pointed back to ("nesse horário", "no
    # mesmo dia"): the one said earlier in the conversation, even in a question.
    points_back: str | None = None
    # A pattern (on normalized text) of a person preferring not to give what is asked ("prefiro
    # não dizer"): not a no to the booking; the reply says why the field is asked.
    withheld: str | None = None
    # A pattern (on normalized text) of a person putting the answer off ("ainda não sei, vou ver
    # e te falo"): acknowledged, not asked again, and no failed answer.
    deferral: str | None = None
    # Patterns (on normalized text) of a request for the class times inside a booking message
    # ("quais os horários disponíveis?"): the reply then says them, whatever it asks next.
    times_asked: list[str] = Field(default_factory=list)
    # Patterns (on normalized text) of a booking asked as leave ("posso marcar pra uma amiga?",
    # "ela pode fazer a aula?"): a reply that goes on with the booking first says yes.
    leave_asked: list[str] = Field(default_factory=list)
    # Patterns (on normalized text) of a question asked without a question mark ("gostaria de
    # saber se..."): a leave asked that way is answered as one asked with "?".
    asked_indirectly: list[str] = Field(default_factory=list)
    # How each level is shown to people (stored without accents).
    level_names: dict[str, str]
    # The level of a time played ("jogo há 8 meses"): level → the months of play it starts
    # from. Empty: a time played tells no level, the level is asked.
    level_by_months_played: dict[Level, int] = Field(default_factory=dict)
    gate: GateConfig
    nlg: NlgConfig
    # The days the business is closed: ``business.calendar`` in the pack, attached at load.
    calendar: BusinessCalendar = Field(default_factory=BusinessCalendar)

    @field_validator("times")
    @classmethod
    def _times_are_hh_mm(cls, times: list[str]) -> list[str]:
        for value in times:
            hour, _, minute = value.partition(":")
            if not (len(value) == 5 and hour.isdigit() and minute.isdigit()):
                raise ValueError(f"class time {value!r} is not HH:MM")
            if int(hour) > 23 or int(minute) > 59:
                raise ValueError(f"class time {value!r} is not a time of day")
        return sorted(set(times))

    @model_validator(mode="after")
    def _age_range(self) -> TrialConfig:
        if not self.min_age <= self.adult_age <= self.max_age:
            raise ValueError("ages must read min_age <= adult_age <= max_age")
        return self

    @property
    def levels_by_time(self) -> LevelsByTime:
        """``level_by_months_played`` as the NLU reads it: (months, level), ascending."""
        return tuple(
            sorted((months, level) for level, months in self.level_by_months_played.items())
        )

    @property
    def weekday_name(self) -> str:
        return self.weekday_names[self.weekday]


def load_business_calendar(pack: Pack) -> BusinessCalendar:
    """The pack's ``business.calendar`` (the empty, never-closed calendar when it has none)."""
    business = pack.sections.get("business", {})
    return BusinessCalendar.model_validate(business.get("calendar", {}))


def load_trial_config(pack: Pack) -> TrialConfig:
    """The ``trial:`` section, with the business calendar its class days are checked against."""
    config = pack.section("trial", TrialConfig)
    return config.model_copy(update={"calendar": load_business_calendar(pack)})
