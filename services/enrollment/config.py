"""The ``enrollment`` pack section: the plans people enroll in, how they name days and ways to
pay, and how a request is labelled.

The plans are the business's facts, held once: the FAQ's answer about prices refers to them
(``{enrollment.plans.tres_vezes.price}``), so the price said in an answer and the plan a
request records cannot differ.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.pack import Pack, PackError

# Every text the enrollment may say (checked against the pack when the service starts).
TEXT_KEYS = (
    "enrollment_ask_plan",
    "enrollment_plan_line",
    "enrollment_ask_schedule",
    "enrollment_ask_days",
    "enrollment_ask_time",
    "enrollment_ask_time_free_days",
    "enrollment_ask_payment",
    "enrollment_confirm",
    "enrollment_confirm_again",
    "enrollment_change",
    "enrollment_requested",
    "enrollment_already_requested",
    "enrollment_not_now",
    "enrollment_summary",
    "enrollment_partial_summary",
    "enrollment_handoff",
    "enrollment_closed_days",
    "enrollment_more_days",
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Plan(_Frozen):
    """A monthly plan: its name, its price in reais, and its classes per week (None: as many
    as the person wants, e.g. "horário livre")."""

    name: str = Field(min_length=1)
    price: int = Field(gt=0)
    classes_per_week: int | None = Field(default=None, ge=1, le=7)
    # Other ways people name it ("livre", "ilimitado"), besides "<n>x" / "<n> vezes".
    words: list[str] = Field(default_factory=list)
    # Set for a plan with no fixed weekdays ("horário livre": any day the business opens): how
    # its days are said back ("dias livres"). Its days are not asked: asking which days for a
    # plan that has none is a question with no right answer.
    free_days: str | None = Field(default=None, min_length=1)


class Payment(_Frozen):
    """A way to pay the staff will arrange (the bot never charges)."""

    label: str = Field(min_length=1)
    words: list[str] = Field(min_length=1)


class EnrollmentConfig(_Frozen):
    """The ``enrollment`` section of a pack."""

    plans: dict[str, Plan] = Field(min_length=1)
    # The price of one class without a plan, stated by the FAQ.
    single_class_price: int | None = Field(default=None, gt=0)
    # Weekday label (as said back) → the words that name it, in the week's order.
    weekdays: dict[str, list[str]] = Field(min_length=1)
    # Weekdays the business does not open (label → the words that name it): named in a
    # choice, they are left out and the person is told so, not silently dropped.
    closed_days: dict[str, list[str]] = Field(default_factory=dict)
    # Words that add the days of a message to those already chosen ("sexta também") rather
    # than replace them ("prefiro sexta").
    add_words: list[str] = Field(default_factory=list)
    # Words that name every open day at once ("todo dia", "a semana toda").
    every_day_words: list[str] = Field(default_factory=list)
    # Words that choose a plan by its price rather than its name ("o mais barato", "o mais em
    # conta" → the cheapest; "o mais completo" → the dearest): the price list decides which.
    cheapest_words: list[str] = Field(default_factory=list)
    dearest_words: list[str] = Field(default_factory=list)
    # Words that open a question ("vocês aceitam pix, cartão?"): such a sentence is asked
    # whole, while "quero o de 3x, aceita cartão?" states its first part.
    question_openers: list[str] = Field(default_factory=list)
    payments: dict[str, Payment] = Field(min_length=1)
    # Requests read aloud as "<prefix>-XXXXXX".
    request_id_prefix: str = Field(default="MT", pattern=r"^[A-Z]{1,4}$")
    # The tool the funnel mode must allow (pack ``capabilities``) for a request to be made.
    tool: str = "request_enrollment"
    # The handoff reason staff see.
    handoff_reason: str = "enrollment"
    # How many times a question is asked in all before staff take over (the seeds' rule).
    max_asks: int = Field(default=2, ge=1)
    # A part of the day said with no hour ("de manhã", "à noite": ``shared.nlu.dates``'s
    # ``part_of_day`` keys manha, tarde, noite) is a preferred time staff can arrange, said
    # back as its label here; an hour is said back through ``at_hour``.
    parts_of_day: dict[str, str] = Field(default_factory=dict)
    at_hour: str = "às {hora}"
    # Joins the last item of a list ("segunda, quarta e sexta").
    list_last_separator: str = " e "
    # Joins the last of the choices offered ("Pix ou cartão").
    choice_separator: str = " ou "

    @model_validator(mode="after")
    def _one_plan_per_count(self) -> EnrollmentConfig:
        counts = [p.classes_per_week for p in self.plans.values() if p.classes_per_week]
        if len(counts) != len(set(counts)):
            raise ValueError(f"two plans share a number of classes per week: {counts}")
        return self


def load_config(pack: Pack) -> EnrollmentConfig:
    """The pack's enrollment section, refusing a pack that lacks a text the service says."""
    config = pack.section("enrollment", EnrollmentConfig)
    missing = sorted(set(TEXT_KEYS) - set(pack.sections.get("texts", {})))
    if missing:
        raise PackError(f"pack {pack.name!r}: enrollment says missing texts {missing}")
    return config
