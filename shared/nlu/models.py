"""What the rules understood in one message, in the shape services merge into their state."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict

from shared.nlu.slots import Level

# The field the bot's last question asked for; it lets bare answers ("João", "27", "19") count.
Expecting = Literal["nome", "idade", "nivel", "date", "time"]


class Slots(BaseModel):
    """Every slot a message filled; None means "not said", never "said empty".

    ``nome`` and ``idade`` are the student's; when the writer books for someone else
    (``for_someone_else``), ``contact_name`` is the writer's own name if they gave it.
    """

    model_config = ConfigDict(frozen=True)

    nome: str | None = None
    idade: int | None = None
    nivel: Level | None = None
    date: dt.date | None = None
    time: dt.time | None = None
    yes_no: bool | None = None
    contact_name: str | None = None
    for_someone_else: bool | None = None
