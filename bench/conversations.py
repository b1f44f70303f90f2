"""Scripted Portuguese conversations for the load: what simulated people say, and when.

Every conversation is built from its index alone, so a run is reproducible and two runs with
the same indexes say the same things. Business time (``sent_at``) starts two hours later for
each conversation, and bookings ask for one of the next three Tuesdays at one of the four class
times: over a run the bookings spread over many classes of six seats, and some still find a
class full, as real people would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

KINDS = ("greeting", "booking", "booking_fast", "faq", "multi_intent")
# Twenty conversations in a cycle: mostly bookings (the flow that carries state), then FAQ and
# multi-intent turns (two specialists at once), then small talk.
DEFAULT_MIX: tuple[str, ...] = (
    ("booking",) * 7
    + ("booking_fast",) * 3
    + ("faq",) * 4
    + ("multi_intent",) * 4
    + ("greeting",) * 2
)
BOOKING_MIX: tuple[str, ...] = ("booking", "booking_fast")
# Questions only: every message asks something, so the gateway waits only its short window
# after each (``shared.nlu.fragment``), for measuring what the burst rule costs a question.
COMPLETE_MIX: tuple[str, ...] = ("faq",)

CLASS_WEEKDAY = 1  # Tuesday
CLASS_HOURS = (7, 18, 19, 20)
SPACING = timedelta(hours=2)

NAMES = ("Ana", "João", "Mariana", "Pedro", "Beatriz", "Lucas", "Camila", "Rafael", "Juliana",
         "Gustavo", "Larissa", "Felipe", "Fernanda", "Thiago", "Patrícia", "Bruno")  # fmt: skip
LEVELS = ("iniciante", "intermediário", "avançado")


@dataclass(frozen=True)
class Message:
    text: str
    sent_at: datetime


@dataclass(frozen=True)
class Conversation:
    conversation_id: str
    kind: str
    messages: tuple[Message, ...]


def class_slot(start: datetime, index: int) -> tuple[date, int]:
    """The Tuesday (one of the next three after ``start``) and the hour this person wants."""
    today = start.date()
    days = (CLASS_WEEKDAY - today.weekday()) % 7 or 7
    tuesday = today + timedelta(days=days, weeks=index % 3)
    return tuesday, CLASS_HOURS[(index // 3) % len(CLASS_HOURS)]


def _lines(kind: str, index: int, start: datetime) -> list[tuple[str, timedelta]]:
    name = NAMES[index % len(NAMES)]
    age = 18 + (index * 7) % 45
    level = LEVELS[index % len(LEVELS)]
    day, hour = class_slot(start, index)
    when = f"{day.day:02d}/{day.month:02d}"
    minute = timedelta(minutes=1)
    if kind == "greeting":
        return [
            ("oi, boa tarde!", minute),
            ("tudo bem? vi vocês no instagram", minute),
            ("vocês abrem sábado?", 2 * minute),
            ("valeu, obrigada!", minute),
        ]
    if kind == "booking":
        return [
            ("oi, quero agendar uma aula experimental", minute),
            (name, minute),
            (f"tenho {age} anos", minute),
            (f"sou {level}", minute),
            (f"pode ser terça {when}?", 2 * minute),
            (f"às {hour}h", minute),
            ("sim", minute),
        ]
    if kind == "booking_fast":
        return [
            (
                f"Oi! Meu nome é {name}, tenho {age} anos e sou {level}. "
                "Quero marcar uma aula experimental",
                minute,
            ),
            (f"terça {when} às {hour}h", 3 * minute),
            ("pode confirmar sim", minute),
        ]
    if kind == "faq":
        return [
            ("oi! onde fica a CT?", minute),
            ("tem estacionamento?", minute),
            ("preciso levar raquete?", 2 * minute),
            ("qual o horário de funcionamento?", minute),
        ]
    if kind == "multi_intent":
        return [
            ("quero agendar uma aula experimental e onde fica a CT?", minute),
            (f"me chamo {name}, tenho {age} anos e sou {level}", 2 * minute),
            (f"terça {when} às {hour}h. precisa levar raquete?", 2 * minute),
            ("sim", minute),
        ]
    raise ValueError(f"unknown conversation kind {kind!r}; known: {', '.join(KINDS)}")


def conversation(
    index: int, *, run_id: str, base: datetime, mix: Sequence[str] = DEFAULT_MIX
) -> Conversation:
    """Conversation number ``index`` of a run: its id, its kind and its timed messages."""
    kind = mix[index % len(mix)]
    start = base + index * SPACING
    messages: list[Message] = []
    at = start
    for text, gap in _lines(kind, index, start):
        messages.append(Message(text, at))
        at += gap
    return Conversation(f"{run_id}-{index}", kind, tuple(messages))


def reply_outcome(text: str) -> str:
    """What a reply meant to the person, for the report: a booking, a full class, or other."""
    lowered = text.lower()
    if lowered.startswith("agendado"):
        return "booked"
    if "lotada" in lowered:
        return "full"
    return "reply"
