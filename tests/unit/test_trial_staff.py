"""Pure parts of the booking lifecycle: the roster of a range, lifecycle events, forgetting a
cancelled booking, and recognizing an erasure request by the pack's words."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from services.trial.models import ContextState, TrialState
from services.trial.privacy import (
    PrivacyConfig,
    _words,
    asks_erasure,
    erasure_handoff,
    requested,
)
from services.trial.staff import forget_booking, lifecycle_events
from shared.pack import load_pack
from shared.trial.bookings import StaffBooking
from shared.trial.config import load_trial_config
from shared.trial.roster import class_dates, range_problem, roster

PACK = load_pack("ctsmash")
CONFIG = load_trial_config(PACK)
PRIVACY = PACK.section("privacy", PrivacyConfig)
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=ZoneInfo("America/Sao_Paulo"))


def test_class_dates_are_the_pack_weekday_within_the_inclusive_range() -> None:
    # 2026-02-10 and 2026-02-17 are Tuesdays.
    assert class_dates(date(2026, 2, 9), date(2026, 2, 17), CONFIG) == ["2026-02-10", "2026-02-17"]
    assert class_dates(date(2026, 2, 10), date(2026, 2, 10), CONFIG) == ["2026-02-10"]
    assert class_dates(date(2026, 2, 11), date(2026, 2, 16), CONFIG) == []


def test_range_problems_say_what_is_wrong() -> None:
    assert range_problem(date(2026, 2, 1), date(2026, 5, 1)) is None  # 90 days
    too_long = range_problem(date(2026, 2, 1), date(2026, 5, 2))
    assert too_long is not None and "91 days" in too_long
    backwards = range_problem(date(2026, 2, 10), date(2026, 2, 9))
    assert backwards is not None and "before" in backwards


def test_roster_lists_every_class_with_its_seats_and_bookings() -> None:
    booking = StaffBooking(booking_id="AE-X", date="2026-02-10", time="19:00", status="booked")
    classes = roster(["2026-02-10"], CONFIG, [booking], {("2026-02-10", "19:00"): 2})
    assert [c.time for c in classes] == CONFIG.times
    full = {c.time: c for c in classes}
    assert full["19:00"].seats_left == CONFIG.seats_per_slot - 2
    assert full["19:00"].bookings == [booking]
    assert full["07:00"].seats_left == CONFIG.seats_per_slot and full["07:00"].bookings == []


def test_status_reads_the_attendance_of_an_active_booking_only() -> None:
    base = {"booking_id": "AE-X", "date": "2026-02-10", "time": "19:00"}
    assert StaffBooking.from_record({**base, "status": "active"}).status == "booked"
    marked = {**base, "status": "active", "attendance": "no_show"}
    assert StaffBooking.from_record(marked).status == "no_show"
    cancelled = StaffBooking.from_record({**base, "status": "cancelled", "attendance": "attended"})
    assert cancelled.status == "cancelled" and cancelled.cancelled_by == "customer"


def test_lifecycle_events_name_the_conversation_and_the_customer_cancellation() -> None:
    events = [
        {"type": "trial.booked", "data": {"booking_id": "AE-X", "date": "d", "time": "t"}},
        {"type": "trial.cancelled", "data": {"booking_id": "AE-Y", "date": "d", "time": "t"}},
    ]
    out = lifecycle_events(events, "conv-1", reason="doente")
    assert [e["type"] for e in out] == ["trial.booked", "trial.cancelled", "booking.cancelled"]
    assert out[0]["data"]["conversation_id"] == "conv-1"
    assert out[2]["data"] == {
        "booking_id": "AE-Y",
        "reason": "doente",
        "by": "customer",
        "conversation_id": "conv-1",
        "date": "d",
        "time": "t",
    }
    assert "conversation_id" not in events[0]["data"]  # the input is not changed


def test_a_staff_cancellation_forgets_only_the_cancelled_booking() -> None:
    key = CONFIG.booking_context_key
    state = TrialState(
        stage="booked",
        nome="Ana",
        idade=30,
        nivel="iniciante",
        booking_id="AE-X",
        booking_created=True,
        desired_date="2026-02-10",
        desired_time="19:00",
    )
    context = ContextState().with_value(key, "AE-X", NOW)
    new_state, new_context = forget_booking(state, context, "AE-X", CONFIG)
    assert new_state is not None and new_state.booking_id is None
    assert new_state.stage == "cancelled" and new_state.nome == "Ana"
    assert new_context is not None and key not in new_context.entries
    assert forget_booking(state, context, "AE-OTHER", CONFIG) == (None, None)


@pytest.mark.parametrize(
    "text",
    [
        "apaga meus dados",
        "Quero que vocês APAGUEM todos os meus dados, por favor",
        "pode excluir meu cadastro?",
        "deletem minhas informações",
        "remover meu número de vocês",
        "LGPD: quero saber o que vocês guardam",
    ],
)
def test_erasure_requests_are_recognized(text: str) -> None:
    assert asks_erasure(text, PRIVACY)


@pytest.mark.parametrize(
    "text",
    [
        "meus dados estão certos?",
        "quero apagar a luz da quadra",
        "apaga isso, vou mandar de novo: meu nome é Ana e meus dados são esses",
        "cancela minha aula",
    ],
)
def test_other_messages_are_not_erasure_requests(text: str) -> None:
    assert not asks_erasure(text, PRIVACY)


def test_an_erasure_request_hands_off_with_the_privacy_reason() -> None:
    state = TrialState(stage="ask_date", nome="Ana")
    outcome = erasure_handoff(state, None, pack=PACK, seed="t1", config=PRIVACY)
    assert outcome.text == PACK.text(PRIVACY.text_key)
    assert outcome.state.stage == "handoff_requested"
    assert outcome.state.resume_stage == "ask_date"
    [event] = outcome.events
    assert event["type"] == "handoff.requested" and event["data"]["reason"] == "privacy"


def test_the_first_words_check_never_drops_a_request_the_full_search_finds() -> None:
    """``may_ask`` (a phrase's or verb's first word present) before the full search: over
    every verb, object and phrase of a config with one- and many-word verbs, in messages
    with and without the words between, the answer is the full search's."""
    config = PrivacyConfig(
        verbs=["apag", "tirar do sistema", "pode excluir"],
        objects=["meus dados", "meu cadastro"],
        phrases=["lgpd", "direito ao esquecimento"],
        max_gap_words=2,
        text_key="privacy_request",
    )
    fillers = ["", "por favor", "todos os", "agora mesmo voces"]
    texts = [
        f"{verb}{ending} {filler} {obj}"
        for verb in ["apag", "tirar do sistema", "pode excluir", "tira", "exclui"]
        for ending in ["", "a", "uem"]
        for filler in fillers
        for obj in ["meus dados", "meu cadastro", "minha aula"]
    ] + [f"quero saber da {phrase}" for phrase in ["lgpd", "direito ao esquecimento", "lei"]]
    found = 0
    for text in texts:
        words = _words(text)
        full = requested(words, config)
        assert asks_erasure(text, config) == full, text
        assert config.may_ask(words) or not full, text
        found += full
    assert 0 < found < len(texts)
