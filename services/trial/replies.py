"""How the trial shows dates, times and choices to people, and fills its pack texts.

Dates are always shown as "terça, 10/02" (weekday names from the pack), never as ISO strings;
lists read naturally ("07:00, 18:00 e 20:00"). Every text a person reads comes from the pack's
``texts:`` section; this module only fills the placeholders.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any, Protocol

from services.trial.models import TrialState
from services.trial.schedule import (
    class_days,
    closed_before_next,
    free_times,
    next_day_with_room,
    next_open_day,
)
from services.trial.validators import SeatsTaken
from shared.nlu.dates import PartOfDay
from shared.trial.config import TrialConfig
from shared.trial.days import next_class_day, show_date, show_day


class TextSource(Protocol):
    """What the trial needs from a pack to speak: ``shared.pack.Pack`` satisfies it."""

    def text(self, key: str, seed: str = "", **values: Any) -> str: ...

    def has_text(self, key: str) -> bool: ...


def join_list(items: list[str], config: TrialConfig) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + config.list_last_separator + items[-1]


def free_options(
    day: date | None,
    *,
    now_local: datetime,
    config: TrialConfig,
    seats_taken: SeatsTaken,
    pack: TextSource,
    seed: str,
    part: PartOfDay | None = None,
) -> str:
    """Free times of ``day`` and of the next class day with room, as one sentence part (those
    of the part of the day wished for, ``part``)."""
    parts: list[str] = []
    after = day if day is not None else now_local.date()
    if day is not None:
        times = free_times(
            day, now_local=now_local, config=config, seats_taken=seats_taken, part=part
        )
        if times:
            parts.append(_option(day, times, config, pack, seed))
    following = next_day_with_room(
        after, now_local=now_local, config=config, seats_taken=seats_taken, part=part
    )
    if following is not None:
        parts.append(_option(following[0], following[1], config, pack, seed))
    if not parts:
        return pack.text("trial_no_options", seed=seed)
    return config.options_separator.join(parts)


def class_day_options(
    day: date,
    *,
    now_local: datetime,
    config: TrialConfig,
    seats_taken: SeatsTaken,
    pack: TextSource,
    seed: str,
    part: PartOfDay | None = None,
) -> str:
    """For a day that is not a class day: the class days around it with room, as one part.

    "sexta 13/02" gets the Tuesday before it (if still to come) and the first one after it with
    a free seat, so a Friday or Saturday request is answered with the nearest Tuesdays (their
    times of the part of the day wished for, ``part``).
    """
    before = next_class_day(day, config.weekday) - timedelta(weeks=1)
    parts: list[str] = []
    if before >= now_local.date():
        times = free_times(
            before, now_local=now_local, config=config, seats_taken=seats_taken, part=part
        )
        if times:
            parts.append(_option(before, times, config, pack, seed))
    for candidate in class_days(max(day, now_local.date()), config):
        times = free_times(
            candidate, now_local=now_local, config=config, seats_taken=seats_taken, part=part
        )
        if times:
            parts.append(_option(candidate, times, config, pack, seed))
            break
    if not parts:
        return pack.text("trial_no_options", seed=seed)
    return config.options_separator.join(parts)


def _option(day: date, times: list[str], config: TrialConfig, pack: TextSource, seed: str) -> str:
    return pack.text(
        "trial_option_day", seed=seed, data=show_day(day, config), horas=join_list(times, config)
    )


def closed_note(*, now_local: datetime, config: TrialConfig, pack: TextSource, seed: str) -> str:
    """Why the next class day offered is not the nearest one ("Na terça, 09/02 não abrimos
    (Carnaval)."), with a trailing space; empty when none was skipped."""
    notes = [
        pack.text("trial_closed_note", seed=seed, data=show_day(day, config), motivo=reason)
        for day, reason in closed_before_next(now_local=now_local, config=config)
    ]
    return "".join(f"{note} " for note in notes)


def base_values(
    state: TrialState,
    *,
    now_local: datetime,
    config: TrialConfig,
    pack: TextSource | None = None,
    seed: str = "",
) -> dict[str, Any]:
    """Placeholders every trial text may use, so any text can mention any of them.

    ``fechado`` (why the next class day is not the nearest) needs the pack's texts."""
    fechado = closed_note(now_local=now_local, config=config, pack=pack, seed=seed) if pack else ""
    return {
        "nome": state.nome or "",
        "idade": state.idade if state.idade is not None else "",
        "nivel": config.level_names.get(state.nivel, state.nivel) if state.nivel else "",
        "contato": state.contact_name or "",
        "data": show_date(state.desired_date, config),
        "hora": state.desired_time or "",
        "codigo": state.booking_id or "",
        "horarios": join_list(list(config.times), config),
        "proxima": show_day(next_open_day(now_local=now_local, config=config), config),
        "opcoes": "",
        "fechado": fechado,
        "motivo": "",
        "data_antiga": "",
        "hora_antiga": "",
        "anotado": "",
        "falta": "",
        "resumo": "",
        # The others of a group booked one at a time (services/trial/party.py).
        "outros": "",
        "outras": "",
        "marcados": "",
        "vagas": config.seats_per_slot,
        "pessoas": "",
        "nomes": "",
    }
