"""From a message to trial fields, and the seed's safe merge into the trial slice.

``extract_trial_fields`` is the rules extractor (shared NLU slot extractors, told which field
the bot just asked for). In llm/hybrid modes the shell may produce a ``TrialExtraction`` with an
LLM instead and hand it to ``plan_turn``; either way only the validators decide what is valid.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from services.trial.models import Asked, TrialExtraction, TrialState
from shared.contracts import MemoryView
from shared.nlu.bounds import time_bound
from shared.nlu.dates import (
    names_a_period_only,
    nearest_weekday,
    parse_iso_date,
    part_of_day,
    weeks_ahead_only,
)
from shared.nlu.extract import extract_slots
from shared.nlu.models import Expecting
from shared.nlu.normalize import normalize
from shared.nlu.slots import LevelsByTime
from shared.trial.config import Action, TrialConfig

# The trial slice fields an extraction may fill (``confirmed`` is an answer, not state).
MERGEABLE = ("nome", "idade", "nivel", "desired_date", "desired_time", "desired_period")
# Who writes when it is not the student; merged only into a slice that has these fields.
WRITER_FIELDS = ("contact_name", "for_someone_else")

# Priority when a message asks for several actions ("quero remarcar minha aula": reschedule).
_ACTION_ORDER: tuple[Action, ...] = ("handoff", "cancel", "reschedule", "status")
# The actions whose terms a person may ask about before asking for them.
_ASKED_ABOUT: frozenset[Action] = frozenset({"cancel", "reschedule"})

# What the NLU is told the bot asked for (a yes/no question needs no hint: it reads yes/no always).
_EXPECTING: dict[Asked, Expecting] = {
    "nome": "nome",
    "idade": "idade",
    "nivel": "nivel",
    "date": "date",
    "time": "time",
}


def ensure_trial_defaults(state: TrialState | None) -> TrialState:
    """The trial slice with the seed's defaults (stage collect_client_info, nothing booked)."""
    return state if state is not None else TrialState()


def extract_trial_fields(
    text: str,
    *,
    now: datetime,
    tz: ZoneInfo,
    asked: Asked | None,
    valid_times: Collection[str] | None = None,
    not_names: Collection[str] = (),
    reference_date: str | None = None,
    reference_time: str | None = None,
    class_weekday: int | None = None,
    levels_by_time: LevelsByTime = (),
) -> TrialExtraction:
    """Rules extraction of one message, normalized to YYYY-MM-DD and HH:MM.

    Every field is read from every message, in any order; the field the bot just asked for
    (``asked``) is the first reading of a short reply ("paulo", "vinte e nove", "nunca", "qui",
    "as 8"). ``valid_times`` are the class times (``TrialConfig.times``): an hour said without
    a period takes the reading that is a class ("as 8" → 20:00). ``not_names`` are
    words never read as a name. ``reference_date`` is the slice's ``desired_date`` (YYYY-MM-DD):
    "remarcar pra terça seguinte" is the Tuesday after it. ``reference_time`` is the slice's
    ``desired_time`` (HH:MM): "da noite" after "às 7" moves it to 19:00. ``class_weekday``
    (``TrialConfig.weekday``): a span said alone ("daqui a duas semanas") is the class day
    nearest to where it ends, not the weekday it happens to land on. A part of the day said
    without an hour ("terça à noite") is ``desired_period``: the times offered are that part's.
    ``levels_by_time`` (``TrialConfig.levels_by_time``) makes a time played a level. A limit
    on the time ("depois das 20h", "tem mais tarde?", after ``reference_time``) is
    ``time_bound``, and its hour is not the time wished for.
    """
    slots = extract_slots(
        text,
        now,
        tz,
        _EXPECTING.get(asked) if asked else None,
        valid_times=valid_times,
        not_names=not_names,
        reference_date=parse_iso_date(reference_date),
        reference_time=_parse_hh_mm(reference_time),
        levels_by_time=levels_by_time,
    )
    day = slots.date
    if day is not None and class_weekday is not None and names_a_period_only(text):
        day = nearest_weekday(day, class_weekday)
    if day is None and class_weekday is not None:
        day = _class_day_of_week_named(text, now.astimezone(tz).date(), class_weekday)
    bound = time_bound(text, valid_times=valid_times, reference=reference_time)
    hour = slots.time.strftime("%H:%M") if slots.time else None
    if bound is not None and hour == bound.hour:
        hour = None
    return TrialExtraction(
        nome=slots.nome,
        idade=slots.idade,
        nivel=slots.nivel,
        desired_date=day.isoformat() if day else None,
        desired_time=hour,
        desired_period=part_of_day(text) if hour is None else None,
        time_bound=bound,
        confirmed=slots.yes_no,
        contact_name=slots.contact_name,
        for_someone_else=slots.for_someone_else,
    )


def _class_day_of_week_named(text: str, today: date, class_weekday: int) -> date | None:
    """The class day of the week a message names alone ("semana que vem de manhã"); None when
    it names no week, or this week's class day has passed."""
    weeks = weeks_ahead_only(text)
    if weeks is None:
        return None
    day = today + timedelta(days=7 * weeks + class_weekday - today.weekday())
    return day if day >= today else None


def _parse_hh_mm(value: str | None) -> time | None:
    try:
        return time.fromisoformat(value) if value else None
    except ValueError:
        return None


# What the conversation's memory gives a booking: the student's facts and who writes. Days and
# times said earlier are not carried: "tem aula sexta?" is a question, not a request, unless
# the message points back to them ("quero nesse horário").
CARRIED = ("nome", "idade", "nivel", *WRITER_FIELDS)
WHEN = ("desired_date", "desired_time")


def points_back(text: str, state: TrialState | None, config: TrialConfig) -> bool:
    """Whether a message of a booking not yet dated points back to a day or time said
    before ("quero a experimental nesse horário"): ``TrialConfig.points_back``."""
    if state is not None and state.stage not in ("collect_client_info", "ask_date"):
        return False
    return bool(config.points_back and re.search(config.points_back, normalize(text)))


def with_memory(
    current: TrialExtraction,
    memory: MemoryView | None,
    *,
    turn_id: str,
    now: datetime,
    window: timedelta,
    starting: bool,
    points_back: bool = False,
) -> TrialExtraction:
    """This turn's extraction completed and corrected by the conversation's memory.

    The memory reads every message on its own and in order (triage keeps it, whatever the
    turn's route), so what it noted in this turn wins: a correction in a burst ("tenho 277
    anos" / "27*"), the last of several statements. When a booking starts (``starting``), the
    facts told in earlier turns — at most ``window`` before ``now`` — fill what this turn does
    not say: people tell their age or level while asking questions ("tenho 45 anos, nunca
    joguei, tem que pagar?"), before the booking starts, and asking again is a lost answer.
    The memory already forgot the facts of another person when the student changed. A
    message that points back to a day or time said before (``points_back``: "quero nesse
    horário", after "vocês têm aula às 7 da manhã?") takes them too, within ``window``.
    """
    if memory is None:
        return current
    this_turn: dict[str, object] = {}
    earlier: dict[str, object] = {}
    for name in (*CARRIED, *WHEN) if points_back else CARRIED:
        fact = memory.facts.get(name)
        if fact is None:
            continue
        if fact.turn_id == turn_id:
            this_turn[name] = fact.value
        elif (starting or name in WHEN) and now - fact.at <= window:
            earlier[name] = fact.value
    if not this_turn and not earlier:
        return current
    own = current.model_dump(exclude_none=True)
    return TrialExtraction.model_validate({**earlier, **own, **this_turn})


def merge_trial(state: TrialState, extraction: TrialExtraction) -> TrialState:
    """The seed's safe merge: only the slice's own fields, only non-null values.

    Collected data is never erased; a new value replaces an old one (a person may correct the
    date or their name).
    """
    fields = type(state).model_fields
    updates = {
        field: value
        for field in MERGEABLE + WRITER_FIELDS
        if field in fields and (value := getattr(extraction, field)) is not None and value != ""
    }
    return state.model_copy(update=updates) if updates else state


def _contains(haystack: str, phrase: str) -> bool:
    needle = normalize(phrase)
    return bool(needle) and f" {needle} " in f" {haystack} "


def detect_action(text: str, intents: list[str], config: TrialConfig) -> Action | None:
    """Handoff, cancel, reschedule or status, from triage's intents or the pack's phrases and
    patterns. A question about what cancelling or moving costs (``terms_asked``: "pago multa
    se cancelar?") names the action without asking for it: the FAQ answers it, and the
    booking stays as it is until the person asks for the change."""
    found = {config.intent_actions[i] for i in intents if i in config.intent_actions}
    normalized = normalize(text)
    for action, phrases in config.keywords.items():
        if any(_contains(normalized, phrase) for phrase in phrases):
            found.add(action)
    patterns = config.action_patterns.items()
    found.update(action for action, pattern in patterns if re.search(pattern, normalized))
    if config.terms_asked and re.search(config.terms_asked, normalized):
        found -= _ASKED_ABOUT
    return next((action for action in _ACTION_ORDER if action in found), None)


def without_phrases(text: str, phrases: list[str]) -> str:
    """The normalized ``text`` with every occurrence of ``phrases`` taken out."""
    padded = f" {normalize(text)} "
    for phrase in sorted((normalize(p) for p in phrases), key=len, reverse=True):
        if phrase:
            padded = padded.replace(f" {phrase} ", " ")
    return " ".join(padded.split())


def find_booking_code(text: str, config: TrialConfig) -> str | None:
    """A booking code the person typed ("ae-7k3q9p" → "AE-7K3Q9P"), if any."""
    pattern = rf"\b{re.escape(config.booking_id_prefix)}-[A-Z0-9]{{6}}\b"
    match = re.search(pattern, text, flags=re.IGNORECASE)
    return match[0].upper() if match else None
