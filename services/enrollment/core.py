"""The enrollment flow as pure decisions: read a message, fill the request, decide the reply.

Slots are filled in any order and from any message (one message may bring them all), and the
bot asks for the first one still missing: the plan, then the preferred days and time, then the
way to pay; with everything known it reads the request back and asks for a yes. A yes makes
the request (``enrollment.requested``) and hands the conversation to staff with a summary
(``handoff.requested``, reason ``enrollment``): a person arranges the start and the payment.
The bot never charges. A question that gets no usable answer is asked again up to
``config.max_asks`` times in all; then staff take over with what is known (``handed_off``), and
a later message resumes the flow where it stood.

A request needs the funnel mode's permission (the pack's ``capabilities``: the mode must allow
``config.tool``), checked when a flow starts and when the request is made; a conversation
without a mode yet is not restricted.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from services.enrollment.config import EnrollmentConfig, Plan
from shared.nlu.dates import part_of_day, resolve_time
from shared.nlu.normalize import normalize
from shared.nlu.numbers import NUMBER_WORDS, number_value, with_digits
from shared.nlu.yesno import points_at, yes_no

Stage = Literal[
    "ask_plan", "ask_schedule", "ask_payment", "awaiting_confirmation", "requested", "handed_off"
]
ID_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
ID_LENGTH = 6


class TextSource(Protocol):
    """Where user-facing texts come from (a loaded ``shared.pack.Pack``)."""

    def text(self, key: str, seed: str = "", **values: Any) -> str: ...


class EnrollmentState(BaseModel):
    """The ``enrollment`` slice: what the request holds so far and what is asked."""

    stage: Stage = "ask_plan"
    plan: str | None = None
    days: list[str] = Field(default_factory=list)
    time: str | None = None
    payment: str | None = None
    request_id: str | None = None
    # How many times the stage's question has been asked: a new question or any progress
    # makes it 1; past ``config.max_asks`` unanswered asks, staff take over (``handed_off``).
    asks: int = 0
    # The plan the bot suggested because the days chosen outnumber the plan's classes: a yes
    # takes it.
    offered_plan: str | None = None


class Reading(BaseModel):
    """What one message says for the request (None / empty: it says nothing of that)."""

    model_config = ConfigDict(frozen=True)

    plan: str | None = None
    days: list[str] = Field(default_factory=list)
    time: str | None = None
    payment: str | None = None
    answer: bool | None = None
    # Days named that the business does not open ("domingo"): said back as closed.
    closed_days: list[str] = Field(default_factory=list)
    # The days add to those already chosen ("coloca sexta também") instead of replacing them.
    adds_days: bool = False

    @property
    def fills(self) -> bool:
        return bool(self.plan or self.days or self.time or self.payment)


class EnrollmentRequest(BaseModel):
    """A request for staff: what the person chose, never a charge."""

    id: str
    conversation_id: str
    plan: str
    days: list[str]
    time: str
    payment: str
    status: Literal["requested"] = "requested"
    created_at: AwareDatetime


class Outcome(BaseModel):
    """One turn of the flow: the reply, the slice to write (None: none), what to publish."""

    text: str
    asks_question: bool
    state: EnrollmentState | None
    request: EnrollmentRequest | None = None
    events: list[dict[str, Any]] = Field(default_factory=list)
    journal: dict[str, Any] = Field(default_factory=dict)


# "3x", "3 x", "3 vezes", "duas vezes" (most numbers in words are digits by then; the library
# leaves some small ones, such as "duas", as words).
# "3x", "2 vezes", "2 dias na semana", "3 treinos semanais": how many classes a week, counted
# in times, days, classes or trainings.
_TIMES_A_WEEK = re.compile(
    rf"\b([1-7]|{NUMBER_WORDS})\s*(?:x|vezes|vez|(?:dias?|aulas?|treinos?)\s+"
    r"(?:(?:na|por|da)\s+semana|semanais))(?!\w)"
)
# "plano de 3", "o de 2": a plan named by its count, once the plan was asked.
_PLAN_OF = re.compile(r"\b(?:plano|o|a|aquele)\s+(?:de|das?)\s+([1-7])(?!\w|\s*(?:h|:))")
_NUMBER = re.compile(r"(?<![\w:])(\d{2,5})(?![\w:])")
_CLAUSE = re.compile(r"[^.!?\n]+[.!?]*")


def _phrase(words: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(w) for w in normalize(words).split())
    return re.compile(rf"(?<!\w){body}(?!\w)")


def _statements(text: str, config: EnrollmentConfig) -> str:
    """The message without its questions: "vocês aceitam cartão?" asks, it chooses nothing.

    A "?" closes only the last comma piece of its sentence: people state and then ask in one
    line ("quero o de 3x, aceita cartão?"), and the plan stated there is chosen; unless the
    sentence opens as a question ("vocês aceitam pix, cartão?"), which is then asked whole.
    """
    openers = [_phrase(w) for w in config.question_openers]
    kept: list[str] = []
    for clause in _CLAUSE.findall(text):
        if not clause.strip().endswith("?"):
            kept.append(clause)
        elif not any(o.match(normalize(clause)) for o in openers):
            kept += clause.split(",")[:-1]
    return " ".join(kept)


def _plan(normalized: str, config: EnrollmentConfig, *, asked: bool) -> str | None:
    digits = with_digits(normalized)
    by_count = {p.classes_per_week: key for key, p in config.plans.items() if p.classes_per_week}
    match = _TIMES_A_WEEK.search(digits) or (_PLAN_OF.search(digits) if asked else None)
    count = number_value(match[1]) if match else None
    if count in by_count:
        return by_count[count]
    by_price = {p.price: key for key, p in config.plans.items()}
    priced = [by_price[int(n)] for n in _NUMBER.findall(digits) if int(n) in by_price]
    if priced:
        # "o de 360", "o plano de R$ 280": a plan is named by its price as well (prices are
        # far from any hour or count, so a number equal to one is that plan).
        return priced[0]
    for key, plan in config.plans.items():
        if any(_phrase(word).search(normalized) for word in [plan.name, *plan.words]):
            return key
    by_rank = {
        min(by_price.items())[1]: config.cheapest_words,
        max(by_price.items())[1]: config.dearest_words,
    }
    for key, words in by_rank.items():
        if any(_phrase(word).search(normalized) for word in words):
            return key
    if asked and digits.strip().isdigit() and int(digits.strip()) in by_count:
        return by_count[int(digits.strip())]
    return None


def _day_names(config: EnrollmentConfig) -> str:
    """Every word for a weekday as one alternative, longest first ("segunda" before "seg"),
    each allowing the plural people use for a weekly habit ("tercas e quintas")."""
    words = sorted({normalize(w) for ws in config.weekdays.values() for w in ws}, key=len)
    return "|".join(re.escape(w) for w in reversed(words))


def _day_of(word: str, config: EnrollmentConfig) -> str:
    return next(d for d, words in config.weekdays.items() if word in map(normalize, words))


def _days(normalized: str, config: EnrollmentConfig) -> list[str]:
    """The weekdays named, in the week's order; a range ("de seg a sex", "segunda até
    quinta") names every day between its ends, and "todo dia" every open day."""
    order = list(config.weekdays)
    names = _day_names(config)
    named: set[str] = set()
    span = re.compile(rf"(?<!\w)({names})s?\s+(?:a|ate)\s+({names})s?(?!\w)")
    for match in span.finditer(normalized):
        first, last = (order.index(_day_of(w, config)) for w in match.groups())
        if first < last:
            named.update(order[first : last + 1])
    single = re.compile(rf"(?<!\w)({names})s?(?!\w)")
    named.update(_day_of(m[1], config) for m in single.finditer(normalized))
    if any(_phrase(w).search(normalized) for w in config.every_day_words):
        named.update(order)
    return [day for day in order if day in named]


def _closed(normalized: str, config: EnrollmentConfig) -> list[str]:
    """The closed days a message names, in the pack's order."""
    return [
        day
        for day, words in config.closed_days.items()
        if any(re.search(rf"(?<!\w){re.escape(normalize(w))}s?(?!\w)", normalized) for w in words)
    ]


def read(text: str, config: EnrollmentConfig, *, stage: Stage | None) -> Reading:
    """What ``text`` says for the request; ``stage`` is what was asked (a bare "3" answers the
    plan question, a bare "19" the time)."""
    said = _statements(text, config)
    normalized = normalize(said)
    days = _days(normalized, config)
    plan = _plan(normalized, config, asked=stage == "ask_plan")
    # A plan's count is no hour ("3x", "2 vezes"): it is taken out before reading a time.
    timed = _TIMES_A_WEEK.sub(" ", with_digits(normalized))
    found = resolve_time(timed, expecting=stage == "ask_schedule") if timed.strip() else None
    # No hour, a part of the day: "de manhã cedo" is a preference, said back as such.
    part = part_of_day(timed) if found is None else None
    payment = next(
        (
            key
            for key, way in config.payments.items()
            if any(_phrase(w).search(normalized) for w in way.words)
        ),
        None,
    )
    return Reading(
        plan=plan,
        days=days,
        time=found.strftime("%H:%M") if found else part if part in config.parts_of_day else None,
        payment=payment,
        answer=yes_no(text),
        closed_days=_closed(normalized, config),
        adds_days=bool(days) and any(_phrase(w).search(normalized) for w in config.add_words),
    )


def request_id(conversation_id: str, turn_id: str, prefix: str) -> str:
    """The request's id, the same for every delivery of the turn that makes it: a redelivered
    turn finds its request instead of making a second one."""
    digest = hashlib.blake2s(f"{conversation_id}|{turn_id}".encode(), digest_size=8).digest()
    number = int.from_bytes(digest, "big")
    chars = []
    for _ in range(ID_LENGTH):
        number, index = divmod(number, len(ID_ALPHABET))
        chars.append(ID_ALPHABET[index])
    return f"{prefix}-{''.join(chars)}"


def _join(items: list[str], config: EnrollmentConfig, *, last: str | None = None) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + (last or config.list_last_separator) + items[-1]


def _money(value: int) -> str:
    return f"R$ {value}"


def _said_time(time: str | None, config: EnrollmentConfig) -> str:
    """The preferred time as said back: "às 19:00", or a part of the day ("de manhã")."""
    if time is None:
        return ""
    label = config.parts_of_day.get(time)
    return label if label is not None else config.at_hour.format(hora=time)


def _values(state: EnrollmentState, config: EnrollmentConfig) -> dict[str, str]:
    plan: Plan | None = config.plans.get(state.plan) if state.plan else None
    payment = config.payments.get(state.payment) if state.payment else None
    return {
        "plano": plan.name if plan else "",
        "preco": _money(plan.price) if plan else "",
        "dias": _join(state.days, config) or (plan.free_days or "" if plan else ""),
        "horario": _said_time(state.time, config),
        "hora": config.parts_of_day.get(state.time, state.time) if state.time else "",
        "pagamento": payment.label if payment else "",
        "opcoes": _join(
            [p.label for p in config.payments.values()], config, last=config.choice_separator
        ),
        "codigo": state.request_id or "",
    }


def _plan_lines(config: EnrollmentConfig, texts: TextSource, seed: str) -> str:
    return "\n".join(
        texts.text("enrollment_plan_line", seed=seed, nome=p.name, preco=_money(p.price))
        for p in config.plans.values()
    )


def _days_needed(state: EnrollmentState, config: EnrollmentConfig) -> bool:
    """Whether the days are still to be asked: none chosen, and the plan has fixed days."""
    plan = config.plans.get(state.plan) if state.plan else None
    return not state.days and (plan is None or plan.free_days is None)


def _next_stage(state: EnrollmentState, config: EnrollmentConfig) -> Stage:
    if state.plan is None:
        return "ask_plan"
    if _days_needed(state, config) or state.time is None:
        return "ask_schedule"
    if state.payment is None:
        return "ask_payment"
    return "awaiting_confirmation"


def _plan_for_days(state: EnrollmentState, config: EnrollmentConfig) -> str | None:
    """The plan to suggest for the days chosen: with no plan yet, the days say which one
    ("segunda, quarta e sexta" is three classes a week); with a plan whose classes a week they
    outnumber, the one that covers them. Either way the plan with the fewest classes that
    covers the days, else one without a limit; None when there are no days or the choice holds
    together (fewer days than classes is no contradiction)."""
    plan = config.plans.get(state.plan) if state.plan else None
    wanted = len(state.days)
    if not wanted or (plan is not None and plan.classes_per_week is None):
        return None
    if plan is not None and plan.classes_per_week is not None and wanted <= plan.classes_per_week:
        return None
    covering = sorted(
        (p.classes_per_week or 8, key)
        for key, p in config.plans.items()
        if p.classes_per_week is None or p.classes_per_week >= wanted
    )
    return covering[0][1] if covering else None


def _more_days(
    state: EnrollmentState, config: EnrollmentConfig, texts: TextSource, seed: str
) -> str:
    assert state.offered_plan
    offered = config.plans[state.offered_plan]
    if state.plan is None:
        return texts.text(
            "enrollment_plan_for_days",
            seed=seed,
            **_values(state, config),
            n=str(len(state.days)),
            outro=offered.name,
            outro_preco=_money(offered.price),
        )
    plan = config.plans[state.plan]
    return texts.text(
        "enrollment_more_days",
        seed=seed,
        **_values(state, config),
        n=str(len(state.days)),
        vezes=str(plan.classes_per_week),
        outro=offered.name,
        outro_preco=_money(offered.price),
    )


def _ask(
    state: EnrollmentState, config: EnrollmentConfig, texts: TextSource, seed: str, *, again: bool
) -> str:
    """The question for the state's stage."""
    values = _values(state, config)
    if state.stage == "ask_plan" and state.offered_plan:
        return _more_days(state, config, texts, seed)
    if state.stage == "ask_plan":
        return texts.text("enrollment_ask_plan", seed=seed, planos=_plan_lines(config, texts, seed))
    if state.stage == "ask_schedule":
        key = "enrollment_ask_schedule"
        if not _days_needed(state, config) and not state.days:
            key = "enrollment_ask_time_free_days"
        elif state.days and state.time is None:
            key = "enrollment_ask_time"
        elif state.time is not None and not state.days:
            key = "enrollment_ask_days"
        return texts.text(key, seed=seed, **values)
    if state.stage == "ask_payment":
        return texts.text("enrollment_ask_payment", seed=seed, **values)
    key = "enrollment_confirm_again" if again else "enrollment_confirm"
    return texts.text(key, seed=seed, **values)


def with_earlier(reading: Reading, earlier: list[Reading]) -> Reading:
    """A flow's first reading completed by the plan and the payment the person named before the
    flow started (``earlier``, oldest first: later ones win, this message over all): "quanto é
    o plano de 3x? pago no pix" then "quero me matricular" starts with both known (they are
    read back before the request). Days and times said before are not carried: "vocês abrem
    sábado?" is a question, not a choice."""
    carried: dict[str, Any] = {}
    for said in earlier:
        carried.update(said.model_dump(include={"plan", "payment"}, exclude_defaults=True))
    own = reading.model_dump(include={"plan", "payment"}, exclude_defaults=True)
    return reading.model_copy(update={**carried, **own}) if carried else reading


def summary(state: EnrollmentState, config: EnrollmentConfig, texts: TextSource, seed: str) -> str:
    """The request in one sentence, for the staff who take the conversation."""
    return texts.text("enrollment_summary", seed=seed, **_values(state, config))


def _filled(state: EnrollmentState, reading: Reading, config: EnrollmentConfig) -> EnrollmentState:
    update: dict[str, Any] = {}
    if reading.plan:
        update["plan"] = reading.plan
    if reading.days:
        chosen = {*reading.days, *state.days} if reading.adds_days else set(reading.days)
        update["days"] = [day for day in config.weekdays if day in chosen]
    if reading.time:
        update["time"] = reading.time
    if reading.payment:
        update["payment"] = reading.payment
    if reading.fills:
        update["offered_plan"] = None
    return state.model_copy(update=update)


def decide(
    text: str,
    *,
    state: EnrollmentState | None,
    config: EnrollmentConfig,
    texts: TextSource,
    seed: str,
    now: datetime,
    conversation_id: str,
    turn_id: str,
    allowed: bool,
    earlier: list[str] | None = None,
) -> Outcome:
    """One turn of the flow (see the module doc).

    ``text`` empty: triage sent the turn so the flow re-asks its pending step after another
    specialist's answer. ``allowed``: whether the conversation's mode allows a request.
    ``earlier``: the customer's messages before this turn (the conversation's memory); read
    only when the flow starts, for what the person already chose.
    """
    if state is not None and state.stage == "requested":
        values = _values(state, config)
        return Outcome(
            text=texts.text("enrollment_already_requested", seed=seed, **values),
            asks_question=False,
            state=state,
            journal={"stage": "requested", "request_id": state.request_id},
        )
    refused = Outcome(
        text=texts.text("enrollment_not_now", seed=seed),
        asks_question=False,
        state=state,
        journal={"stage": state.stage if state else None, "refused": "not_allowed"},
    )
    if not allowed and state is None:
        return refused
    current = state or EnrollmentState()
    if current.stage == "handed_off":
        # Back from staff: the flow resumes at its first missing slot.
        current = current.model_copy(update={"stage": _next_stage(current, config), "asks": 0})
    if not text.strip():
        return Outcome(
            text=_ask(current, config, texts, seed, again=True),
            asks_question=True,
            state=current,
            journal={"stage": current.stage, "reask": True},
        )
    reading = read(text, config, stage=state.stage if state else None)
    if state is None and earlier:
        reading = with_earlier(reading, [read(said, config, stage=None) for said in earlier])
        if reading.plan is None and points_at(text):
            # "fechado, quero esse" right after asking about a plan takes the plan asked about.
            asked = _plan(normalize(earlier[-1]), config, asked=False)
            reading = reading.model_copy(update={"plan": asked}) if asked else reading
    if current.offered_plan and not reading.fills and reading.answer is True:
        reading = reading.model_copy(update={"plan": current.offered_plan})
    journal: dict[str, Any] = {"reading": reading.model_dump(exclude_defaults=True)}
    confirming = current.stage == "awaiting_confirmation"
    if confirming and not reading.fills and reading.answer is True:
        if not allowed:
            return refused
        request_id_ = request_id(conversation_id, turn_id, config.request_id_prefix)
        done = current.model_copy(update={"stage": "requested", "request_id": request_id_})
        return _requested(done, config, texts, seed, now, conversation_id, journal)
    if confirming and not reading.fills and reading.answer is False:
        return Outcome(
            text=texts.text("enrollment_change", seed=seed),
            asks_question=True,
            state=current.model_copy(update={"asks": 1}),
            journal={**journal, "stage": current.stage, "answer": False},
        )
    filled = _filled(current, reading, config)
    offer = _plan_for_days(filled, config)
    stage: Stage = "ask_plan" if offer else _next_stage(filled, config)
    nxt = filled.model_copy(update={"stage": stage, "asks": 1, "offered_plan": offer})
    unanswered = (
        nxt.stage == current.stage
        and state is not None
        and not reading.fills
        and not reading.closed_days
    )
    if unanswered and current.asks >= config.max_asks:
        return _handed_off(current, config, texts, seed, journal)
    if unanswered:
        nxt = nxt.model_copy(update={"asks": current.asks + 1})
    question = _ask(nxt, config, texts, seed, again=unanswered)
    if reading.closed_days:
        closed = texts.text(
            "enrollment_closed_days", seed=seed, fechados=_join(reading.closed_days, config)
        )
        question = f"{closed} {question}"
    return Outcome(
        text=question,
        asks_question=True,
        state=nxt,
        journal={**journal, "stage": nxt.stage, "from": state.stage if state else None},
    )


def _handed_off(
    state: EnrollmentState,
    config: EnrollmentConfig,
    texts: TextSource,
    seed: str,
    journal: dict[str, Any],
) -> Outcome:
    """Asked ``max_asks`` times with no answer: a person takes over, told what is known."""
    known = {key: value or "—" for key, value in _values(state, config).items()}
    line = texts.text("enrollment_partial_summary", seed=seed, **known)
    handoff = {"reason": config.handoff_reason, "summary": line, "stuck_at": state.stage}
    return Outcome(
        text=texts.text("enrollment_handoff", seed=seed),
        asks_question=False,
        state=state.model_copy(update={"stage": "handed_off"}),
        events=[{"type": "handoff.requested", "data": handoff}],
        journal={**journal, "stage": "handed_off", "from": state.stage, "summary": line},
    )


def _requested(
    state: EnrollmentState,
    config: EnrollmentConfig,
    texts: TextSource,
    seed: str,
    now: datetime,
    conversation_id: str,
    journal: dict[str, Any],
) -> Outcome:
    """The request made: the reply, the record for staff, the event and the handoff."""
    assert state.plan and state.time and state.payment and state.request_id
    request = EnrollmentRequest(
        id=state.request_id,
        conversation_id=conversation_id,
        plan=config.plans[state.plan].name,
        days=state.days,
        time=state.time,
        payment=config.payments[state.payment].label,
        created_at=now,
    )
    line = summary(state, config, texts, seed)
    data = request.model_dump(mode="json", exclude={"conversation_id", "status", "created_at"})
    events = [
        {"type": "enrollment.requested", "data": data},
        {
            "type": "handoff.requested",
            "data": {"reason": config.handoff_reason, "summary": line, "request_id": request.id},
        },
    ]
    return Outcome(
        text=texts.text("enrollment_requested", seed=seed, **_values(state, config)),
        asks_question=False,
        state=state,
        request=request,
        events=events,
        journal={**journal, "stage": "requested", "request_id": request.id, "summary": line},
    )
