"""Issue 3 end to end: triage routes single, multi and general intents, keeps a booking going,
and clarifies (N1 menu → N2 confirmation → routed) through the HTTP API on business time."""

from __future__ import annotations

from datetime import timedelta

from services.triage.config import load_config
from tests.e2e.journey import PACK, Chat, assert_said, said, together
from tests.system import System

CONFIG = load_config(PACK)
CLARIFY = CONFIG.clarification
START = "2026-03-02T10:00:00-03:00"  # a Monday
# Over the pack's 150 characters and without an action word: the rules cannot place it.
LONG = (
    "Então, eu estava conversando com uns amigos no fim de semana sobre beach tennis e fiquei "
    "curiosa com tudo isso, principalmente porque nunca pratiquei nenhum esporte de raquete"
)
MINUTE = timedelta(minutes=1)


def menu() -> str:
    return "\n".join(
        f"{number}. {PACK.text(option.label_key)}"
        for number, option in enumerate(CLARIFY.options, start=1)
    )


def option_subject(option_id: str) -> str:
    option = next(o for o in CLARIFY.options if o.id == option_id)
    return PACK.text(option.subject_key or "")


def assert_menu(reply: str, *, invalid: bool) -> None:
    assert_said(reply, CLARIFY.texts.invalid if invalid else CLARIFY.texts.ask)
    assert menu() in reply


def test_single_multi_and_general_intents_route_and_journal_their_source(
    system: System,
) -> None:
    cases = {
        "onde fica a CT?": ["faq"],
        "quero agendar uma aula experimental": ["trial"],
        "quero agendar e onde fica a CT?": ["trial", "faq"],
        "oi, tudo bem?": ["general"],
    }

    def run(text: str) -> tuple[Chat, str]:
        chat = Chat(system, "triage-route", START)
        return chat, chat.say(text)

    results = together(*(lambda t=text: run(t) for text in cases))
    for (chat, _reply), (text, intents) in zip(results, cases.items(), strict=True):
        decided = chat.decided("triage")
        routes = [i for i in intents if i != "general"]
        assert decided["intents"] == intents and decided["routes"] == routes, text
        assert decided["source"] == "rules"
        triage = chat.slice("triage")
        assert triage["last_intents"] == intents and triage["last_source"] == "rules"
        assert all(triage["last_confidences"][i] >= CONFIG.threshold for i in intents)
        [merged] = chat.journal("merge.complete")
        # Answers come before the part that asks the next step (trial asks the name).
        asking_last = sorted(routes, key=lambda route: route == "trial")
        sources = ["triage"] if intents == ["general"] else asking_last
        assert [s for s in merged["sources"] if s != "mode_router"] == sources, text

    (_, faq), (_, trial), (multi_chat, multi), (greeting_chat, greeting) = results
    assert "Rua das Palmeiras, 250" in faq
    assert_said(trial, "trial_ask_name")
    # Both specialists ran and the merger composed their answers into one reply: the answer
    # first, then the booking's question, and no "não sei" for the booking request.
    first, second = multi.split("\n\n", 1)
    assert "Rua das Palmeiras, 250" in first
    assert_said(second, "trial_ask_name")
    assert not said(multi, "faq_unknown") and not said(multi, "faq_unknown_partial")
    assert len(multi_chat.system.replies(multi_chat.id)["replies"]) == 1
    # general is alone and carries the pack's small-talk reply; no specialist ran.
    assert_said(greeting, "general_greeting")
    assert greeting_chat.state()["trial"] is None


def booking_until_confirmation(system: System, hour: str) -> Chat:
    chat = Chat(system, "triage-mid", START)
    reply = chat.say(
        f"quero agendar uma aula experimental: sou a Nina, 22 anos, iniciante, 10/03 às {hour}"
    )
    assert_said(reply, "trial_ask_confirmation", data="terça, 10/03", hora=hour)
    return chat


def test_mid_booking_answers_go_to_trial_and_clear_questions_to_faq(system: System) -> None:
    def plain_yes() -> None:
        chat = booking_until_confirmation(system, "19:00")
        reply = chat.say("sim", after=MINUTE)
        decided = chat.decided("triage")
        assert decided["intents"] == ["trial"]
        assert decided["active_context"] == "awaiting_confirmation"
        assert_said(reply, "trial_booked", nome="Nina", data="terça, 10/03", hora="19:00")
        assert chat.slice("trial")["stage"] == "booked"

    def question_then_yes_and_question() -> None:
        chat = booking_until_confirmation(system, "20:00")
        reply = chat.say("onde fica a CT?", after=MINUTE)
        # A question: faq answers it, and the booking hears the turn to re-ask its step.
        decided = chat.decided("triage")
        assert decided["intents"] == ["faq"] and decided["routes"] == ["trial", "faq"]
        assert reply.startswith("📍") and "Rua das Palmeiras, 250" in reply
        assert chat.slice("trial")["stage"] == "awaiting_confirmation"

        reply = chat.say("sim, e onde fica?", after=MINUTE)
        assert chat.decided("triage")["routes"] == ["trial", "faq"]
        assert_said(reply, "trial_booked", nome="Nina", data="terça, 10/03", hora="20:00")
        assert "Rua das Palmeiras, 250" in reply
        # The "sim" is an answer to the booking, not a question for the FAQ.
        faq = [e for e in chat.journal("faq.answered") if e["turn_id"] == chat.last["turn_id"]]
        assert faq[0]["entry_ids"] == ["endereco"]

    together(plain_yes, question_then_yes_and_question)


def test_n1_menu_invalid_choice_then_n2_confirmation_routes_the_original_message(
    system: System,
) -> None:
    chat = Chat(system, "triage-n1", START)
    assert_menu(chat.say(LONG), invalid=False)
    decided = chat.decided("triage")
    assert decided["intents"] == [] and decided["clarification"] == "n1_menu"
    assert chat.slice("triage")["pending"]["original_message"] == LONG

    assert_menu(chat.say("banana", after=MINUTE), invalid=True)
    assert chat.decided("triage")["clarification"] == "n1_invalid"

    reply = chat.say("a primeira", after=MINUTE)
    assert_said(reply, CLARIFY.texts.confirm, subject=option_subject("trial"))
    pending = chat.slice("triage")["pending"]
    assert pending["stage"] == "awaiting_confirmation" and pending["chosen_option"] == "trial"
    assert chat.state()["trial"] is None

    reply = chat.say("sim", after=MINUTE)
    decided = chat.decided("triage")
    assert decided["clarification"] == "n2_yes" and decided["forced_by_clarification"] is True
    assert decided["routes"] == ["trial"]
    assert chat.slice("triage")["pending"] is None
    # trial got the ORIGINAL message: "nunca pratiquei" in it made the person a beginner.
    assert chat.decided("trial")["extracted"] == {"nivel": "iniciante"}
    assert chat.slice("trial")["nivel"] == "iniciante"
    assert_said(reply, "trial_ask_name")


def test_n1_choice_by_word_cancel_and_n2_refusal(system: System) -> None:
    def by_word() -> None:
        chat = Chat(system, "triage-word", START)
        chat.say(LONG)
        chat.say("dúvida", after=MINUTE)  # the faq option needs no confirmation
        decided = chat.decided("triage")
        assert decided["clarification"] == "n1_chosen" and decided["routes"] == ["faq"]
        assert decided["forced_by_clarification"] is True
        assert chat.slice("triage")["pending"] is None

    def cancel() -> None:
        chat = Chat(system, "triage-cancel", START)
        chat.say(LONG)
        cancel_number = str(next(i for i, o in enumerate(CLARIFY.options, 1) if o.id == "cancel"))
        assert_said(chat.say(cancel_number, after=MINUTE), CLARIFY.texts.cancelled)
        assert chat.decided("triage")["clarification"] == "n1_cancelled"
        assert chat.slice("triage")["pending"] is None

    def refuse() -> None:
        chat = Chat(system, "triage-refuse", START)
        chat.say(LONG)
        chat.say("1", after=MINUTE)
        assert_said(chat.say("não", after=MINUTE), CLARIFY.texts.declined)
        assert chat.decided("triage")["clarification"] == "n2_no"
        assert chat.slice("triage")["pending"] is None and chat.state()["trial"] is None

    together(by_word, cancel, refuse)


def test_a_pending_clarification_expires_on_business_time(system: System) -> None:
    limit = timedelta(minutes=CLARIFY.expire_after_minutes)

    def answered_in_time() -> None:
        chat = Chat(system, "triage-in-time", START)
        chat.say(LONG)
        reply = chat.say("1", after=limit - MINUTE)
        assert_said(reply, CLARIFY.texts.confirm, subject=option_subject("trial"))

    def menu_expired() -> None:
        chat = Chat(system, "triage-expired-n1", START)
        chat.say(LONG)
        reply = chat.say("1", after=limit + MINUTE)
        decided = chat.decided("triage")
        assert decided["pending_expired"] == "awaiting_context"
        assert said(reply, CLARIFY.texts.confirm, subject=option_subject("trial")) is None

    def confirmation_expired() -> None:
        chat = Chat(system, "triage-expired-n2", START)
        chat.say(LONG)
        chat.say("1", after=MINUTE)
        chat.say("sim", after=limit + MINUTE)
        decided = chat.decided("triage")
        assert decided["pending_expired"] == "awaiting_confirmation"
        assert decided["routes"] == [] and chat.state()["trial"] is None

    together(answered_in_time, menu_expired, confirmation_expired)
