"""A booked class moved: whether a message asks to move it at all ("tem como trocar?") and,
when it says so relative to the class itself ("passa uma semana pra frente", "adia duas
semanas", "na semana seguinte"), how many weeks later than the booked date.

The date extractor reads days said outright and days relative to today; a shift is relative to
the class being moved, which only the flow after a booking knows, so it is read here and added
to the booked date there.
"""

from __future__ import annotations

import re

from shared.nlu.normalize import normalize
from shared.nlu.numbers import NUMBER_WORDS, number_value

_COUNT = rf"(\d|{NUMBER_WORDS})"
# "uma semana pra frente", "2 semanas depois", "semana adiante".
_LATER = re.compile(
    rf"(?<!\w)(?:{_COUNT}\s+)?semanas?\s+(?:para\s+(?:a\s+)?frente|depois|adiante|mais\s+tarde)(?!\w)"
)
# "adia uma semana", "empurra em duas semanas", "atrasar 1 semana".
_DELAYED = re.compile(
    rf"(?<!\w)(?:adi|empurr|atras)\w*\s+(?:(?:em|por)\s+)?{_COUNT}\s+semanas?(?!\w)"
)
# "na semana seguinte", "pra semana seguinte".
_FOLLOWING = re.compile(r"(?<!\w)semana\s+seguinte(?!\w)")
# A verb of moving with no other object: "tem como trocar?", "preciso mudar", "adia"; not
# "passar" ("me passa o endereço"). An object other than the class's own ("trocar de roupa",
# "mudar o nome", "trocar a raquete") moves something else.
_MOVE = re.compile(
    r"(?<!\w)(?:troc|mud|alter|remarc|reagend|adi|transfer)(?:ar|a|e)(?!\w)"
    r"(?!\s+(?:de|nome|idade|nivel)(?!\w))"
    r"(?!\s+(?:o|a|os|as|um|uma|meu|minha|seu|sua)\s+(?!(?:data|dia|horario|hora|aula|agendamento|reserva)(?!\w)))"
)


def asks_to_move(text: str) -> bool:
    """Whether the message asks to move something, which with a booked class is the class."""
    return bool(_MOVE.search(normalize(text)))


def weeks_later(text: str) -> int | None:
    """How many weeks after the booked class the message moves it to; None: it says no shift."""
    said = normalize(text)
    for pattern in (_LATER, _DELAYED):
        match = pattern.search(said)
        if match:
            count = number_value(match[1]) if match[1] else 1
            return count if count and count > 0 else None
    return 1 if _FOLLOWING.search(said) else None
