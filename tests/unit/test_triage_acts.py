"""Dialogue acts against the bot's last move (services/triage/acts.py), through triage_turn.

Sentences are this project's own: an offer is accepted or refused by a short reply, a wish is a
request, the menu comes only when nothing was understood, and an upset customer gets a person.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.triage.config import load_config
from services.triage.core import triage_turn
from services.triage.faq_evidence import faq_knows
from services.triage.models import TriageDecision, TriageState
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)
KNOWS = faq_knows(PACK, CONFIG)
T0 = datetime(2026, 2, 3, 15, 0, tzinfo=UTC)


def turn(
    text: str, state: TriageState | None = None, *, now: datetime = T0, stage: str | None = None
) -> TriageDecision:
    return triage_turn(
        text,
        state=state,
        trial_stage=stage,
        now=now,
        config=CONFIG,
        pack=PACK,
        seed="turn",
        knows=KNOWS,
    )


def after_trial_answer() -> TriageState:
    """The state after a question about the trial class, which the FAQ answers with an offer."""
    asked = turn("a aula experimental dura quanto tempo?")
    assert "faq" in asked.routes and "trial" not in asked.routes
    assert asked.state.last_move is not None and asked.state.last_move.intent == "trial"
    return asked.state


@pytest.mark.parametrize("reply", ["quero sim!", "bora", "pode ser", "quero", "claro, quero sim"])
def test_accepting_the_offer_starts_the_booking(reply: str) -> None:
    decision = turn(reply, after_trial_answer(), now=T0 + timedelta(minutes=2))
    assert decision.routes == ["trial"]
    assert decision.journal["clarification"] == "offer_accepted"
    # The trial gets the message itself: "quero! me chamo ..." carries the name.
    assert decision.text == reply


def test_the_acceptance_carries_what_follows_it_to_the_booking() -> None:
    reply = "quero! me chamo Renata e tenho 33"
    decision = turn(reply, after_trial_answer(), now=T0 + timedelta(minutes=1))
    assert decision.routes == ["trial"] and decision.text == reply


def test_refusing_the_offer_is_answered_politely_without_a_menu() -> None:
    decision = turn("agora não", after_trial_answer(), now=T0 + timedelta(minutes=1))
    assert decision.routes == [] and decision.state.pending is None
    assert decision.journal["clarification"] == "offer_declined"
    assert decision.inline_text in PACK.sections["texts"]["clarify_declined"]


@pytest.mark.parametrize("reply", ["ok, obrigada!", "show", "valeu"])
def test_acknowledging_the_answer_is_not_accepting_the_offer(reply: str) -> None:
    decision = turn(reply, after_trial_answer(), now=T0 + timedelta(minutes=1))
    assert decision.routes == [] and decision.intents == ["general"]


def test_an_offer_is_forgotten_like_a_menu() -> None:
    late = T0 + timedelta(minutes=CONFIG.clarification.expire_after_minutes + 1)
    decision = turn("quero sim", after_trial_answer(), now=late)
    assert decision.routes == [] and decision.journal["clarification"] == "n1_menu"


def test_an_answer_about_something_else_offers_nothing() -> None:
    decision = turn("onde vcs ficam?")
    assert decision.routes == ["faq"] and decision.state.last_move is None
    assert turn("quero sim", decision.state).journal["clarification"] == "n1_menu"


@pytest.mark.parametrize(
    "wish",
    [
        "bateu uma vontade de fazer uma aula com vocês",
        "tenho interesse em experimentar o beach tennis",
        "to curiosa pra conhecer a aula de vcs",
        "adoraria fazer uma aula teste",
        "tô afim de fazer uma aulinha",
    ],
)
def test_a_wish_is_a_request(wish: str) -> None:
    assert turn(wish).routes == ["trial"]


@pytest.mark.parametrize("text", ["aula experimental", "Experimental!", "agendamento"])
def test_a_message_that_is_only_an_options_name_is_that_request(text: str) -> None:
    decision = turn(text)
    assert decision.routes == ["trial"] and decision.inline_text is None


@pytest.mark.parametrize(
    "text",
    ["me chamo Otávio e tenho 29", "sou intermediária, 35 anos", "Bruna aqui, iniciante total"],
)
def test_booking_fields_get_the_booking_not_the_menu(text: str) -> None:
    decision = turn(text)
    assert decision.routes == ["trial"]
    assert decision.journal["clarification"] == "booking_fields"


@pytest.mark.parametrize(
    "text",
    [
        "olá! aqui é o Caio, tenho 36 anos e sou intermediário",
        "bom dia, meu nome é Luana, 27 anos, comecei a jogar faz 6 meses",
    ],
)
def test_a_greeting_in_front_of_booking_fields_is_no_small_talk(text: str) -> None:
    """A first message presenting the person with a booking's fields behind a greeting got a
    greeting back: what it said was not taken up."""
    decision = turn(text)
    assert decision.routes == ["trial"]
    assert decision.journal["clarification"] == "booking_fields"


def test_a_greeting_with_a_name_alone_is_still_small_talk() -> None:
    assert turn("olá! aqui é o Caio").routes == []


@pytest.mark.parametrize("text", ["às 18h", "meu nome é Bruna e trabalho numa academia aqui perto"])
def test_one_field_out_of_the_blue_still_asks(text: str) -> None:
    assert turn(text).journal["clarification"] == "n1_menu"


@pytest.mark.parametrize("text", ["tenho 41 anos", "sou intermediária"])
def test_one_field_answering_the_menu_gets_the_booking(text: str) -> None:
    menu = turn("hmmm deixa eu pensar aqui")
    decision = turn(text, menu.state, now=T0 + timedelta(minutes=1))
    assert decision.routes == ["trial"] and decision.journal["clarification"] == "n1_fields"


def test_booking_fields_answering_the_menu_get_the_booking() -> None:
    menu = turn("hmmm deixa eu pensar aqui")
    assert menu.journal["clarification"] == "n1_menu"
    decision = turn("my name is Otávio, 29 anos", menu.state, now=T0 + timedelta(minutes=1))
    assert decision.routes == ["trial"] and decision.journal["clarification"] == "n1_fields"
    assert decision.text == "my name is Otávio, 29 anos"


def test_the_menu_still_comes_when_nothing_was_understood() -> None:
    assert turn("hmmm deixa eu pensar aqui").journal["clarification"] == "n1_menu"


def test_an_upset_customer_is_handed_to_a_person() -> None:
    decision = turn("vcs são uns incompetentes, ninguém me responde!!!", stage="booked")
    assert "handoff" in decision.intents and decision.routes[0] == "trial"


def test_capitals_alone_are_not_anger() -> None:
    decision = turn("BOA TARDE, QUERO AGENDAR UMA AULA EXPERIMENTAL")
    assert "handoff" not in decision.intents


def test_booking_fields_answering_the_confirmation_are_a_yes() -> None:
    menu = turn("hmmm deixa eu pensar aqui")
    confirming = turn("experimentar", menu.state, now=T0 + timedelta(minutes=1))
    assert confirming.journal["clarification"] == "n2_confirm"
    reply = "Otávio, 29, jogo faz um ano"
    decision = turn(reply, confirming.state, now=T0 + timedelta(minutes=2))
    assert decision.routes == ["trial"] and decision.text == reply
    assert decision.journal["clarification"] == "n2_fields"


@pytest.mark.parametrize("reply", ["Pode", "pode sim!", "pode ser, claro"])
def test_a_yes_mid_booking_is_an_answer_not_a_question_for_the_faq(reply: str) -> None:
    decision = turn(reply, stage="awaiting_confirmation")
    assert decision.routes == ["trial"] and decision.intents == ["trial"]


def test_a_question_starting_like_a_yes_still_reaches_the_faq() -> None:
    decision = turn("pode levar acompanhante na aula?", stage="awaiting_confirmation")
    assert "faq" in decision.routes


def test_accepting_after_a_plans_answer_starts_the_enrollment() -> None:
    asked = turn("quanto fica o plano de três vezes por semana?", stage="booked")
    assert asked.routes == ["faq"]
    assert asked.state.last_move is not None and asked.state.last_move.intent == "enrollment"
    decision = turn("fechou, vou nesse", asked.state, now=T0 + timedelta(minutes=2), stage="booked")
    assert decision.routes == ["enrollment"]
    assert decision.journal["clarification"] == "offer_accepted"


def test_pointing_at_the_offered_plan_beats_the_funnels_question_beside_it() -> None:
    asked = turn("e o plano de duas vezes, quanto é?", stage="booked")
    later = T0 + timedelta(minutes=2)

    def reply(text: str) -> TriageDecision:
        return triage_turn(
            text,
            state=asked.state,
            trial_stage="booked",
            now=later,
            config=CONFIG,
            pack=PACK,
            seed="turn",
            knows=KNOWS,
            mode_pending=True,
        )

    assert reply("beleza, quero esse").routes == ["enrollment"]
    # A bare yes answers the funnel's own question.
    assert reply("sim").journal["clarification"] == "mode_yes"


def test_a_request_named_beside_a_yes_wins_over_the_offer() -> None:
    asked = turn("quanto é o plano de três vezes por semana?")
    assert asked.state.last_move is not None and asked.state.last_move.intent == "enrollment"
    later = T0 + timedelta(minutes=2)
    decision = turn(
        "ok, mas antes marca a aula experimental pra mim, sou a Clara", asked.state, now=later
    )
    assert decision.routes == ["trial"]
    assert decision.journal["clarification"] != "offer_accepted"
