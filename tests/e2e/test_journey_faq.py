"""Issue 6 end to end: grounded FAQ answers through the HTTP API, composed with the trial's
part when a message asks both, and an honest answer (recorded for the business) otherwise."""

from __future__ import annotations

import subprocess
import sys

from shared.faq.config import FaqConfig
from tests.e2e.journey import PACK, Bus, Chat, assert_said, together
from tests.system import ROOT, System, service_env

FAQ = PACK.section("faq", FaqConfig)
START = "2026-03-02T10:00:00-03:00"


def answer_of(entry_id: str) -> str:
    return next(e.answer for e in FAQ.entries if e.id == entry_id).strip()


def test_where_is_it_answers_the_address(system: System) -> None:
    chat = Chat(system, "faq-where", START)
    reply = chat.say("onde fica a CT?")
    assert answer_of("endereco") in reply
    assert "Rua das Palmeiras, 250" in reply and "Vila Mariana" in reply
    [answered] = chat.journal("faq.answered")
    assert answered["entry_ids"] == ["endereco"] and answered["unanswered"] == []
    assert answered["source"] == "rules"


def test_trial_and_faq_in_one_message_get_both_answers_in_one_reply(system: System) -> None:
    def trial_and_faq() -> None:
        chat = Chat(system, "faq-both", START)
        reply = chat.say("quero agendar e onde fica a CT?")
        assert_said(reply, "trial_ask_name")
        assert answer_of("endereco") in reply
        [merged] = chat.journal("merge.complete")
        assert {"trial", "faq"} <= set(merged["sources"]) and merged["missing"] == []
        assert len(system.replies(chat.id)["replies"]) == 1

    def two_questions() -> None:
        chat = Chat(system, "faq-two", START)
        reply = chat.say("onde fica e quanto custa?")
        assert answer_of("endereco") in reply and answer_of("planos") in reply
        [answered] = chat.journal("faq.answered")
        assert answered["entry_ids"] == ["endereco", "planos"]

    together(trial_and_faq, two_questions)


def test_unknown_question_is_answered_honestly_and_listed_as_unanswered(
    system: System, redis_url: str, prefix: str
) -> None:
    chat = Chat(system, "faq-unknown", START)
    question = "vocês vendem patins de gelo usados"
    bus = Bus(redis_url, prefix)
    with bus.subscribe(bus.keys.unanswered) as recorded:
        reply = chat.say(f"{question}?")
        recorded.wait(lambda r: r["conversation_id"] == chat.id)
    assert_said(reply, FAQ.unknown_text_key)
    assert "Rua das Palmeiras" not in reply
    [answered] = chat.journal("faq.answered")
    assert answered["entry_ids"] == [] and answered["unanswered"] == [question]

    listed = subprocess.run(
        [sys.executable, "-m", "orquestra.cli", "unanswered"],
        cwd=ROOT,
        env=service_env(redis_url, prefix),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    rows = [line.split(None, 1) for line in listed.stdout.splitlines()[1:]]
    assert ["1", question] in rows, listed.stdout
