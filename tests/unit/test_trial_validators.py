"""Deterministic validation, class days and how dates and choices are shown."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from services.trial.models import TrialExtraction, TrialState
from services.trial.replies import free_options, join_list
from services.trial.schedule import (
    class_days,
    free_times,
    next_day_with_room,
    next_open_day,
    seat_lookup_dates,
)
from services.trial.validators import validate_age, validate_date_time, validate_slot
from shared.pack import load_pack
from shared.trial.config import TrialConfig, load_trial_config
from shared.trial.days import show_date

TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)  # a Thursday
PACK = load_pack("ctsmash")
CONFIG = load_trial_config(PACK)


def slot(d: str | None, t: str | None, *, seats: dict[tuple[str, str], int] | None = None) -> str:
    result = validate_slot(d, t, now_local=NOW, config=CONFIG, seats_taken=seats or {})
    return "ok" if result.ok else str(result.error)


def test_pack_section_matches_ct_smash() -> None:
    assert CONFIG.weekday == 1
    assert CONFIG.times == ["07:00", "18:00", "19:00", "20:00"]
    assert CONFIG.seats_per_slot == 6
    assert (CONFIG.min_age, CONFIG.adult_age, CONFIG.max_age) == (8, 18, 99)
    # The same question is asked at most twice; a second failed answer reaches a person.
    assert CONFIG.max_attempts == 2


def test_a_typo_in_the_pack_section_fails_loudly() -> None:
    raw = dict(PACK.sections["trial"], seat_per_slot=6)
    with pytest.raises(ValidationError):
        TrialConfig.model_validate(raw)
    with pytest.raises(ValidationError):
        TrialConfig.model_validate(dict(PACK.sections["trial"], times=["7h"]))


@pytest.mark.parametrize(
    ("d", "t", "expected"),
    [
        (None, "19:00", "missing_date"),
        ("10/02/2026", "19:00", "invalid_date_format"),
        ("2026-02-30", "19:00", "invalid_date_format"),
        ("20260210", "19:00", "invalid_date_format"),
        ("2026-02-11", "19:00", "not_tuesday"),
        ("2026-02-10", None, "missing_time"),
        ("2026-02-10", "19h", "invalid_time_format"),
        ("2026-02-10", "24:00", "invalid_time_format"),
        ("2026-02-10", "7:00", "invalid_time_format"),
        ("2026-02-10", "19:00", None),
        # The seed's chain knows nothing of the past or of class times.
        ("2026-02-03", "15:00", None),
    ],
)
def test_seed_chain_in_order(d: str | None, t: str | None, expected: str | None) -> None:
    result = validate_date_time(d, t)
    assert result.ok is (expected is None)
    assert result.error == expected


def test_seed_chain_reports_the_first_failure() -> None:
    assert validate_date_time("2026-02-11", None).error == "not_tuesday"
    assert validate_date_time(None, "nope").error == "missing_date"


@pytest.mark.parametrize(
    ("d", "t", "expected"),
    [
        ("2026-02-03", None, "past_date"),
        ("2026-02-03", "19:00", "past_date"),
        ("2026-02-10", "15:00", "unavailable_time"),
        ("2026-02-10", "19:30", "unavailable_time"),
        ("2026-02-10", "07:00", "ok"),
        ("2026-12-29", "20:00", "ok"),
        ("2026-02-11", "19:00", "not_tuesday"),
    ],
)
def test_product_checks(d: str, t: str | None, expected: str) -> None:
    assert slot(d, t) == expected


def test_slot_full_when_every_seat_is_taken() -> None:
    assert slot("2026-02-10", "19:00", seats={("2026-02-10", "19:00"): 5}) == "ok"
    assert slot("2026-02-10", "19:00", seats={("2026-02-10", "19:00"): 6}) == "slot_full"


def test_weekday_comes_from_the_pack() -> None:
    thursdays = CONFIG.model_copy(update={"weekday": 3})
    result = validate_slot("2026-02-12", "19:00", now_local=NOW, config=thursdays, seats_taken={})
    assert result.ok
    assert validate_date_time("2026-02-12", "19:00", weekday=3).ok


@pytest.mark.parametrize(
    ("age", "error"),
    [
        (0, "invalid_age"),
        (6, "too_young"),
        (7, "too_young"),
        (8, None),
        (27, None),
        (99, None),
        (100, "invalid_age"),
    ],
)
def test_age_range(age: int, error: str | None) -> None:
    assert validate_age(age, CONFIG).ok is (error is None)
    assert validate_age(age, CONFIG).error == error


@given(st.dates(min_value=date(2026, 2, 5), max_value=date(2030, 1, 1)))
def test_only_class_days_pass_the_weekday_check(day: date) -> None:
    # Issue 29: a class day the business is closed on (a holiday) does not pass either.
    result = slot(day.isoformat(), "19:00")
    assert (result == "ok") is (day.weekday() == 1 and CONFIG.calendar.is_open(day))


def test_class_days_and_free_times() -> None:
    days = class_days(date(2026, 2, 5), CONFIG)
    assert days[0] == date(2026, 2, 10)
    assert len(days) == CONFIG.lookahead_weeks
    seats = {("2026-02-10", "07:00"): 6}
    assert free_times(date(2026, 2, 10), now_local=NOW, config=CONFIG, seats_taken=seats) == [
        "18:00",
        "19:00",
        "20:00",
    ]


def test_next_day_with_room_skips_full_days() -> None:
    full = {("2026-02-17", t): 6 for t in CONFIG.times}
    found = next_day_with_room(date(2026, 2, 10), now_local=NOW, config=CONFIG, seats_taken=full)
    assert found == (date(2026, 2, 24), CONFIG.times)


def test_next_open_day_skips_a_tuesday_whose_classes_all_started() -> None:
    late = datetime(2026, 2, 3, 20, 30, tzinfo=TZ)
    assert next_open_day(now_local=late, config=CONFIG) == date(2026, 2, 10)
    assert next_open_day(now_local=NOW, config=CONFIG) == date(2026, 2, 10)


def test_seat_lookup_covers_today_and_the_weeks_after_a_requested_date() -> None:
    state = TrialState(desired_date="2026-06-02")
    dates = seat_lookup_dates(
        now=NOW,
        tz=TZ,
        config=CONFIG,
        state=state,
        extraction=TrialExtraction(desired_date="not a date"),
    )
    assert dates[0] == "2026-02-10"
    assert "2026-06-02" in dates and "2026-06-09" in dates
    assert all(date.fromisoformat(d).weekday() == 1 for d in dates)
    assert dates == sorted(set(dates))


def test_dates_are_shown_as_weekday_and_dd_mm() -> None:
    assert show_date("2026-02-10", CONFIG) == "terça, 10/02"
    assert show_date("10/02/2026", CONFIG) == "10/02/2026"
    assert join_list(["07:00"], CONFIG) == "07:00"
    assert join_list(["07:00", "18:00", "20:00"], CONFIG) == "07:00, 18:00 e 20:00"


def test_free_options_list_the_day_and_the_next_one_with_room() -> None:
    seats = {("2026-02-10", "19:00"): 6, **{("2026-02-17", t): 6 for t in CONFIG.times}}
    text = free_options(
        date(2026, 2, 10), now_local=NOW, config=CONFIG, seats_taken=seats, pack=PACK, seed="s"
    )
    assert text == (
        "terça, 10/02 às 07:00, 18:00 e 20:00; ou terça, 24/02 às 07:00, 18:00, 19:00 e 20:00"
    )


def test_free_options_when_nothing_is_free() -> None:
    seats = {(d.isoformat(), t): 6 for d in class_days(NOW.date(), CONFIG) for t in CONFIG.times}
    seats.update({("2026-04-07", t): 6 for t in CONFIG.times})
    text = free_options(
        date(2026, 2, 10), now_local=NOW, config=CONFIG, seats_taken=seats, pack=PACK, seed="s"
    )
    assert text == PACK.text("trial_no_options", seed="s")
