"""A group booked one person at a time.

The trial books one person per booking: it says so when it hears a group ("pra mim e pro meu
marido", "somos 3 amigas"), naming the others it was told, and once a booking is made it offers
the next person's, in the same class. While that offer stands (``TrialState.next_person``), a
yes, the person's data or a request to book them ("marca ele no mesmo horário") starts their
booking with what the group's message said of them (their age and level, read again from the
words around their name) and the class just booked, unless the message names another; asked
whether they are booked already ("o Dario já está marcado?"), the bot says not yet and offers
again; a no lets the offer go. Every booking made is kept by person (``TrialState.booked``),
so "a Bia tá agendada?" is answered about Bia's booking, not the last one.

Who the student of a booking is stays the slots' reading (``extraction``); the names of the
others are those the group's message gave besides it.
"""

from __future__ import annotations

import re

from services.trial.before_booking import booking_flow
from services.trial.models import BookedClass, ContextState, PartyMember, TrialState
from services.trial.replies import join_list
from services.trial.turn import Reply, TrialTurn
from shared.nlu.normalize import normalize
from shared.nlu.party import (
    member_facts,
    names_a_relative,
    party_in,
    said_of_all,
    writer_in_group,
)
from shared.trial.config import TrialConfig

# The class already booked, asked for again ("no mesmo horário", "junto com ela").
_SAME_CLASS = re.compile(r"\b(mesm[oa]s?|junt[oa]s?|igual)\b")
_MINE = frozenset({"minha", "meu", "mim", "eu"})
_PRONOUNS = frozenset({"ele", "ela", "dele", "dela", "o outro", "a outra"})


def _first(name: str | None) -> str:
    return next(iter(normalize(name or "").split()), "")


def _said(t: TrialTurn, key: str, **values: object) -> str:
    return t.pack.text(key, seed=t.seed, **values)


def _member(state: TrialState, name: str | None, config: TrialConfig) -> PartyMember:
    """What the group's message said of ``name`` (``shared.nlu.party.member_facts``)."""
    if name is None:
        return PartyMember()
    text = state.party_text or ""
    idade, nivel = member_facts(text, name, state.party_names, config.levels_by_time)
    return PartyMember(nome=name, idade=idade, nivel=nivel)


def _booked_now(state: TrialState) -> TrialState:
    """The slice with the booking just made kept by person."""
    if state.booking_id is None or any(b.booking_id == state.booking_id for b in state.booked):
        return state
    entry = BookedClass(nome=state.nome or "", booking_id=state.booking_id)
    return state.model_copy(update={"booked": [*state.booked, entry]})


def _not_booked(state: TrialState) -> list[str]:
    booked = {_first(b.nome) for b in state.booked} | {_first(state.nome)}
    return [n for n in state.party_names if _first(n) not in booked]


def with_party(t: TrialTurn, state: TrialState, text: str) -> tuple[TrialState, str]:
    """The state and text once the turn's group is taken into account: a group heard for the
    first time is noted (said before the reply's question); a booking just made is kept by
    person and, with people of the group still to book, offers the next one's (said after the
    confirmation)."""
    if state.stage == "booked" and state.booking_id not in (None, t.before.booking_id):
        # A booking just made (the group's next one is made from a booked slice too).
        state = _booked_now(state)
        remaining = (state.party_size or 0) - len(state.booked)
        if remaining < 1:
            return state.model_copy(update={"party_size": None, "party_names": []}), text
        others = _not_booked(state)
        offer = (
            _said(t, "trial_party_next_named", outros=join_list(others, t.config))
            if others
            else _said(t, "trial_party_next")
        )
        offered = state.model_copy(
            update={"next_person": _member(state, others[0] if others else None, t.config)}
        )
        return offered, f"{text} {offer}".strip()
    if state.stage == "booked":
        return state, text
    if state.party_size is not None:
        return _heard_later(t, state), text
    heard = party_in(t.text)
    if heard is None:
        return state, text
    student = _first(state.nome)
    young = [
        name
        for name in heard.names
        if _first(name) != student
        and (age := member_facts(t.text, name, heard.names)[0]) is not None
        and age < t.config.min_age
    ]
    too_young = _said(t, "trial_party_too_young", nomes=join_list(young, t.config)) if young else ""
    size = (heard.size or 2) - len(young)
    if size < 2:
        return state, f"{too_young} {text}".strip()
    noted = state.model_copy(
        update={
            "party_size": size,
            "party_names": [n for n in heard.names if n not in young],
            "party_text": t.text,
            # "pros meus dois filhos": the writer books for others only.
            "for_someone_else": state.for_someone_else or not writer_in_group(t.text),
        }
    )
    others = _not_booked(noted)
    if others:
        note = _said(t, "trial_party_named", outros=join_list(others, t.config))
    elif size > 2:
        note = _said(t, "trial_party_more", outras=size - 1)
    else:
        note = _said(t, "trial_party_one_more")
    return noted, f"{too_young} {_fits(t, size)} {note} {text}".strip()


def _heard_later(t: TrialTurn, state: TrialState) -> TrialState:
    """The group as a later message of its booking tells of it: its people named, when it was
    heard without names ("eu e minha esposa", then "sou o Rui, 41, e ela é a Ana, 38"), or
    something said of all of them ("os dois nunca jogaram"), which the next ones keep."""
    heard = party_in(t.text)
    if not state.party_names and heard is not None and heard.names:
        size = max(state.party_size or 2, len(heard.names))
        update = {"party_names": list(heard.names), "party_text": t.text, "party_size": size}
        return state.model_copy(update=update)
    if state.party_names and said_of_all(t.text):
        return state.model_copy(update={"party_text": f"{state.party_text or ''}\n{t.text}"})
    return state


def _fits(t: TrialTurn, size: int | None) -> str:
    """Whether a group of ``size`` fits in one class (its seats), said when the group is
    heard: "somos 4 amigas, dá pra fazer juntas?" is answered before anything is asked."""
    seats = t.config.seats_per_slot
    if size is None or size < 2:
        return ""
    key = "trial_party_fits" if size <= seats else "trial_party_too_many"
    return _said(t, key, vagas=seats, pessoas=size)


def _names_next(t: TrialTurn, nxt: PartyMember) -> bool:
    """Whether the message speaks of the person offered: their name, or "ele"/"ela"."""
    words = normalize(t.text).split()
    first = _first(nxt.nome)
    return bool(first and first in words) or any(
        " ".join(words[i : i + len(p.split())]) == p for p in _PRONOUNS for i in range(len(words))
    )


def booked_named(t: TrialTurn, state: TrialState, *, current: bool = False) -> BookedClass | None:
    """A booking of this conversation for someone the message names ("a Bia tá agendada?"
    after Miguel's booking), other than the slice's own unless ``current``; None if none."""
    words = set(normalize(t.text).split())
    # "e a minha?" from the one who booked for the others: the writer's own booking.
    names = {_first(state.contact_name)} if words & _MINE and state.for_someone_else else set()
    return next(
        (
            b
            for b in reversed(state.booked)
            if (current or b.booking_id != state.booking_id)
            and (_first(b.nome) in words or _first(b.nome) in names)
        ),
        None,
    )


def another_person(t: TrialTurn, state: TrialState) -> PartyMember | None:
    """Someone else to book once this conversation's booking is made ("quero marcar também
    pra minha amiga Bruna, 30", "posso levar uma amiga junto?"): a booking message for a
    person other than the booked ones, by their name or as someone else; None otherwise."""
    ext = t.extraction
    if state.stage != "booked" or t.action is not None or "trial" not in t.intents:
        return None
    booked = {_first(b.nome) for b in state.booked} | {_first(state.nome)}
    person = ext.for_someone_else or ext.idade is not None or ext.nivel is not None
    if ext.nome and _first(ext.nome) not in booked and person:
        return PartyMember(nome=ext.nome, idade=ext.idade, nivel=ext.nivel)
    if not ext.nome and (ext.for_someone_else or names_a_relative(t.text)):
        return PartyMember(idade=ext.idade, nivel=ext.nivel)
    return None


def _with_heard(nxt: PartyMember, t: TrialTurn) -> PartyMember:
    """The next person with what this message says of them ("ele é iniciante também")."""
    ext = t.extraction
    return nxt.model_copy(
        update={
            "idade": ext.idade if ext.idade is not None else nxt.idade,
            "nivel": ext.nivel or nxt.nivel,
            "nome": nxt.nome or ext.nome,
        }
    )


def next_person_turn(t: TrialTurn, state: TrialState, ctx: ContextState) -> Reply | None:
    """The turn while the next person of a group is offered: their status asked (not booked
    yet: offered again), a no (the offer goes), or an acceptance (their booking starts). None:
    the message is about something else (the booked class's status, a move, a cancel)."""
    nxt = state.next_person
    if nxt is None or t.code is not None or t.action in ("cancel", "reschedule", "handoff"):
        return None
    ext = t.extraction
    if t.action == "status":
        # "o Dario ficou marcado?" about a booked person is that booking's status.
        if booked_named(t, state, current=True) is not None or not _names_next(t, nxt):
            return None
        heard = state.model_copy(update={"next_person": _with_heard(nxt, t)})
        booked = join_list([b.nome for b in state.booked], t.config)
        values = {"nome": nxt.nome or "", "marcados": booked}
        key = "trial_party_not_yet" if nxt.nome else "trial_party_not_yet_unnamed"
        return Reply(heard, ctx, key=key, values=values, asks="confirmation")
    if ext.confirmed is False and not ext.has_data():
        return Reply(
            state.model_copy(update={"next_person": None}),
            ctx,
            key="trial_party_declined",
            values={"nome": nxt.nome or ""},
        )
    if t.question and t.answered_elsewhere and ext.confirmed is not True:
        # A question another service answers ("quanto é o plano de 2x?") leaves the offer
        # standing, and the reply is that answer alone.
        return Reply(state, ctx, text="")
    same = bool(_SAME_CLASS.search(normalize(t.text)))
    if not (ext.confirmed is True or ext.has_data() or same or "trial" in t.intents):
        return None
    return start_next(t, state, ctx, _with_heard(nxt, t))


def start_next(t: TrialTurn, state: TrialState, ctx: ContextState, member: PartyMember) -> Reply:
    """The next person's booking (a group's, or ``another_person``), begun with what is known
    of them and the class just booked (unless the message names another day or time); a yes
    in the same message books it."""
    writer_books_for_self = not state.for_someone_else
    fresh = state.model_copy(
        update={
            "stage": "awaiting_confirmation" if t.extraction.confirmed else "ask_date",
            "nome": member.nome,
            "idade": member.idade,
            "nivel": member.nivel,
            "contact_name": state.nome if writer_books_for_self else state.contact_name,
            "for_someone_else": True,
            "booking_id": None,
            "booking_created": False,
            "declined_date": None,
            "declined_time": None,
            "rescheduling": False,
            "pending_tool": None,
            "attempts": {},
            "next_person": None,
        }
    )
    return booking_flow(t, fresh, ctx)


def with_times(t: TrialTurn, state: TrialState, text: str) -> str:
    """A booking message that asks for the class times ("me passa os horários disponíveis")
    gets them before the next question, when the reply does not already say them."""
    if state.stage not in ("collect_client_info", "ask_date") or not t.config.times:
        return text
    if t.config.times[0] in text:
        return text
    normalized = normalize(t.text)
    if not any(re.search(p, normalized) for p in t.config.times_asked):
        return text
    times = join_list(list(t.config.times), t.config)
    return f"{t.pack.text('trial_times_answer', seed=t.seed, horarios=times)} {text}".strip()
