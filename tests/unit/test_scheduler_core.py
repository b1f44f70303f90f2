"""The scheduler's pure decisions: what an event schedules or cancels, when it is due, and what
happens to a message that is already late."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from services.scheduler.config import RemindersConfig, load_reminders
from services.scheduler.core import (
    SCHEDULING,
    Context,
    Plan,
    admit,
    at_due,
    bucket_finished,
    plan_event,
)
from shared.attribution import attribution, source_of
from shared.contracts import InboundMessage, MetaView, Turn
from shared.funnel import FunnelConfig, plan_patterns, read_days, steps_of_turn
from shared.pack import Pack, PackError, load_pack
from shared.scheduled import Scheduled, bucket_of, member, parse_member
from shared.trial.config import load_trial_config

PACK = load_pack("ctsmash")
CONFIG = PACK.section("reminders", RemindersConfig)
TRIAL = load_trial_config(PACK)
TZ = ZoneInfo("America/Sao_Paulo")
CTX = Context(conversation_id="c1", channel="http", to="c1", student_name="Ana")
BOOKED = {"booking_id": "AE-1", "date": "2026-02-10", "time": "19:00", "nome": "João"}


def plan(event_type: str, data: dict, event_id: str = "e1", config: RemindersConfig = CONFIG):
    return plan_event(event_type, event_id, data, CTX, config=config, trial=TRIAL, pack=PACK, tz=TZ)


def test_a_booking_schedules_the_day_before_at_the_pack_hour_and_two_hours_before() -> None:
    result = plan("trial.booked", BOOKED)
    assert result.cancel_booking is None
    by_kind = {item.kind: item for item in result.schedule}
    assert set(by_kind) == {"day_before", "before_class"}
    eve = by_kind["day_before"]
    assert eve.due_at == datetime(2026, 2, 9, 18, 0, tzinfo=TZ)
    assert eve.class_at == datetime(2026, 2, 10, 19, 0, tzinfo=TZ)
    assert by_kind["before_class"].due_at == datetime(2026, 2, 10, 17, 0, tzinfo=TZ)
    assert "João" in eve.text and "terça, 10/02" in eve.text and "19:00" in eve.text
    assert eve.template == "lembrete_aula_vespera"
    assert eve.template_params == ["João", "terça, 10/02", "19:00"]
    assert eve.turn_id == "sched-e1-day_before"
    assert (eve.channel, eve.to, eve.booking_id) == ("http", "c1", "AE-1")


def test_the_optional_reminder_is_off_without_its_pack_entry() -> None:
    config = CONFIG.model_copy(update={"before_class": None})
    assert [i.kind for i in plan("trial.booked", BOOKED, config=config).schedule] == ["day_before"]


def test_ids_are_per_event_so_a_redelivered_event_schedules_the_same_ids() -> None:
    first = [i.id for i in plan("trial.booked", BOOKED).schedule]
    again = [i.id for i in plan("trial.booked", BOOKED).schedule]
    other = [i.id for i in plan("trial.booked", BOOKED, event_id="e2").schedule]
    assert first == again and not set(first) & set(other)


def test_the_name_comes_from_the_trial_slice_when_the_event_has_none() -> None:
    data = {k: v for k, v in BOOKED.items() if k != "nome"}
    assert "Ana" in plan("trial.booked", data).schedule[0].text


@pytest.mark.parametrize("event_type", ["trial.cancelled", "booking.cancelled"])
def test_a_cancel_cancels_the_bookings_messages_and_schedules_nothing(event_type: str) -> None:
    result = plan(event_type, {"booking_id": "AE-1", "reason": "chuva"})
    assert result.cancel_booking == "AE-1" and result.schedule == []


def test_a_reschedule_cancels_the_old_messages_and_schedules_the_new_class() -> None:
    data = {"booking_id": "AE-1", "date": "2026-02-17", "time": "07:00"}
    result = plan("trial.rescheduled", data, event_id="e3")
    assert result.cancel_booking == "AE-1"
    eve = next(i for i in result.schedule if i.kind == "day_before")
    assert eve.due_at == datetime(2026, 2, 16, 18, 0, tzinfo=TZ)


def test_attendance_schedules_como_foi_or_sentimos_sua_falta_with_the_next_class_day() -> None:
    attended = plan("booking.attendance", {**BOOKED, "status": "attended"}).schedule
    assert [i.kind for i in attended] == ["attended"]
    assert attended[0].due_at == datetime(2026, 2, 10, 22, 0, tzinfo=TZ)
    assert "Como foi" in attended[0].text and "planos" in attended[0].text
    [missed] = plan("booking.attendance", {**BOOKED, "status": "no_show"}).schedule
    assert missed.kind == "no_show"
    # The next class day offered skips Tuesday 17/02/2026: Carnival, the business is closed.
    assert "Sentimos sua falta" in missed.text and "terça, 24/02" in missed.text


def test_events_without_what_they_need_schedule_nothing_and_say_why() -> None:
    assert plan("trial.booked", {"date": "2026-02-10"}).note == "no booking_id"
    assert plan("trial.booked", {"booking_id": "AE-1"}).note == "no class date or time"
    unknown = plan("booking.attendance", {**BOOKED, "status": "late"})
    assert unknown.schedule == [] and unknown.note
    assert plan("faq.answered", BOOKED).schedule == []


@pytest.mark.parametrize(
    "event_type",
    ["handoff.requested", "handoff.withdrawn", "handoff.reminder", "enrollment.requested"],
)
def test_an_event_outside_scheduling_plans_nothing_so_its_context_is_not_read(
    event_type: str,
) -> None:
    """The shell reads a conversation's context only for the events in ``SCHEDULING``."""
    assert event_type not in SCHEDULING
    assert plan(event_type, {**BOOKED, "status": "attended"}) == Plan()


@pytest.mark.parametrize("event_type", sorted(SCHEDULING))
def test_every_scheduling_event_plans_something(event_type: str) -> None:
    planned = plan(event_type, {**BOOKED, "status": "attended"})
    assert planned.schedule or planned.cancel_booking


def item(kind: str, due: datetime, class_at: datetime) -> Scheduled:
    return Scheduled(
        id="x",
        conversation_id="c1",
        kind=kind,  # type: ignore[arg-type]
        booking_id="AE-1",
        due_at=due,
        class_at=class_at,
        text="t",
        channel="http",
    )


CLASS = datetime(2026, 2, 10, 19, 0, tzinfo=TZ)
EVE = datetime(2026, 2, 9, 18, 0, tzinfo=TZ)


def test_a_future_message_is_scheduled() -> None:
    assert admit(item("day_before", EVE, CLASS), EVE - timedelta(hours=5), CONFIG) == "schedule"


def test_a_past_reminder_is_sent_at_once_while_its_class_is_ahead_else_dropped() -> None:
    late = item("day_before", EVE, CLASS)
    assert admit(late, EVE + timedelta(hours=2), CONFIG) == "send_now"
    assert admit(late, CLASS + timedelta(minutes=1), CONFIG) == "drop"
    assert at_due(late, CLASS - timedelta(minutes=1), CONFIG) == "send"
    assert at_due(late, CLASS, CONFIG) == "drop"


def test_a_follow_up_is_sent_late_up_to_max_late_hours() -> None:
    due = CLASS + timedelta(hours=3)
    follow = item("attended", due, CLASS)
    assert admit(follow, due + timedelta(hours=47), CONFIG) == "send_now"
    assert admit(follow, due + timedelta(hours=49), CONFIG) == "drop"


def test_buckets_are_utc_hours_and_members_name_the_conversation() -> None:
    assert bucket_of(EVE) == "2026020921"  # 18:00 in São Paulo is 21:00 UTC
    assert parse_member(member("wa:55|11", "e1-day_before")) == ("wa:55|11", "e1-day_before")
    end = datetime(2026, 2, 9, 22, 0, tzinfo=UTC)
    assert not bucket_finished("2026020921", end, timedelta(minutes=5))
    assert bucket_finished("2026020921", end + timedelta(minutes=6), timedelta(minutes=5))


def test_the_source_is_the_ad_clicked_else_the_origin() -> None:
    ad_meta = MetaView.model_validate({"referral": {"source_id": "120"}, "origin": "inbound"})
    assert source_of(ad_meta) == "ctwa:120"
    assert source_of(MetaView(origin="campaign:verao")) == "campaign:verao"
    assert source_of(MetaView()) == "inbound" and source_of(None) == "inbound"
    ad = {"referral": {"source_id": "120", "ctwa_clid": "clid", "headline": "Aula", "body": "x"}}
    assert attribution(MetaView.model_validate(ad)) == {
        "source": "ctwa:120",
        "referral": {"ctwa_clid": "clid", "source_id": "120", "headline": "Aula"},
    }
    assert attribution(MetaView(origin="campaign:verao")) == {"source": "campaign:verao"}


def test_funnel_days_read_totals_and_per_source_counters() -> None:
    days = read_days(
        {
            "2026-02-09": {"started": "2", "started|inbound": "1", "started|ctwa:9": "1"},
            "2026-02-10": {},
        }
    )
    assert days[0]["started"] == 2 and days[0]["booked"] == 0
    assert days[0]["by_source"]["ctwa:9"]["started"] == 1
    assert days[1] == {
        "date": "2026-02-10",
        "started": 0,
        "trial_asked": 0,
        "booked": 0,
        "attended": 0,
        "plan_interest": 0,
        "by_source": {},
    }


def test_a_reminder_naming_a_missing_text_or_a_bad_pattern_is_refused_at_start() -> None:
    assert load_reminders(PACK) == CONFIG
    sections = {**PACK.sections, "texts": {}}
    with pytest.raises(PackError, match="reminder_day_before"):
        load_reminders(Pack("broken", sections))
    with pytest.raises(ValueError, match="plan_interest"):
        FunnelConfig(plan_interest=["(planos"])


def funnel_turn(seq: int, text: str) -> Turn:
    at = datetime(2026, 2, 9, 12, tzinfo=UTC)
    message = InboundMessage(
        channel="http", conversation_id="c1", message_id=f"m{seq}", text=text, sent_at=at,
        received_at=at,
    )  # fmt: skip
    return Turn(
        turn_id=f"t{seq}", conversation_id="c1", channel="http", seq=seq, messages=[message],
        text=text, now=at,
    )  # fmt: skip


def test_the_funnel_steps_a_turn_shows_from_its_seq_text_and_routes() -> None:
    patterns = plan_patterns(PACK)
    assert steps_of_turn(funnel_turn(1, "oi"), ["faq"], patterns) == ["started"]
    assert steps_of_turn(funnel_turn(2, "Quanto custa o plano?"), ["faq"], patterns) == [
        "plan_interest"
    ]
    assert steps_of_turn(funnel_turn(3, "quero marcar"), ["trial"], patterns) == ["trial_asked"]
    assert steps_of_turn(funnel_turn(4, "onde fica?"), ["faq"], patterns) == []
