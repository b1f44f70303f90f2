"""The dialog corpus is what it says it is: valid, large enough, and runnable on one system
(dates resolvable on a Tuesday, no class over its seats)."""

from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path

from orquestra.scenario_schema import Scenario
from orquestra.scenarios import find_files, load

CORPUS = Path(__file__).resolve().parents[1] / "data" / "dialogs"
SEATS = 6


def dialogs() -> list[Scenario]:
    loaded, invalid = load(find_files([str(CORPUS)]))
    assert invalid == []
    return [s for f in loaded for s in f.scenarios]


def final_state(dialog: Scenario) -> dict[str, object]:
    state: dict[str, object] = {}
    for step in dialog.steps:
        state.update(step.expect.state)
    return state


def test_sixty_dialogs_with_a_persona_and_a_goal_half_of_them_bookings() -> None:
    corpus = dialogs()
    assert len(corpus) >= 60
    assert all(d.persona and d.goal and d.start is not None for d in corpus)
    assert sum(d.goal == "booked" for d in corpus) >= 30
    assert len({d.name for d in corpus}) == len(corpus)


def test_a_booking_goal_names_the_student_the_tuesday_and_the_time() -> None:
    seats: Counter[tuple[object, object]] = Counter()
    for dialog in dialogs():
        state = final_state(dialog)
        if dialog.goal != "booked":
            continue
        assert state.get("trial.stage") == "booked", dialog.name
        assert "trial.nome" in state and "trial.desired_time" in state, dialog.name
        day = date.fromisoformat(str(state["trial.desired_date"]))
        assert day.weekday() == 1 and dialog.start is not None, dialog.name
        assert day >= dialog.start.date(), dialog.name
        seats[(day, state["trial.desired_time"])] += 1
    assert max(seats.values()) <= SEATS


def test_an_enrollment_goal_names_the_request_the_person_asked_for() -> None:
    """Enrolled is a request made with the person's plan, days, time and way to pay; a
    conversation handed to staff before that did not reach it."""
    for dialog in dialogs():
        if dialog.goal != "enrolled":
            continue
        state = final_state(dialog)
        assert state.get("enrollment.stage") == "requested", dialog.name
        fields = ("enrollment.plan", "enrollment.days", "enrollment.time", "enrollment.payment")
        assert all(name in state for name in fields), dialog.name


def test_every_dialog_that_is_not_a_plain_question_checks_its_final_state() -> None:
    for dialog in dialogs():
        questions = sum(len(step.expect.reply) for step in dialog.steps)
        if dialog.goal == "answered":
            assert questions >= 1, dialog.name
        else:
            assert dialog.steps[-1].expect.state, dialog.name
