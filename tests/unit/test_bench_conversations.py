"""The scripted conversations of the benchmark (bench/conversations.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bench.conversations import (
    BOOKING_MIX,
    COMPLETE_MIX,
    DEFAULT_MIX,
    KINDS,
    SPACING,
    class_slot,
    conversation,
    reply_outcome,
)
from shared.nlu.fragment import is_fragment
from shared.pack import load_pack
from shared.trial.config import load_trial_config

BASE = datetime(2026, 3, 2, 9, 0, tzinfo=ZoneInfo("America/Sao_Paulo"))  # a Monday


def test_same_index_same_conversation_and_ids_are_unique() -> None:
    assert conversation(7, run_id="r", base=BASE) == conversation(7, run_id="r", base=BASE)
    ids = {conversation(i, run_id="r", base=BASE).conversation_id for i in range(100)}
    assert len(ids) == 100


def test_every_kind_appears_in_the_default_mix_and_bookings_dominate() -> None:
    assert set(DEFAULT_MIX) == set(KINDS)
    bookings = sum(kind in BOOKING_MIX for kind in DEFAULT_MIX)
    assert bookings / len(DEFAULT_MIX) >= 0.5


def test_business_time_moves_forward_within_and_across_conversations() -> None:
    first, second = (conversation(i, run_id="r", base=BASE) for i in (0, 1))
    times = [m.sent_at for m in first.messages]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert second.messages[0].sent_at - first.messages[0].sent_at == SPACING
    assert all(m.sent_at.tzinfo is not None for m in first.messages)


@pytest.mark.parametrize("index", range(12))
def test_bookings_ask_for_a_future_class_the_pack_offers(index: int) -> None:
    config = load_trial_config(load_pack("ctsmash"))
    start = BASE + index * SPACING
    day, hour = class_slot(start, index)
    assert day.weekday() == config.weekday
    assert start.date() < day <= start.date() + timedelta(weeks=3)
    assert f"{hour:02d}:00" in config.times


def test_bookings_spread_over_several_classes() -> None:
    slots = {class_slot(BASE + i * SPACING, i) for i in range(48)}
    assert len(slots) >= 12


def test_booking_scripts_name_the_class_they_ask_for() -> None:
    for index in range(len(DEFAULT_MIX)):
        talk = conversation(index, run_id="r", base=BASE)
        if talk.kind not in ("booking", "booking_fast", "multi_intent"):
            continue
        day, hour = class_slot(talk.messages[0].sent_at, index)
        said = " ".join(m.text for m in talk.messages)
        assert f"{day.day:02d}/{day.month:02d}" in said and f"{hour}h" in said


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        conversation(0, run_id="r", base=BASE, mix=("karaoke",))


def test_reply_outcome_reads_bookings_and_full_classes() -> None:
    assert reply_outcome("Agendado, Ana! 🎾 Sua aula experimental é terça") == "booked"
    assert reply_outcome("A turma de terça, 10/03 às 18:00 já está lotada 😕") == "full"
    assert reply_outcome("Prazer, Ana! Quantos anos você tem?") == "reply"


def test_the_complete_mix_says_nothing_the_gateway_would_wait_on() -> None:
    """The burst part measures questions: none may be a fragment (a message asking nothing,
    or a greeting alone), which would wait the longer window; the default mix has many."""
    pack = load_pack("ctsmash")
    complete = [conversation(i, run_id="r", base=BASE, mix=COMPLETE_MIX) for i in range(40)]
    assert not [m.text for c in complete for m in c.messages if is_fragment(m.text, pack)]
    default = [conversation(i, run_id="r", base=BASE) for i in range(len(DEFAULT_MIX))]
    assert any(is_fragment(m.text, pack) for c in default for m in c.messages)
