"""The trial flow before the booking: the client fields, the date and time, the confirmation.

Collects nome, idade and nivel in any order, then a valid slot, then the yes that books it;
also where the flow stops (a plain no, "cancelar" mid-way) and where it hands off to a person.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from services.trial.extraction import merge_trial
from services.trial.gating import after_gate, ask_gate
from services.trial.models import (
    CLIENT_FIELDS,
    Asked,
    ContextState,
    ToolCall,
    TrialExtraction,
    TrialState,
)
from services.trial.replies import class_day_options, free_options, join_list
from services.trial.schedule import class_times, free_times, next_day_with_room, next_open_day
from services.trial.summary import missing_fields
from services.trial.turn import Reply, TrialTurn
from services.trial.validators import (
    ERROR_FIELD,
    SeatsTaken,
    ValidationResult,
    validate_age,
    validate_slot,
)
from shared.nlu.bounds import TimeBound
from shared.nlu.dates import PartOfDay, slot_preference
from shared.nlu.normalize import normalize
from shared.nlu.party import for_the_writer, includes_writer, without_writer_age
from shared.nlu.slots import extract_age, writer_name
from shared.trial.days import parse_date, show_date

ASK_CLIENT: dict[str, str] = {
    "nome": "trial_ask_name",
    "idade": "trial_ask_age",
    "nivel": "trial_ask_level",
}
# Slot errors said aside (``trial_aside_<code>``) when a message gives a day or time that cannot
# be booked while a client field is still asked: the person hears it now, with the nearest
# days and times that can, instead of after every field.
ASIDE_ERRORS = frozenset(
    {"not_tuesday", "past_date", "closed_day", "day_over", "unavailable_time", "slot_full"}
)


def _first_or_last_free(t: TrialTurn, state: TrialState) -> TrialExtraction:
    """The extraction with "o primeiro horário (que tiver)" or "o último" read as the first or
    last class of the day that has not started and has a seat (the rules alone know only the
    pack's class times, so they read 07:00 at two in the afternoon). No preference
    ("qualquer horário", "tanto faz" when the time is asked) and no time given is the first
    of those in the part of the day wished for, which the confirmation then asks about."""
    ext = t.extraction
    which = slot_preference(t.text, time_asked=t.before.asked == "time")
    day = parse_date(ext.desired_date or state.desired_date)
    if which is None or day is None or (which == "any" and ext.desired_time is not None):
        return ext
    part = (ext.desired_period or state.desired_period) if which == "any" else None
    times = free_times(day, now_local=t.now_local, config=t.config, seats_taken=t.seats, part=part)
    if not times:
        return ext
    return ext.model_copy(update={"desired_time": times[-1] if which == "last" else times[0]})


def _the_writers_own(t: TrialTurn, state: TrialState, ext: TrialExtraction) -> TrialExtraction:
    """The extraction without what the writer tells of themselves while booking for someone
    else ("sou a Carla, mãe dele", "me chamo Carla, tenho 38"): the name is the contact's and
    the age said in the first person the writer's, neither the student's (the parent's name
    became the child's, and was asked about as the student). A message that turns the booking
    to the writer ("é pra mim mesmo", "eu e ele") keeps them as the student's."""
    if not state.for_someone_else or ext.for_someone_else is False:
        return ext
    if includes_writer(t.text) or for_the_writer(t.text):
        return ext
    own = writer_name(t.text, t.before.asked == "nome")
    if own is None:
        return ext
    updates: dict[str, Any] = {}
    if ext.nome == own:
        updates = {"nome": None, "contact_name": own}
    if ext.idade is not None:
        today = t.now_local.date()
        asked_age = t.before.asked == "idade"
        updates["idade"] = extract_age(without_writer_age(t.text), asked_age, today=today)
    return ext.model_copy(update=updates)


def booking_flow(t: TrialTurn, state: TrialState, ctx: ContextState) -> Reply:
    ext = _the_writers_own(t, state, _first_or_last_free(t, state))
    withheld = _withheld(t, state, ctx, ext)
    if withheld is not None:
        return withheld
    if ext.confirmed is False and not ext.has_data() and state.stage != "awaiting_confirmation":
        # A plain refusal while a field is asked ("não quero mais", "agora não") declines the
        # booking: asking the same question again would count it as a failed answer and end
        # in a handoff to a person, as if the bot could not understand a clear "no".
        return stop_flow(state, ctx)
    if state.stage in ("collect_client_info", "ask_date"):
        if (waiting := _put_off(t, state, ext)) is not None:
            return Reply(state.model_copy(update={"deferred": True}), ctx, **waiting)
        state = state.model_copy(update={"deferred": False})
    if t.idle and t.answered_elsewhere and not ext.has_data() and ext.confirmed is None:
        # After the booking talk ended, a question is only a question: the other service's
        # answer is the reply, not a new round of booking questions.
        return Reply(state, ctx, text="")
    age_error = validate_age(ext.idade, t.config).error if ext.idade is not None else None
    merged = _merge(state, ext.model_copy(update={"idade": None}) if age_error else ext)
    missing = merged.missing_client_field()
    if age_error == "too_young":
        # A rule, not a misread: explain it once and stop asking (the person may book for
        # someone else next); the age is not kept.
        refused = merged.model_copy(update={"stage": "collect_client_info", "idade": None})
        return Reply(
            refused, ctx, key="trial_too_young", values={"idade": ext.idade}, error=age_error
        )
    if age_error is not None:
        stage = "collect_client_info" if missing else merged.stage
        return Reply(
            merged.model_copy(update={"stage": stage}),
            ctx,
            key="trial_invalid_age",
            asks="idade",
            error="invalid_age",
        )
    if missing is not None:
        collecting = merged.model_copy(update={"stage": "collect_client_info"})
        return _ask_client(t, collecting, ctx, missing)
    if ext.time_bound is not None and ext.desired_time is None:
        return _within_bound(t, merged, ctx, ext.time_bound)
    cannot = t.refused_day
    offered = merged.stage == "awaiting_confirmation"
    if cannot is not None and ext.desired_date in (None, cannot) and not offered:
        # At the confirmation the "não" refuses the class offered, as any no there does.
        return _day_refused(t, merged, ctx, cannot)
    same_slot = (merged.desired_date, merged.desired_time) == (
        state.desired_date,
        state.desired_time,
    )
    if merged.stage == "awaiting_confirmation" and (not ext.mentions_slot() or same_slot):
        if ext.confirmed is True:
            return _book(t, merged, ctx)
        corrected = [f for f in CLIENT_FIELDS if getattr(merged, f) != getattr(state, f)]
        if ext.confirmed is False and corrected:
            # "não, meu nível é avançado": the "no" is about the field corrected, not
            # the class: the slot stays and the corrected summary is asked again.
            return Reply(
                merged,
                ctx,
                key=for_student(t, merged, "trial_ask_confirmation"),
                asks="confirmation",
                noted=corrected,
            )
        if ext.confirmed is False:
            declined = merged.model_copy(
                update={
                    "stage": "ask_date",
                    "desired_date": None,
                    "desired_time": None,
                    "declined_date": merged.desired_date,
                    "declined_time": merged.desired_time,
                }
            )
            return Reply(declined, ctx, key="trial_confirmation_declined", asks="date")
        if t.question:
            # A question at the confirmation ("tem de manhã?") gets the slot and the other
            # times: a yes still books it, another time moves it.
            return Reply(merged, ctx, key="trial_reask_confirmation", asks="time")
        return Reply(
            merged,
            ctx,
            key="trial_confirmation_unclear",
            asks="confirmation",
            noted=_noted(t, merged),
        )
    return _check_slot(t, merged, ctx)


def _withheld(
    t: TrialTurn, state: TrialState, ctx: ContextState, ext: TrialExtraction
) -> Reply | None:
    """The reply when the person prefers not to give the field asked ("prefiro não dizer"):
    not a no to the booking, which would stop it, but why the field is needed
    (``trial_why_<field>``), asked once more; None otherwise."""
    asked = t.before.asked
    pattern = t.config.withheld
    if asked not in ASK_CLIENT or ext.has_data() or not pattern:
        return None
    if not re.search(pattern, normalize(t.text)):
        return None
    return Reply(state, ctx, key=f"trial_why_{asked}", asks=asked)


def _put_off(t: TrialTurn, state: TrialState, ext: TrialExtraction) -> dict[str, Any] | None:
    """The reply when the person puts the answer off ("ainda não sei o dia, vou ver e te
    falo"), or acknowledges after doing so ("ok"): what is still missing is said once and not
    asked again, so neither counts as a failed answer; None otherwise."""
    if ext.has_data() or t.question:
        return None
    pattern = t.config.deferral
    if pattern and re.search(pattern, normalize(t.text)):
        fields = [t.pack.text(f"trial_field_{f}", seed=t.seed) for f in missing_fields(state)]
        return {"key": "trial_deferred", "values": {"falta": join_list(fields, t.config)}}
    if state.deferred and ext.confirmed is not False:
        return {"key": "trial_deferred_ack"}
    return None


def _merge(state: TrialState, ext: TrialExtraction) -> TrialState:
    """The safe merge of the trial fields, plus who writes when the student is someone else.

    After a "não" at the confirmation, a correction of one half of the slot keeps the other
    half of the refused one: "o horário, às 20h" is the same day at 20:00."""
    merged = merge_trial(state, ext)
    updates: dict[str, Any] = {}
    if ext.mentions_slot() and (state.declined_date or state.declined_time):
        updates = {"declined_date": None, "declined_time": None}
        if merged.desired_date is None:
            updates["desired_date"] = state.declined_date
        if merged.desired_time is None:
            updates["desired_time"] = state.declined_time
    if ext.contact_name:
        updates["contact_name"] = ext.contact_name
    if ext.for_someone_else is not None:
        updates["for_someone_else"] = ext.for_someone_else
    return merged.model_copy(update=updates) if updates else merged


def _noted(t: TrialTurn, state: TrialState) -> list[Asked]:
    """The fields this message set or changed, for saying them back (a field emptied, as the
    next person's booking empties the last one's data, has nothing to say)."""
    before = t.before
    changed: list[Asked] = [
        f
        for f in ("nome", "idade", "nivel")
        if getattr(state, f) is not None and getattr(state, f) != getattr(before, f)
    ]
    if state.desired_date is not None and state.desired_date != before.desired_date:
        changed.append("date")
    if state.desired_time is not None and state.desired_time != before.desired_time:
        changed.append("time")
    return changed


def _ask_client(t: TrialTurn, state: TrialState, ctx: ContextState, missing: Asked) -> Reply:
    """Ask the first missing client field: in full the first time; after a question in one
    line; the second time by saying exactly what is missing, with an example."""
    again = t.before.asked == missing
    if missing == "nome" and state.contact_name not in (None, t.before.contact_name):
        # "sou a Carla, mãe dele": the writer's name is heard, and the student's asked.
        key = "trial_ask_name_writer"
    elif again and t.question:
        key = f"trial_reask_{missing}"
    elif again:
        key = f"trial_still_need_{missing}"
    else:
        key = ASK_CLIENT[missing]
    noted = _noted(t, state)
    if not again and missing != "nome":
        # "Prazer, Ana! Quantos anos você tem?" already says back the field just given.
        noted = [f for f in noted if f not in ("nome", "idade", "nivel")]
    aside, values = _slot_aside(t, state)
    if aside is not None:
        noted = [f for f in noted if f not in ("date", "time")]
    reply = Reply(state, ctx, key=for_student(t, state, key), asks=missing, noted=noted)
    reply.aside, reply.values = aside, values
    return reply


def _validated(t: TrialTurn, state: TrialState) -> ValidationResult:
    """The slice's day and time checked against the classes, seats and the calendar now."""
    return validate_slot(
        state.desired_date,
        state.desired_time,
        now_local=t.now_local,
        config=t.config,
        seats_taken=t.seats,
    )


def _slot_aside(t: TrialTurn, state: TrialState) -> tuple[str | None, dict[str, Any]]:
    """What to say about the day or time this message gave, before asking a client field:
    why it cannot be booked and the nearest that can, or — asked as a question ("dia 29 vocês
    abrem?") — that the day has classes, at which times."""
    ext = t.extraction
    if not ext.mentions_slot() or state.desired_date is None:
        return None, {}
    result = _validated(t, state)
    code = result.error
    if code in ASIDE_ERRORS:
        return f"trial_aside_{code}", _wished_slot_values(t, state, code)
    day = parse_date(state.desired_date)
    if t.question and day is not None and code in (None, "missing_time"):
        times = free_times(
            day,
            now_local=t.now_local,
            config=t.config,
            seats_taken=t.seats,
            part=state.desired_period,
        )
        if times:
            shown = show_date(state.desired_date, t.config)
            return "trial_aside_open_day", {"data": shown, "horas": join_list(times, t.config)}
    return None, {}


def for_student(t: TrialTurn, state: TrialState, key: str) -> str:
    """The variant of ``key`` that talks about the student, when someone else is writing."""
    other = f"{key}_other"
    return other if state.for_someone_else and t.pack.has_text(other) else key


def _check_slot(t: TrialTurn, state: TrialState, ctx: ContextState) -> Reply:
    result = _validated(t, state)
    if result.ok:
        return Reply(
            state.model_copy(update={"stage": "awaiting_confirmation"}),
            ctx,
            key=for_student(t, state, "trial_ask_confirmation"),
            asks="confirmation",
        )
    code = result.error or ""
    asks = ERROR_FIELD.get(code, "date")
    pending = code in ("missing_date", "missing_time")
    if pending and t.question and t.before.asked == asks:
        key = f"trial_reask_{asks}"
    elif code == "missing_date" and t.before.asked not in ("date", "time"):
        key = "trial_ask_date"
    else:
        key = error_key(code)
    return Reply(
        state.model_copy(update={"stage": "ask_date"}),
        ctx,
        key=key,
        values=_wished_slot_values(t, state, code),
        asks=asks,
        error=code,
        noted=_noted(t, state)
        if t.before.asked in CLIENT_FIELDS and pending
        else _corrected(t, state),
    )


def _within_bound(t: TrialTurn, state: TrialState, ctx: ContextState, bound: TimeBound) -> Reply:
    """A limit on the time ("e depois das 20h?", "antes das 18h tem?", "tem mais tarde?")
    answered with the classes of the day within it: the only one is proposed for the
    confirmation, several are offered, and with none the reply says so (where the classes end,
    or that those are full) and offers the free times there are. The limit's hour is what the
    person asks past, never the hour booked. The day is the one wished for when it has classes
    to come, else the next class day."""
    config = t.config
    day = parse_date(state.desired_date)
    if day is None or day.weekday() != config.weekday or not _free(t, day):
        day = next_open_day(now_local=t.now_local, config=config)
    free = _free(t, day)
    within = [hour for hour in free if bound.admits(hour)]
    shown = state.model_copy(
        update={"stage": "ask_date", "desired_date": day.isoformat(), "desired_time": None}
    )
    inclusive = "_inclusive" if bound.inclusive else ""
    limit = t.pack.text(f"trial_bound_{bound.side}{inclusive}", seed=t.seed, hora=bound.hour)
    values: dict[str, Any] = {"limite": limit, "horas": join_list(within, config)}
    if len(within) == 1:
        reply = _check_slot(t, shown.model_copy(update={"desired_time": within[0]}), ctx)
        reply.aside, reply.values = "trial_bound_one", {**reply.values, **values}
        return reply
    if within:
        return Reply(shown, ctx, key="trial_bound_options", values=values, asks="time")
    if any(bound.admits(hour) for hour in config.times):
        key = "trial_bound_full"
    else:
        # No class at all within the limit: the last (or first) class says where they end.
        key = f"trial_bound_none_{bound.side}"
        values["borda"] = config.times[-1] if bound.side == "after" else config.times[0]
    values["opcoes"] = slot_values(t, day.isoformat(), None, t.seats)["opcoes"]
    return Reply(shown, ctx, key=key, values=values, asks="time")


def _day_refused(t: TrialTurn, state: TrialState, ctx: ContextState, refused: str) -> Reply:
    """A day the person cannot make, said before a slot is offered ("não vai dar terça",
    "dia 10 não consigo"): not a stop to the booking, nor a day lost, but the class days with
    room after it, offered."""
    cleared = state.model_copy(update={"stage": "ask_date"})
    if state.desired_date == refused:
        cleared = cleared.model_copy(update={"desired_date": None, "desired_time": None})
    day = parse_date(refused) or t.now_local.date()
    following = next_day_with_room(day, now_local=t.now_local, config=t.config, seats_taken=t.seats)
    if following is None:
        values = {"opcoes": t.pack.text("trial_no_options", seed=t.seed)}
    else:
        values = slot_values(t, following[0].isoformat(), None, t.seats)
    values["recusada"] = show_date(refused, t.config)
    return Reply(cleared, ctx, key="trial_day_refused", values=values, asks="date")


def _free(t: TrialTurn, day: date) -> list[str]:
    return free_times(day, now_local=t.now_local, config=t.config, seats_taken=t.seats)


def _corrected(t: TrialTurn, state: TrialState) -> list[Asked]:
    """The client fields this message changed from a value already kept: a correction ("é
    Lukas com K", another student) is said back, so the person sees it was taken."""
    return [f for f in _noted(t, state) if f in CLIENT_FIELDS and getattr(t.before, f) is not None]


def error_key(code: str) -> str:
    return f"trial_{code}" if code in ERROR_FIELD else "trial_validation_failed"


def slot_values(
    t: TrialTurn,
    desired_date: str | None,
    desired_time: str | None,
    seats: SeatsTaken,
    *,
    code: str | None = None,
    part: PartOfDay | None = None,
) -> dict[str, Any]:
    """A date and time as shown in texts, with the free times around that date (for a day
    that is not a class day, the class days nearest to it); the class times and free times
    offered are those of the part of the day wished for (``part``, "terça à noite")."""
    day = parse_date(desired_date)
    shown: dict[str, Any] = {
        "now_local": t.now_local,
        "config": t.config,
        "seats_taken": seats,
        "pack": t.pack,
        "seed": t.seed,
        "part": part,
    }
    if code == "not_tuesday" and day is not None:
        options = class_day_options(day, **shown)
    else:
        options = free_options(day, **shown)
    return {
        "data": show_date(desired_date, t.config),
        "hora": desired_time or "",
        "horarios": join_list(class_times(t.config, part), t.config),
        "opcoes": options,
        "motivo": (t.config.calendar.closed_reason(day) or "") if day is not None else "",
    }


def _wished_slot_values(t: TrialTurn, state: TrialState, code: str | None) -> dict[str, Any]:
    """``slot_values`` of the date, time and part of the day the booking has."""
    return slot_values(
        t, state.desired_date, state.desired_time, t.seats, code=code, part=state.desired_period
    )


def _book(t: TrialTurn, state: TrialState, ctx: ContextState) -> Reply:
    checked = _check_slot(t, state, ctx)
    if checked.error is not None:
        return checked
    call = ToolCall(
        tool="create_booking",
        args={
            "date": state.desired_date,
            "time": state.desired_time,
            "nome": state.nome,
            "idade": state.idade,
            "nivel": state.nivel,
            "idempotency_key": t.seed,
        },
    )
    return after_gate(t, state, ctx, ask_gate(t, ctx, call, confirmed=False))


def stop_flow(state: TrialState, ctx: ContextState) -> Reply:
    return Reply(state.without_booking(), ctx, key="trial_flow_stopped")


def handoff(
    state: TrialState, ctx: ContextState, *, reason: str, field: str | None = None
) -> Reply:
    handed, event = state.handed_off(reason, field)
    key = {"asked": "trial_handoff", "upset": "trial_handoff_upset"}.get(
        reason, "trial_handoff_attempts"
    )
    return Reply(handed, ctx, key=key, events=[event], handoff=reason)
