"""The trial flow as people really write: no loops, no lost answers, every question heard.

Through the pure core with the CT Smash pack, on the seed's clock (Thursday 2026-02-05 10:00,
so "terça q vem" is 2026-02-10). A question asked again says exactly what is missing; only an
answer that moved nothing counts as failed, two in a row hand off; a question answered by another
service is followed by a one-line re-ask.
"""

from __future__ import annotations

import pytest

from services.trial.extraction import extract_trial_fields
from services.trial.llm import llm_worth_asking
from services.trial.models import ToolResult, TrialExtraction, TrialState
from shared.trial.bookings import BookingView
from tests.unit.test_trial_flow import NOW, TZ, Chat, at_stage, booked_chat

QUESTION = ["trial", "faq"]


def created(date: str, time: str, nome: str) -> ToolResult:
    booking = BookingView(booking_id="AE-7K3Q9P", date=date, time=time, status="active", nome=nome)
    return ToolResult(status="created", booking=booking)


def rules(text: str, state: TrialState | None) -> TrialExtraction:
    return extract_trial_fields(text, now=NOW, tz=TZ, asked=state.asked if state else None)


def test_paulo_books_at_the_corrected_time_without_being_asked_his_name_again() -> None:
    chat = Chat()
    opening = "quero agendar experimental. Paulo, 50 anos, iniciante"
    # Reading "Paulo" in this shape is the extractor's job; the flow is given what it reads.
    first = rules(opening, None).model_copy(update={"nome": "Paulo"})
    replies = [chat.say(opening, extraction=first)]
    replies.append(chat.say("terca q vem as 8 da noite"))
    assert chat.state is not None and chat.state.desired_time == "20:00"
    replies.append(chat.say("nao, prefiro as 18hrs"))
    assert chat.state.stage == "awaiting_confirmation"
    plan = chat.plan_for("s")
    assert plan.tool_call is not None and plan.tool_call.tool == "create_booking"
    args = plan.tool_call.args
    assert (args["nome"], args["idade"], args["nivel"]) == ("Paulo", 50, "iniciante")
    assert (args["date"], args["time"]) == ("2026-02-10", "18:00")
    assert all(r.state.asked != "nome" for r in replies)
    assert [r.journal["reply"] for r in replies[1:]] == ["trial_ask_confirmation"] * 2


def test_details_given_while_the_name_is_asked_never_hand_off() -> None:
    # Issue 29: the bot does not give up on itself while the person is busy giving the booking
    # other details. The name is asked again, clearly, each time; nothing is counted as failed.
    chat = Chat()
    first = chat.say("quero agendar experimental. 50 anos, iniciante")
    assert first.journal["reply"] == "trial_ask_name"
    assert (first.state.idade, first.state.nivel) == (50, "iniciante")
    second = chat.say("terca q vem as 8 da noite")
    # Everything given so far is kept, said back, and what is missing is named with an example.
    assert (second.state.idade, second.state.desired_time) == (50, "20:00")
    assert second.journal["reply"] == "trial_still_need_nome"
    assert "terça, 10/02 às 20:00" in second.text
    assert chat.text("trial_still_need_nome") in second.text
    third = chat.say("nao, prefiro as 18hrs")
    assert third.state.stage == "collect_client_info" and third.events == []
    assert third.journal["reply"] == "trial_still_need_nome"
    assert (third.state.desired_time, third.state.attempts) == ("18:00", {})


def test_the_same_clear_question_twice_with_no_usable_answer_hands_off_with_a_summary() -> None:
    chat = Chat()
    chat.say("quero agendar experimental. 50 anos, iniciante")
    chat.say("terca q vem as 8 da noite")
    unusable = chat.say("hmm")
    assert unusable.journal["reply"] == "trial_still_need_nome"
    assert unusable.state.attempts == {"nome": 1}
    third = chat.say("sei la")
    assert third.state.stage == "handoff_requested"
    assert third.events[0]["data"] == {
        "reason": "attempts",
        "field": "nome",
        "stage": "collect_client_info",
    }
    assert "50 anos, nível iniciante e terça, 10/02 às 20:00" in third.text
    assert chat.pack.text("trial_field_nome") in third.text
    # What was given is kept for whoever picks the conversation up.
    assert (third.state.idade, third.state.desired_time) == (50, "20:00")


@pytest.mark.parametrize(
    ("state", "reask"),
    [
        (TrialState(asked="nome", idade=30), "trial_reask_nome"),
        (TrialState(nome="Ana", asked="idade"), "trial_reask_idade"),
        (at_stage("ask_date", asked="date"), "trial_reask_date"),
        (
            at_stage(
                "awaiting_confirmation",
                desired_date="2026-02-10",
                desired_time="19:00",
                asked="confirmation",
            ),
            "trial_reask_confirmation",
        ),
    ],
)
def test_a_question_mid_booking_gets_a_one_line_reask_and_no_failed_attempt(
    state: TrialState, reask: str
) -> None:
    chat = Chat(state=state)
    out = chat.say("a partir de que idade pode?", intents=QUESTION)
    assert out.journal["reply"] == reask
    assert out.state.attempts == {}
    assert "\n" not in out.text and out.text.count("?") == 1
    assert out.asks_question
    # A second question in a row: the FAQ's answer is the whole reply (one reminder per run),
    # and the next message is still read as the answer to the pending step.
    again = chat.say("vcs emprestam raquete?", intents=QUESTION)
    assert (again.text, again.journal["asked"], again.nlg) == ("", None, None)
    assert (again.state.asked, again.state.attempts) == (out.state.asked, {})
    assert again.state.stage == state.stage


def test_an_answer_next_to_a_question_is_kept_and_the_next_step_asked() -> None:
    chat = Chat(state=TrialState(nome="Ana", idade=30, asked="nivel"))
    out = chat.say("ela é iniciante. vcs emprestam raquete?", intents=QUESTION)
    assert out.state.nivel == "iniciante"
    assert out.journal["reply"] == "trial_ask_date"


def test_under_the_minimum_age_is_refused_with_the_rule() -> None:
    chat = Chat(state=TrialState(nome="Sofia", asked="idade"))
    out = chat.say("ela tem 6 anos")
    assert out.journal["reply"] == "trial_too_young"
    assert "a partir dos 8 anos" in out.text
    assert out.state.idade is None and out.state.asked is None
    assert out.state.stage == "collect_client_info"


def test_a_minor_is_booked_with_the_guardian_note() -> None:
    chat = Chat(
        state=at_stage(
            "awaiting_confirmation",
            nome="Pedro",
            idade=12,
            desired_date="2026-02-10",
            desired_time="18:00",
            asked="confirmation",
        )
    )
    out = chat.say("sim", result=created("2026-02-10", "18:00", "Pedro"))
    assert out.state.booking_created
    assert out.text.endswith(chat.text("trial_guardian_note", nome="Pedro"))
    assert "menos de 18 anos" in out.text
    adult = Chat(
        state=chat.state.model_copy(update={"stage": "awaiting_confirmation", "idade": 30})
    )
    adult_out = adult.say("sim", result=created("2026-02-10", "18:00", "Pedro"))
    assert chat.text("trial_guardian_note", nome="Pedro") not in adult_out.text


def test_booking_for_someone_else_talks_about_the_student() -> None:
    chat = Chat()
    said = TrialExtraction(nome="Sofia", contact_name="Márcia", for_someone_else=True)
    asked = chat.say("sou a Márcia, quero marcar pra minha filha Sofia", extraction=said)
    assert asked.journal["reply"] == "trial_ask_age_other"
    assert (asked.state.nome, asked.state.contact_name) == ("Sofia", "Márcia")
    assert asked.state.for_someone_else
    # A later message that does not say who it is for keeps both.
    chat.say("10 anos, iniciante, terça 10/02 às 18h")
    out = chat.say("sim", result=created("2026-02-10", "18:00", "Sofia"))
    assert out.journal["reply"] == "trial_booked_other"
    assert "Aula experimental de Sofia" in out.text
    assert (out.state.contact_name, out.state.for_someone_else) == ("Márcia", True)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("quero cancelar", "trial_nothing_to_cancel"),
        ("quero remarcar", "trial_nothing_to_reschedule"),
    ],
)
def test_cancel_or_reschedule_with_nothing_booked_offers_to_book(text: str, key: str) -> None:
    out = Chat().say(text)
    assert out.journal["reply"] == key
    assert out.state.stage == "collect_client_info" and not out.state.booking_created


def test_cancel_while_collecting_stops_and_says_nothing_was_booked() -> None:
    chat = Chat(state=TrialState(nome="Ana", asked="idade"))
    out = chat.say("cancelar")
    assert out.journal["reply"] == "trial_flow_stopped"
    assert out.state.nome == "Ana" and out.state.asked is None


@pytest.mark.parametrize("day", ["sexta 13/02 às 19h", "sábado dia 14/02 às 19h"])
def test_a_day_that_is_not_tuesday_gets_the_nearest_tuesdays(day: str) -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say(day)
    assert out.journal["validation"] == "not_tuesday"
    assert "terça, 10/02 às 07:00, 18:00, 19:00 e 20:00" in out.text
    # Tuesday 17/02/2026 is Carnival: the business is closed, the next one is offered.
    assert "terça, 24/02 às 07:00, 18:00, 19:00 e 20:00" in out.text


def test_the_nearest_tuesday_offer_skips_a_full_one() -> None:
    full = {("2026-02-10", hour): 6 for hour in ("07:00", "18:00", "19:00", "20:00")}
    chat = Chat(state=at_stage("ask_date", asked="date"), seats=full)
    out = chat.say("sexta 13/02 às 19h")
    assert "10/02" not in out.text
    assert "terça, 24/02 às 07:00, 18:00, 19:00 e 20:00" in out.text


def test_a_question_triage_did_not_place_is_still_not_a_failed_answer() -> None:
    chat = Chat(state=TrialState(asked="nome", idade=30))
    out = chat.say("a partir de que idade pode?", intents=["trial"])
    assert out.journal["reply"] == "trial_reask_nome"
    assert out.state.attempts == {}


def test_two_different_wrong_dates_are_two_answers_the_same_one_twice_hands_off() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    assert chat.say("sexta 13/02 às 19h").journal["validation"] == "not_tuesday"
    out = chat.say("terça 10/02 às 15h")
    assert out.journal["validation"] == "unavailable_time"
    assert out.state.stage == "ask_date" and out.state.attempts == {}
    assert chat.say("às 16h").state.attempts == {"time": 1}
    handed = chat.say("às 17h")
    assert handed.state.stage == "handoff_requested"
    assert "terça, 10/02 às 17:00" in handed.text


@pytest.mark.parametrize(
    ("text", "asked", "worth"),
    [
        # The rules missed the field asked for: one LLM call reads the reply first.
        ("terça 10/02 às 19h, meu nome se escreve R-I-C-A-R-D-O", "nome", True),
        ("Duda", "idade", True),
        # The rules found it: no call.
        ("tenho 40 anos", "idade", False),
        ("sim", "confirmation", False),
        ("às 19h", "date", False),
        # Nothing asked: only a sentence the rules read nothing from.
        ("oi", None, False),
        ("queria saber uma coisa sobre vocês", None, True),
    ],
)
def test_hybrid_asks_the_llm_before_asking_again(text: str, asked: str | None, worth: bool) -> None:
    state = TrialState(asked=asked)  # type: ignore[arg-type]
    assert llm_worth_asking(text, rules(text, state), state.asked) is worth


def test_the_answer_after_a_handoff_for_failed_answers_resumes_the_booking() -> None:
    state = TrialState(
        asked="nome",
        idade=50,
        nivel="iniciante",
        desired_date="2026-02-10",
        desired_time="18:00",
        attempts={"nome": 1},
    )
    chat = Chat(state=state)
    handed = chat.say("hein")
    assert handed.state.stage == "handoff_requested" and not handed.asks_question
    resumed = chat.say("Paulo")
    assert resumed.state.nome == "Paulo"
    assert resumed.state.stage == "awaiting_confirmation"
    assert resumed.journal["reply"] == "trial_ask_confirmation"
    # Nobody is needed any more: the staff queue is told (the gateway gives the conversation
    # back to the bot unless a person took it).
    assert resumed.events == [
        {
            "type": "handoff.withdrawn",
            "data": {"reason": "answered", "stage": "awaiting_confirmation"},
        }
    ]


def test_a_yes_after_the_bots_own_handoff_answers_the_paused_question() -> None:
    # The confirmation was asked twice with no usable answer; the person's next "sim" must
    # book, not wait in the staff queue.
    confirming = at_stage("awaiting_confirmation", desired_date="2026-02-10", desired_time="18:00")
    chat = Chat(state=confirming.model_copy(update={"asked": "confirmation"}))
    chat.say("hmm")
    handed = chat.say("sei la")
    assert handed.state.stage == "handoff_requested"
    plan = chat.plan_for("bora")
    assert plan.tool_call is not None and plan.tool_call.tool == "create_booking"


def test_after_a_handoff_the_person_asked_for_a_yes_still_waits_for_the_person() -> None:
    chat = Chat(state=at_stage("awaiting_confirmation", desired_date="2026-02-10"))
    chat.say("quero falar com um atendente")
    waiting = chat.say("ok")
    assert waiting.events == []
    assert waiting.journal["reply"] == "trial_handoff_waiting"
    assert waiting.state.stage == "handoff_requested"


def test_an_upset_customer_gets_a_person_with_an_apology() -> None:
    chat = booked_chat()
    out = chat.say("que descaso, perdi meu tempo indo ai!!", intents=["handoff"])
    assert out.state.stage == "handoff_requested"
    assert out.events[0]["data"]["reason"] == "upset"
    assert out.text == chat.text("trial_handoff_upset")


def test_a_question_at_the_confirmation_offers_the_other_times_and_a_yes_still_books() -> None:
    confirming = at_stage(
        "awaiting_confirmation",
        desired_date="2026-02-10",
        desired_time="18:00",
        asked="confirmation",
    )
    chat = Chat(state=confirming)
    out = chat.say("ah esqueci, terça tenho médico de tarde... tem de manhã?")
    assert out.journal["reply"] == "trial_reask_confirmation"
    assert "terça, 10/02 às 18:00" in out.text and "07:00" in out.text
    plan = chat.plan_for("sim")
    assert plan.tool_call is not None and plan.tool_call.args["time"] == "18:00"
    moved = Chat(state=out.state).say("então 7h")
    assert (moved.state.desired_time, moved.journal["reply"]) == ("07:00", "trial_ask_confirmation")


def test_after_the_booking_talk_ended_a_question_is_left_to_the_faq() -> None:
    chat = Chat(state=TrialState(nome="Sofia", asked="idade"))
    assert chat.say("ela tem 6 anos").journal["reply"] == "trial_too_young"
    out = chat.say("e com quantos anos ela pode começar?", intents=QUESTION)
    assert (out.text, out.nlg, out.asks_question) == ("", None, False)
    # A new request with data starts again.
    again = chat.say("então marca pra mim: Ana, 30 anos, iniciante")
    assert again.journal["reply"] == "trial_ask_date"


def test_repeating_what_was_read_is_still_an_answer() -> None:
    # At the confirmation the person says the slot again instead of "sim", twice: they are
    # answering (the reader finds the same day and time), so no handoff; the yes is asked again.
    confirming = at_stage("awaiting_confirmation", desired_date="2026-02-10", desired_time="18:00")
    chat = Chat(state=confirming.model_copy(update={"asked": "confirmation"}))
    chat.say("terça 10/02 às 18h")
    out = chat.say("terça dia 10, 18h")
    assert out.state.stage == "awaiting_confirmation" and out.events == []
