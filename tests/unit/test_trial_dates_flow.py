"""When a date or time is said in the trial flow: a day that cannot be booked is answered at
once with the nearest that can (even while the name is still asked), a question about a day is
answered with its times, and a time is completed across messages.

Through the pure core with the CT Smash pack, on the seed's clock (Thursday 2026-02-05 10:00).
"""

from __future__ import annotations

from datetime import datetime

import pytest

from services.triage.app import load_routed_config
from services.triage.faq_evidence import faq_knows
from services.triage.rules import classify
from tests.unit.test_trial_flow import PACK, TZ, Chat, at_stage

TRIAGE = load_routed_config(PACK)
KNOWS = faq_knows(PACK, TRIAGE)

# A Tuesday evening after the last class has started.
TUESDAY_NIGHT = datetime(2026, 3, 10, 20, 40, tzinfo=TZ)


def test_a_day_that_is_not_a_class_day_is_answered_before_the_name() -> None:
    chat = Chat()
    out = chat.say("bora marcar a experimental na quinta dia 12 às 19h")
    assert out.journal["reply"] == "trial_ask_name"
    assert "12/02 não é terça" in out.text
    assert "terça, 10/02 às 07:00, 18:00, 19:00 e 20:00" in out.text
    assert "Anotado" not in out.text
    chat.say("Marina Souza")
    chat.say("31")
    out = chat.say("intermediária")
    # The wrong day is not forgotten: asked again with the options, not booked.
    assert out.journal["validation"] == "not_tuesday"


def test_today_after_the_last_class_offers_the_next_tuesday() -> None:
    chat = Chat(now=TUESDAY_NIGHT)
    out = chat.say("ainda dá pra fazer a aula experimental hoje?")
    assert "a última aula experimental de hoje já começou" in out.text
    assert "terça, 17/03" in out.text
    chat.say("Bruno Lima, 40 anos, avançado")
    out = chat.say("pode ser na próxima às 20h")
    assert (out.state.desired_date, out.state.desired_time) == ("2026-03-17", "20:00")
    assert out.state.stage == "awaiting_confirmation"


def test_a_question_about_a_class_day_is_answered_with_its_times() -> None:
    chat = Chat()
    out = chat.say("oi, dia 24 vocês têm experimental?")
    assert "Na terça, 24/02 tem aula experimental sim, às 07:00, 18:00, 19:00 e 20:00." in (
        out.text
    )


def test_a_part_of_the_day_completes_the_hour_said_before() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("terça às 8")
    assert out.state.desired_time == "20:00"
    chat = Chat(state=at_stage("ask_date", asked="date"))
    chat.say("dia 10 às 7")
    assert chat.state is not None and chat.state.desired_time == "07:00"
    out = chat.say("ah, da noite")
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-10", "19:00")
    assert out.state.stage == "awaiting_confirmation"


def test_the_first_and_last_class_and_the_only_morning_one() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    assert chat.say("terça, o último horário").state.desired_time == "20:00"
    chat = Chat(state=at_stage("ask_date", asked="date"))
    assert chat.say("dia 10 bem cedinho de manhã").state.desired_time == "07:00"
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("terça à noite")
    assert out.state.desired_time is None
    assert out.journal["validation"] == "missing_time"


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        ("pode ser terça de noite", "Temos 18:00, 19:00 e 20:00."),
        ("dia 10, no período da noite", "Temos 18:00, 19:00 e 20:00."),
        ("prefiro na terça que vem durante a noite", "Temos 18:00, 19:00 e 20:00."),
    ],
)
def test_a_day_with_a_part_of_the_day_offers_only_that_part(text: str, offered: str) -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say(text)
    assert out.journal["validation"] == "missing_time"
    assert offered in out.text
    assert "07:00" not in out.text


def test_a_part_of_the_day_said_before_the_name_is_kept_for_the_times_offered() -> None:
    chat = Chat()
    chat.say("queria fazer a aula experimental numa terça pela noite")
    chat.say("Renata")
    chat.say("52")
    out = chat.say("intermediária")
    assert "Temos 18:00, 19:00 e 20:00." in out.text
    # A part of the day with no room that Tuesday: the next Tuesday's times of that part.
    full = {("2026-02-10", t): 6 for t in ("18:00", "19:00", "20:00")}
    chat = Chat(state=at_stage("ask_date", asked="date"), seats=full)
    out = chat.say("sábado à noite")
    assert out.journal["validation"] == "not_tuesday"
    assert "terça, 24/02 às 18:00, 19:00 e 20:00" in out.text
    assert "07:00" not in out.text


@pytest.mark.parametrize("text", ["da manhã", "é de noite", "pela manhã", "o último horário"])
def test_mid_booking_a_part_of_the_day_reaches_the_trial(text: str) -> None:
    # Triage: the FAQ knows these words as opening hours, but mid-booking they answer the time.
    result = classify(
        text, trial_stage="awaiting_confirmation", config=TRIAGE, pack=PACK, knows=KNOWS
    )
    assert result.intents == ["trial"]
    asked = classify(
        "vocês abrem de manhã?", trial_stage="ask_date", config=TRIAGE, pack=PACK, knows=KNOWS
    )
    assert "faq" in asked.intents


@pytest.mark.parametrize(
    "text",
    ["dá pra passar pra outra terça?", "consigo adiar uma semana pra frente?", "muda pra próxima"],
)
def test_after_booking_a_move_by_a_relative_step_reaches_the_trial(text: str) -> None:
    result = classify(text, trial_stage="booked", config=TRIAGE, pack=PACK, knows=KNOWS)
    assert "trial" in result.intents


def test_a_booking_moved_a_week_forward_keeps_its_time() -> None:
    from tests.unit.test_trial_flow import booked_chat

    chat = booked_chat()
    # Booked on 10/02/2026; a week forward is Carnival (closed), two weeks is 24/02.
    out = chat.say("consigo adiar uma semana pra frente? mesmo horário")
    assert out.journal["validation"] == "closed_day"
    out = chat.say("então duas semanas pra frente")
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.args["new_date"] == "2026-02-24"
    assert out.state.pending_tool.args["new_time"] == "19:00"


def test_a_cancelled_booking_leaves_the_stage_cancelled_until_a_new_one() -> None:
    from services.trial.models import ToolResult
    from shared.trial.bookings import BookingView
    from tests.unit.test_trial_flow import booked_chat

    chat = booked_chat()
    chat.say("preciso desmarcar minha aula")
    booking = BookingView(
        booking_id="AE-7K3Q9P", date="2026-02-10", time="19:00", status="cancelled"
    )
    out = chat.say("sim", result=ToolResult(status="cancelled", booking=booking))
    assert out.state.stage == "cancelled"
    assert (out.state.booking_id, out.state.asked) == (None, None)
    out = chat.say("quero marcar de novo, terça dia 24 às 18h")
    assert out.state.stage == "awaiting_confirmation"
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-24", "18:00")


@pytest.mark.parametrize(
    ("text", "hour"),
    [("dá pra fazer hoje? pode ser o primeiro horário livre", "19:00"),
     ("quero hoje, no último horário", "20:00")],
)  # fmt: skip
def test_the_first_or_last_class_is_the_first_or_last_still_free(text: str, hour: str) -> None:
    """At two in the afternoon the 07:00 class has gone and the 18:00 one is full: "o
    primeiro horário" is the first one that can still be booked."""
    afternoon = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)
    chat = Chat(now=afternoon, seats={("2026-03-10", "18:00"): 6})
    out = chat.say(text)
    assert (out.state.desired_date, out.state.desired_time) == ("2026-03-10", hour)


@pytest.mark.parametrize(
    "text",
    ["qualquer horário pra mim tá ótimo", "a hora tanto faz", "tanto faz", "qualquer um"],
)
def test_any_time_when_the_time_is_asked_takes_the_first_free_class_to_confirm(text: str) -> None:
    """Asked for the time, a person who has no preference is offered the day's first class
    that can still be booked (the 07:00 one is full), to confirm, not the list again."""
    chat = Chat(seats={("2026-02-10", "07:00"): 6})
    chat.say("quero marcar uma aula experimental, Rita, 40 anos, iniciante, na terça dia 10")
    assert chat.state is not None and chat.state.asked == "time"
    out = chat.say(text)
    assert out.state.stage == "awaiting_confirmation"
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-10", "18:00")


def test_any_day_is_no_time() -> None:
    """ "qualquer terça serve" leaves the time to be asked: the day is what it is about."""
    chat = Chat()
    out = chat.say(
        "quero marcar uma aula experimental, Rita, 40 anos, iniciante, qualquer terça serve"
    )
    assert out.state.desired_time is None


def test_a_limit_on_the_time_offers_the_classes_within_it_and_books_none_of_its_hour() -> None:
    # Several within it: offered, nothing to confirm yet.
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("terça dia 10, tem depois das 18h?")
    assert out.state.desired_time is None
    assert "19:00 e 20:00" in out.text
    assert out.state.asked == "time"
    # Only one within it: proposed for the yes.
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("só antes das 18h, tem?")
    assert (out.state.desired_time, out.state.stage) == ("07:00", "awaiting_confirmation")
    # None within it: where the classes end, and the free times there are.
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("nada depois das 20h?")
    assert out.state.desired_time is None
    assert out.journal["reply"] == "trial_bound_none_after"
    assert "última aula experimental começa às 20:00" in out.text
    # Within it but full: said so, with the free times.
    full = {("2026-02-10", t): 6 for t in ("19:00", "20:00")}
    chat = Chat(state=at_stage("ask_date", asked="date"), seats=full)
    out = chat.say("dia 10 a partir das 19h")
    assert out.journal["reply"] == "trial_bound_full"


def test_later_than_the_class_proposed_is_the_next_one() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    chat.say("dia 10 às 18h")
    out = chat.say("hmm, tem alguma coisa mais tarde?")
    assert "19:00 e 20:00" in out.text
    assert out.state.stage == "ask_date"
