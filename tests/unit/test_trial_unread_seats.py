"""The trial's plan before the shell has read the seats (``UNREAD_SEATS``): a turn that never
looks at them plans as it would with them; one that looks (a time offered, a slot checked)
raises ``SeatsNeeded``, and the shell reads the seats and plans again (services/trial/app.py)."""

from __future__ import annotations

import pytest

from services.trial.validators import UNREAD_SEATS, SeatsNeeded
from tests.unit.test_trial_flow import Chat, at_stage

SLOT_ASKED = at_stage("ask_date", desired_date="2026-02-10", asked="time")


def same_turn_with(seats: object, chat: Chat, text: str) -> str:
    """The reply ``chat`` gives ``text`` planned with ``seats``, the chat left as it was."""
    twin = Chat(state=chat.state, context=chat.context)
    twin.turns = chat.turns
    twin.seats = seats  # type: ignore[assignment]
    plan = twin.plan_for(text)
    assert plan.outcome is not None
    return plan.outcome.text


@pytest.mark.parametrize(
    ("state", "text"),
    [
        (None, "oi, queria saber da aula experimental"),
        (at_stage("collect_client_info", nome=None, idade=None, nivel=None), "Carla"),
        (at_stage("collect_client_info", idade=None, nivel=None), "tenho 41"),
    ],
)
def test_a_turn_that_asks_for_a_client_field_needs_no_seats(state: object, text: str) -> None:
    chat = Chat(state=state)  # type: ignore[arg-type]
    unread = same_turn_with(UNREAD_SEATS, chat, text)
    assert unread == same_turn_with({}, chat, text)


@pytest.mark.parametrize(
    ("state", "text"),
    [
        (at_stage("collect_client_info", nivel=None), "sou iniciante"),  # the times offered
        (at_stage("ask_date"), "na terça dia 10"),  # that day's free times
        (SLOT_ASKED, "às 19h"),  # the slot checked
    ],
)
def test_a_turn_that_offers_or_checks_a_time_asks_for_the_seats(state: object, text: str) -> None:
    chat = Chat(state=state)  # type: ignore[arg-type]
    with pytest.raises(SeatsNeeded):
        same_turn_with(UNREAD_SEATS, chat, text)
    assert same_turn_with({}, chat, text)


def test_the_seats_read_then_decide_the_plan() -> None:
    chat = Chat(state=SLOT_ASKED)
    full = {("2026-02-10", "19:00"): chat.config.seats_per_slot}
    assert same_turn_with(full, chat, "às 19h") != same_turn_with({}, chat, "às 19h")


def test_unread_seats_answer_no_look_at_all() -> None:
    with pytest.raises(SeatsNeeded):
        UNREAD_SEATS.get(("2026-02-10", "19:00"))
    with pytest.raises(SeatsNeeded):
        dict(UNREAD_SEATS)
