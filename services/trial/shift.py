"""A booked class moved: whether a message asks to move it at all ("tem como trocar?", with no
object but the class's own).

Where it goes is the date extractor's: a day said outright, or relative to the class being
moved ("passa uma semana pra frente", "adia duas semanas", "na semana seguinte"), which it reads
against the slice's date (``shared.nlu.dates``, ``reference``).
"""

from __future__ import annotations

import re

from shared.nlu.normalize import normalize

# A verb of moving with no other object: "tem como trocar?", "preciso mudar", "adia"; not
# "passar" ("me passa o endereço"). An object other than the class's own ("trocar de roupa",
# "mudar o nome", "trocar a raquete") moves something else; an article and a possessive may
# both come before the class ("alterar a minha aula").
_MOVE = re.compile(
    r"(?<!\w)(?:troc|mud|alter|remarc|reagend|adi|transfer)(?:ar|a|e)(?!\w)"
    r"(?!\s+(?:de|nome|idade|nivel)(?!\w))"
    r"(?!\s+(?:o|a|os|as|um|uma|meu|minha|seu|sua)\s+(?:(?:meu|minha|seu|sua|nosso|nossa)\s+)?+"
    r"(?!(?:data|dia|horario|hora|aula|agendamento|reserva)(?!\w)))"
)


def asks_to_move(text: str) -> bool:
    """Whether the message asks to move something, which with a booked class is the class."""
    return bool(_MOVE.search(normalize(text)))
