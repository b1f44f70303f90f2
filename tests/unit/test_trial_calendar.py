"""The business calendar (shared/trial/calendar.py) and the trial flow around it: no trial is
offered or booked on a day the business is closed, and the bot says why.

Carnival 2027 falls on Tuesday 2027-02-09; the clock is Thursday 2027-02-04 10:00 in São Paulo,
so that Carnival Tuesday is the nearest class day.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest
from pydantic import ValidationError

from services.trial.models import ContextState
from services.trial.schedule import class_days, next_open_day
from services.trial.validators import validate_slot
from shared.trial.calendar import BusinessCalendar, ClosedDay
from tests.unit.test_trial_flow import CONFIG, TZ, Chat, at_stage

BEFORE_CARNIVAL = datetime(2027, 2, 4, 10, 0, tzinfo=TZ)
CARNIVAL = date(2027, 2, 9)
RENOVATION = {"day": "2027-03-02", "reason": "reforma das quadras"}
RENOVATING = CONFIG.model_copy(
    update={
        "calendar": CONFIG.calendar.model_copy(
            update={"closed_days": [*CONFIG.calendar.closed_days, ClosedDay(**RENOVATION)]}
        )
    }
)


def test_the_packs_calendar_closes_on_holidays_of_its_country_and_state() -> None:
    calendar = CONFIG.calendar
    assert calendar.closed_reason(CARNIVAL) == "Carnaval"
    assert calendar.closed_reason(date(2027, 9, 7)) == "Independência do Brasil"
    # São Paulo state's own holiday (Revolução Constitucionalista), from the package.
    assert calendar.closed_reason(date(2027, 7, 9)) is not None
    # The city's anniversary is listed by the pack, every year.
    assert calendar.closed_reason(date(2028, 1, 25)) == "aniversário de São Paulo"
    # An optional holiday the pack does not name stays open.
    assert calendar.is_open(date(2027, 2, 10))
    assert calendar.is_open(date(2027, 2, 16))


def test_listed_days_and_the_empty_calendar() -> None:
    calendar = BusinessCalendar.model_validate({"closed_days": [RENOVATION]})
    assert calendar.closed_reason(date(2027, 3, 2)) == "reforma das quadras"
    assert calendar.is_open(date(2028, 3, 2))
    assert calendar.is_open(CARNIVAL)
    assert BusinessCalendar().is_open(CARNIVAL)


@pytest.mark.parametrize(
    "bad",
    [
        {"country": "XX"},
        {"closed_days": [{"day": "2027-02-30", "reason": "x"}]},
        {"closed_days": [{"day": "amanhã", "reason": "x"}]},
        {"closed_days": [{"day": "03-02", "reason": ""}]},
    ],
)
def test_a_wrong_calendar_fails_at_load(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        BusinessCalendar.model_validate(bad)


def test_closed_class_days_are_never_offered_nor_valid() -> None:
    result = validate_slot(
        "2027-02-09", "19:00", now_local=BEFORE_CARNIVAL, config=CONFIG, seats_taken={}
    )
    assert result.error == "closed_day"
    assert next_open_day(now_local=BEFORE_CARNIVAL, config=CONFIG) == date(2027, 2, 16)
    assert CARNIVAL in class_days(BEFORE_CARNIVAL.date(), CONFIG)


def test_asking_for_the_date_says_why_the_next_tuesday_is_offered() -> None:
    chat = Chat(now=BEFORE_CARNIVAL, state=at_stage("collect_client_info", asked="nivel"))
    out = chat.say("iniciante")
    assert out.journal["reply"] == "trial_ask_date"
    assert "Na terça, 09/02 não abrimos (Carnaval)." in out.text
    assert "A próxima é terça, 16/02" in out.text


def test_a_holiday_tuesday_is_refused_with_the_reason_and_the_next_ones() -> None:
    chat = Chat(now=BEFORE_CARNIVAL, state=at_stage("ask_date", asked="date"))
    out = chat.say("terça que vem às 19h")
    assert out.journal["validation"] == "closed_day"
    assert out.state.stage == "ask_date"
    assert "Carnaval" in out.text
    assert "terça, 16/02 às 07:00, 18:00, 19:00 e 20:00" in out.text
    # The next one is taken from the day refused.
    out = chat.say("pode ser a outra então")
    assert (out.state.desired_date, out.state.desired_time) == ("2027-02-16", "19:00")
    assert out.state.stage == "awaiting_confirmation"


def test_a_day_the_pack_lists_is_refused_and_never_booked() -> None:
    state = at_stage("awaiting_confirmation", desired_date="2027-03-02", desired_time="18:00")
    chat = Chat(now=BEFORE_CARNIVAL, state=state, config=RENOVATING)
    plan = chat.plan_for("sim")
    assert plan.tool_call is None
    assert plan.outcome is not None
    assert plan.outcome.journal["validation"] == "closed_day"
    assert "reforma das quadras" in plan.outcome.text
    assert "terça, 09/03" in plan.outcome.text


def test_a_holiday_said_before_the_name_is_explained_at_once() -> None:
    chat = Chat(now=BEFORE_CARNIVAL)
    out = chat.say("queria marcar a experimental pro dia 9 de fevereiro às 18h")
    assert out.journal["reply"] == "trial_ask_name"
    assert "Carnaval" in out.text and "terça, 16/02" in out.text
    assert "Anotado" not in out.text


def test_a_booking_is_not_moved_to_a_holiday() -> None:
    state = at_stage(
        "booked",
        desired_date="2027-02-16",
        desired_time="19:00",
        booking_id="AE-7K3Q9P",
        booking_created=True,
    )
    context = ContextState().with_value("active_booking_id", "AE-7K3Q9P", BEFORE_CARNIVAL)
    chat = Chat(now=BEFORE_CARNIVAL, state=state, context=context)
    out = chat.say("quero remarcar para terça dia 9")
    assert out.journal["validation"] == "closed_day"
    assert out.state.pending_tool is None
    assert "Carnaval" in out.text
    assert (out.state.desired_date, out.state.booking_id) == ("2027-02-16", "AE-7K3Q9P")
