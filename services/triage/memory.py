"""The conversation's memory: the facts every customer message gave, wherever it was routed.

Triage sees every turn, so it keeps the ``memory`` slice; the flows read it through
``shared.contracts.MemoryView`` (the trial fills a booking from it, so a burst such as "tenho
29 anos" / "me chamo Thaís" / "quero fazer a aula" books without asking again).

``remember`` is pure: the slice before, one turn's messages, the turn's business time and the
field the bot just asked for → the slice after and what this turn noted. Each message of the
turn is read on its own, in order, by the shared rules (``shared.nlu.extract``), and:

- every fact keeps where it came from: the turn, the message, when, and the words said;
- a later statement replaces an earlier one (a correction: "é Thamires com TH"); the value it
  replaced is kept on the fact (``previous``) so ``orquestra explain`` can show the correction;
- a message that is only a number ("27*", "kkk 33! desculpa", "27 não, 28") right after a
  message that gave an age corrects the age (the usual fat-finger fix); while the student's
  data are being given and the age is unknown, it is the age ("Lua" / "41" / "iniciante");
- a name with an asterisk right after a name ("Gabriela*") corrects it;
- who the student is: a message about someone else ("pro meu filho, o Theo, 11") after facts
  about another person starts a new student — the old person's nome, idade and nivel are
  dropped, not mixed with the new one; "pra mim" after someone else comes back to the writer;
- the writer's own name (``contact_name``) is kept apart from the student's;
- a day or time said is remembered as said (a question "tem aula sexta?" is not a booking:
  the flows decide what a day said earlier means to them).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from shared.nlu.extract import extract_slots
from shared.nlu.models import Expecting, Slots
from shared.nlu.normalize import normalize
from shared.nlu.party import for_the_writer
from shared.nlu.slots import LevelsByTime, extract_name

# The student's facts: dropped together when the student changes.
STUDENT_FIELDS = ("nome", "idade", "nivel")
FactField = Literal[
    "nome", "idade", "nivel", "contact_name", "for_someone_else", "desired_date", "desired_time"
]
# How much of a message a fact keeps as its source (enough to recognise it in a transcript).
SAID_CHARS = 80
# The customer messages kept whole (the latest), and how much of each.
HEARD_MESSAGES = 12
HEARD_CHARS = 300

# A message that is only a number, laughter, an apology or an asterisk ("27*", "33! desculpa").
_FILLER_WORDS = """
    k kk kkk kkkk rs rsrs haha hahaha ha ah ops opa nossa desculpa desculpe foi mal perdao
    sorry quis dizer digo dedo gordo errei erro corrigindo na verdade e isso nao
"""
_FILLER = frozenset(_FILLER_WORDS.split())
_BARE_NUMBER = re.compile(r"^\d{1,3}$")
# A bare number above this is no age ("150" is a typo the trial asks about, not a fact).
MAX_BARE_AGE = 110


class Fact(BaseModel):
    """One fact and where it came from."""

    model_config = ConfigDict(frozen=True)

    value: str | int | bool
    turn_id: str
    message_id: str
    at: AwareDatetime
    said: str
    # The value this fact replaced (a correction), if any.
    previous: str | int | bool | None = None


class Heard(BaseModel):
    """A customer message as the memory keeps it, for a flow that reads its own slots in what
    was said before it started (the enrollment's plan and payment)."""

    model_config = ConfigDict(frozen=True)

    turn_id: str
    message_id: str
    at: AwareDatetime
    text: str


class MemoryState(BaseModel):
    """The ``memory`` slice: the latest fact per field, the last customer messages, and the
    field the last message gave."""

    model_config = ConfigDict(extra="ignore")

    facts: dict[str, Fact] = Field(default_factory=dict)
    heard: list[Heard] = Field(default_factory=list)
    # The last student field a message gave ("idade" makes a bare "27*" next a correction).
    last_field: str | None = None


def _bare_number(text: str) -> int | None:
    """The number of a message that says only a number and filler ("27*", "33! desculpa"), or
    the last one of "27 não, 28"."""
    words = normalize(text).split()
    numbers = [word for word in words if _BARE_NUMBER.match(word)]
    rest = [word for word in words if not _BARE_NUMBER.match(word)]
    if not numbers or len(numbers) > 2 or any(word not in _FILLER for word in rest):
        return None
    if len(numbers) == 2 and "nao" not in rest:
        return None
    return int(numbers[-1])


def _age_due(state: MemoryState, expecting: Expecting | None) -> bool:
    """Whether a bare number is the age: right after an age (a correction), or while the
    student's data are being given and the age is still unknown ("Lua" / "41" / "iniciante")."""
    if state.last_field == "idade":
        return True
    collecting = state.last_field in STUDENT_FIELDS or expecting in STUDENT_FIELDS
    return collecting and "idade" not in state.facts


def _readings(slots: Slots) -> dict[str, Any]:
    found: dict[str, Any] = {
        "nome": slots.nome,
        "idade": slots.idade,
        "nivel": slots.nivel,
        "contact_name": slots.contact_name,
        "for_someone_else": slots.for_someone_else,
        "desired_date": slots.date.isoformat() if slots.date else None,
        "desired_time": slots.time.strftime("%H:%M") if slots.time else None,
    }
    return {name: value for name, value in found.items() if value is not None}


def _student_changes(state: MemoryState, read: dict[str, Any], text: str) -> bool:
    """Whether this message is about another student than the facts held."""
    before = state.facts.get("for_someone_else")
    was_other = bool(before and before.value)
    has_student = any(name in state.facts for name in STUDENT_FIELDS)
    if read.get("for_someone_else") is True:
        named = read.get("nome")
        held = state.facts.get("nome")
        return has_student and (not was_other or (named is not None and held is not None))
    return was_other and has_student and for_the_writer(text)


def remember_message(
    state: MemoryState,
    text: str,
    *,
    message_id: str,
    turn_id: str,
    now: datetime,
    tz: ZoneInfo,
    expecting: Expecting | None,
    valid_times: Collection[str] | None = None,
    levels_by_time: LevelsByTime = (),
) -> MemoryState:
    """The memory after one message (rules in the module doc); ``levels_by_time`` is the pack's
    rule for the level of a time played, the trial's own, so both read "jogo há 8 meses" alike."""
    slots = extract_slots(
        text, now, tz, expecting, valid_times=valid_times, levels_by_time=levels_by_time
    )
    read = _readings(slots)
    if "idade" not in read and _age_due(state, expecting):
        number = _bare_number(text)
        if number is not None and number <= MAX_BARE_AGE:
            read["idade"] = number
    if "nome" not in read and state.last_field == "nome" and text.strip().endswith("*"):
        # "Gabriela*" right after "é pro Gabriel": the asterisk corrects the name just given.
        corrected = extract_name(text.strip().rstrip("*"), expecting_name=True)
        if corrected is not None:
            read["nome"] = corrected
    facts = dict(state.facts)
    if _student_changes(state, read, text):
        for name in STUDENT_FIELDS:
            facts.pop(name, None)
        if read.get("for_someone_else") is None:
            read["for_someone_else"] = False
    said = " ".join(text.split())[:SAID_CHARS]
    for name, value in read.items():
        held = facts.get(name)
        if held is not None and held.value == value:
            continue
        facts[name] = Fact(
            value=value,
            turn_id=turn_id,
            message_id=message_id,
            at=now,
            said=said,
            previous=held.value if held is not None else None,
        )
    if "idade" in read:
        last: str | None = "idade"
    elif read:
        last = next((name for name in STUDENT_FIELDS if name in read), None)
    else:
        last = state.last_field
    heard = Heard(turn_id=turn_id, message_id=message_id, at=now, text=text[:HEARD_CHARS])
    kept = [*state.heard, heard][-HEARD_MESSAGES:]
    return MemoryState(facts=facts, heard=kept, last_field=last)


_EXPECTABLE: dict[str, Expecting] = {
    "nome": "nome",
    "idade": "idade",
    "nivel": "nivel",
    "date": "date",
    "time": "time",
}


def expecting_from(awaiting_field: str | None) -> Expecting | None:
    """What a flow's pending question makes of a bare answer (the trial's ``awaiting_field``)."""
    return _EXPECTABLE.get(awaiting_field) if awaiting_field else None


def remember(
    state: MemoryState | None,
    messages: Sequence[tuple[str, str]],
    *,
    turn_id: str,
    now: datetime,
    tz: ZoneInfo,
    expecting: Expecting | None,
    valid_times: Collection[str] | None = None,
    levels_by_time: LevelsByTime = (),
) -> tuple[MemoryState, dict[str, Any]]:
    """The memory after a turn's ``messages`` ((message id, text), oldest first) and what the
    turn noted ({field: value}, with ``corrected`` listing fields whose value it replaced)."""
    memory = state or MemoryState()
    for message_id, text in messages:
        memory = remember_message(
            memory,
            text,
            message_id=message_id,
            turn_id=turn_id,
            now=now,
            tz=tz,
            expecting=expecting,
            valid_times=valid_times,
            levels_by_time=levels_by_time,
        )
    noted = {name: fact.value for name, fact in memory.facts.items() if fact.turn_id == turn_id}
    corrected = sorted(
        name
        for name, fact in memory.facts.items()
        if fact.turn_id == turn_id and fact.previous is not None
    )
    dropped = sorted(name for name in (state.facts if state else {}) if name not in memory.facts)
    summary: dict[str, Any] = {"noted": noted} if noted else {}
    if corrected:
        summary["corrected"] = corrected
    if dropped:
        summary["dropped"] = dropped
    return memory, summary
