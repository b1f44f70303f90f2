"""What a booking reply adds for what the message asked besides its data.

Several people in one booking: the trial books one person at a time, says so when it hears
a group ("pra mim e pro meu marido", "somos 3 amigas"), naming the others it was told, and
offers the next booking right after one is made.

Only the acknowledgement lives here: who the student of this booking is stays the slots'
reading (``extraction``); the names of the others are those the message gave besides it.
"""

from __future__ import annotations

import re

from services.trial.models import TrialState
from services.trial.replies import join_list
from services.trial.turn import TrialTurn
from shared.nlu.normalize import normalize
from shared.nlu.party import party_in


def _others(state: TrialState) -> list[str]:
    student = normalize(state.nome or "").split()[:1]
    return [n for n in state.party_names if normalize(n).split()[:1] != student]


def _said(t: TrialTurn, key: str, **values: object) -> str:
    return t.pack.text(key, seed=t.seed, **values)


def with_party(t: TrialTurn, state: TrialState, text: str) -> tuple[TrialState, str]:
    """The state and text once the turn's group is taken into account: a group heard for the
    first time is noted (said before the reply's question); a booking just made with a group
    noted offers the next person's (said after the confirmation), once."""
    if state.stage == "booked" and t.before.stage != "booked" and state.party_size:
        others = _others(state)
        offer = (
            _said(t, "trial_party_next_named", outros=join_list(others, t.config))
            if others
            else _said(t, "trial_party_next")
        )
        done = state.model_copy(update={"party_size": None, "party_names": []})
        return done, f"{text} {offer}".strip()
    if state.stage == "booked" or state.party_size is not None:
        return state, text
    heard = party_in(t.text)
    if heard is None:
        return state, text
    noted = state.model_copy(
        update={"party_size": heard.size or 2, "party_names": list(heard.names)}
    )
    others = _others(noted)
    if others:
        note = _said(t, "trial_party_named", outros=join_list(others, t.config))
    elif (heard.size or 2) > 2:
        note = _said(t, "trial_party_more", outras=(heard.size or 2) - 1)
    else:
        note = _said(t, "trial_party_one_more")
    return noted, f"{note} {text}".strip()


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
