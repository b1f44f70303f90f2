"""Issue 14 end to end: every question is heard — next to a booking request, next to an answer,
mid-booking, at the menu — and the menu never traps anyone (HTTP API, rules mode, business
time through ``sent_at``)."""

from __future__ import annotations

from datetime import timedelta

from services.triage.config import load_config
from tests.e2e.journey import PACK, Chat, assert_said, said, together
from tests.system import System

CLARIFY = load_config(PACK).clarification
START = "2026-03-02T10:00:00-03:00"  # a Monday
MINUTE = timedelta(minutes=1)
UNKNOWN = ("faq_unknown", "faq_unknown_partial")
# Over the pack's 150 characters, with no action word and no question: the menu opens.
LONG = (
    "Então, eu estava conversando com uns amigos no fim de semana sobre beach tennis e fiquei "
    "curiosa com tudo isso, principalmente porque nunca pratiquei nenhum esporte de raquete"
)


def no_unknown(reply: str) -> bool:
    return all(said(reply, key) is None for key in UNKNOWN)


def faq_asked(chat: Chat) -> dict:
    """The FAQ's journal entry for the last turn."""
    [entry] = [e for e in chat.journal("faq.answered") if e["turn_id"] == chat.last["turn_id"]]
    return entry


def test_questions_next_to_a_booking_request_are_all_answered(system: System) -> None:
    def address() -> None:
        chat = Chat(system, "q-request-address", START)
        reply = chat.say("quero agendar uma aula experimental e onde fica a CT?")
        assert chat.decided("triage")["routes"] == ["trial", "faq"]
        assert "Rua das Palmeiras, 250" in reply and no_unknown(reply)
        # The answer first, then the booking's next step closes the reply.
        assert reply.index("Rua das Palmeiras") < reply.index("nome")
        assert faq_asked(chat)["unanswered"] == []

    def price_and_parking() -> None:
        chat = Chat(system, "q-request-two", START)
        reply = chat.say(
            "quero agendar a experimental e saber o preço da mensalidade e se tem estacionamento"
        )
        assert "R$ 280" in reply and "estacionamento é gratuito" in reply
        assert no_unknown(reply)
        assert faq_asked(chat)["entry_ids"] == ["planos", "estacionamento"]
        assert chat.slice("trial")["stage"] == "collect_client_info"

    def long_story() -> None:
        chat = Chat(system, "q-long", START)
        reply = chat.say(
            "boa tarde, tenho 45 anos e faz tempo que nao faço exercicio, tenho uma dor no "
            "joelho que vai e volta. vcs abrem que horas? tem que pagar pra experimentar?"
        )
        assert "06:00 às 22:00" in reply and "*gratuita*" in reply
        assert chat.decided("triage")["clarification"] is None

    together(address, price_and_parking, long_story)


def test_mid_booking_a_question_is_answered_and_an_answer_next_to_it_is_kept(
    system: System,
) -> None:
    chat = Chat(system, "q-mid", START)
    assert_said(chat.say("quero agendar uma aula experimental"), "trial_ask_name")

    reply = chat.say("a partir de que idade pode?", after=MINUTE)
    decided = chat.decided("triage")
    assert decided["intents"] == ["faq"] and decided["routes"] == ["trial", "faq"]
    # The answer opens the reply; the booking's step (if re-asked) comes after it, and the
    # question was not read as a name.
    assert reply.startswith("👧") and "8 anos" in reply
    assert chat.slice("trial").get("nome") is None

    reply = chat.say("sou o Paulo, tenho 30 anos. vcs emprestam raquete?", after=MINUTE)
    assert chat.decided("triage")["routes"] == ["trial", "faq"]
    assert "empresta" in reply and no_unknown(reply)
    trial = chat.slice("trial")
    assert (trial["nome"], trial["idade"]) == ("Paulo", 30)

    reply = chat.say("ele é iniciante. tem estacionamento?", after=MINUTE)
    assert chat.decided("triage")["routes"] == ["trial", "faq"]
    assert "estacionamento é gratuito" in reply
    assert chat.slice("trial")["nivel"] == "iniciante"
    # The FAQ was asked the question only, not the level.
    assert faq_asked(chat)["entry_ids"] == ["estacionamento"]


def test_the_menu_takes_questions_and_requests_and_never_loops(system: System) -> None:
    def question() -> None:
        chat = Chat(system, "q-menu-question", START)
        chat.say(LONG)
        assert chat.decided("triage")["clarification"] == "n1_menu"
        reply = chat.say("tem aula pra criança?", after=MINUTE)
        assert "8 anos" in reply
        assert said(reply, CLARIFY.texts.confirm) is None
        assert chat.slice("triage")["pending"] is None

    def request() -> None:
        chat = Chat(system, "q-menu-request", START)
        chat.say(LONG)
        reply = chat.say("tô afim de experimentar o beach tennis", after=MINUTE)
        assert chat.decided("triage")["routes"] == ["trial"]
        assert_said(reply, "trial_ask_name")

    def unclear() -> None:
        chat = Chat(system, "q-menu-unclear", START)
        chat.say(LONG)
        again = chat.say("hmm", after=MINUTE)
        assert_said(again, CLARIFY.texts.invalid)
        chat.say("sei la", after=MINUTE)
        decided = chat.decided("triage")
        assert decided["clarification"] == "n1_handoff" and decided["intents"] == ["handoff"]
        assert chat.slice("triage")["pending"] is None

    together(question, request, unclear)
