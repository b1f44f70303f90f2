"""Triage's LLM side: the prompt, holding LLM answers to the rules, and hybrid mode end to end
against a local OpenAI-compatible server (success and fall back to rules on failure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.fake_openai import FakeOpenAI, Messages, fail, malformed, reply, reply_model
from services.triage.config import load_config
from services.triage.core import asks_llm, triage_turn
from services.triage.llm_prompt import from_llm, llm_messages
from services.triage.models import LLMTriage, TriageDecision, TriageResult, TriageState
from services.triage.rules import classify
from shared.llm import LLMClient, LLMError, LLMSettings
from shared.pack import load_pack
from tests.support.fixtures import fake_openai_fixture, fake_openai_server_fixture  # noqa: F401

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)
NOW = datetime(2026, 2, 3, 15, 0, tzinfo=UTC)


def test_prompt_has_context_line_only_mid_booking() -> None:
    idle = llm_messages("sim", trial_stage="booked", config=CONFIG)
    active = llm_messages("sim", trial_stage="ask_date", config=CONFIG)
    assert idle[0]["role"] == "system" and "CONTEXTO" not in idle[1]["content"]
    assert "[CONTEXTO:" in active[1]["content"] and "ask_date" in active[1]["content"]
    assert active[1]["content"].endswith("sim")


@pytest.mark.parametrize(
    ("output", "stage", "intents", "response"),
    [
        (LLMTriage(intents=["general", "trial"], general_response="Oi"), None, ["trial"], None),
        (LLMTriage(intents=["general"], general_response="Oi!"), None, ["general"], "Oi!"),
        (LLMTriage(intents=["general"], general_response="Oi!"), "ask_date", ["trial"], None),
        (LLMTriage(intents=["faq", "faq"]), "ask_date", ["faq"], None),
        (LLMTriage(intents=[]), None, [], None),
    ],
)
def test_llm_answers_follow_the_same_rules(
    output: LLMTriage, stage: str | None, intents: list[str], response: str | None
) -> None:
    result = from_llm(output, trial_stage=stage, config=CONFIG)
    assert (result.intents, result.general_response, result.source) == (intents, response, "llm")
    assert result.confidences == dict.fromkeys(intents, 1.0)


def test_llm_general_without_reply_uses_the_fallback_text() -> None:
    llm_result = from_llm(LLMTriage(intents=["general"]), trial_stage=None, config=CONFIG)
    decision = triage_turn(
        "qual a capital da frança?",
        state=None,
        trial_stage=None,
        now=NOW,
        config=CONFIG,
        pack=PACK,
        seed="t",
        classified=llm_result,
    )
    assert decision.intents == ["general"]
    assert decision.inline_text == PACK.text("general_fallback", seed="t")
    assert decision.journal["source"] == "llm"


async def hybrid(
    text: str, llm: LLMClient, stage: str | None = None, state: TriageState | None = None
) -> TriageDecision:
    """What the service shell does: rules, the LLM when unsure (unless the text settles a
    pending clarification), rules again on failure."""
    rules = classify(text, trial_stage=stage, config=CONFIG, pack=PACK, seed="t")
    llm_result: TriageResult | None = None
    if asks_llm("hybrid", text, rules, state, NOW, CONFIG):
        try:
            output = await llm.structured(
                llm_messages(text, trial_stage=stage, config=CONFIG), LLMTriage
            )
            llm_result = from_llm(output, trial_stage=stage, config=CONFIG)
        except LLMError:
            llm_result = None
    return triage_turn(
        text,
        state=state,
        trial_stage=stage,
        now=NOW,
        config=CONFIG,
        pack=PACK,
        seed="t",
        classified=llm_result,
    )


def robot_question(messages: Messages) -> LLMTriage:
    assert "vc é um robo?" in messages[1]["content"]
    return LLMTriage(intents=["general"], general_response="Sou o assistente virtual da CT! 🤖")


def client(fake: FakeOpenAI, timeout_s: float = 10.0) -> LLMClient:
    """A generous timeout, so a loaded machine never turns an answer into a failure; the
    timeout case sets its own, shorter than the server's delay."""
    return LLMClient(LLMSettings(base_url=fake.base_url, model="m", timeout_s=timeout_s))


async def test_hybrid_asks_the_llm_only_when_rules_are_unsure(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply_model(robot_question))
    async with client(fake_openai) as llm:
        sure = await hybrid("quero agendar uma aula experimental", llm)
        unsure = await hybrid("vc é um robo?", llm)
        assert llm.calls == 1
    assert sure.routes == ["trial"] and sure.journal["source"] == "rules"
    assert unsure.intents == ["general"] and unsure.journal["source"] == "llm"
    assert unsure.inline_text == "Sou o assistente virtual da CT! 🤖"


async def test_hybrid_does_not_ask_the_llm_for_a_menu_choice(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(fail(500))  # the menu opens (the LLM fails), then "2" answers it
    async with client(fake_openai) as llm:
        menu = await hybrid("hmm deixa eu pensar aqui", llm)
        assert menu.journal["clarification"] == "n1_menu" and llm.calls == 1
        chosen = await hybrid("2", llm, state=menu.state)
        assert llm.calls == 1
    assert chosen.journal["clarification"] == "n1_chosen"
    assert chosen.routes == [CONFIG.clarification.options[1].intent]


@pytest.mark.parametrize("step", [fail(500), fail(429), malformed(), reply("{}", delay_ms=2000)])
async def test_hybrid_falls_back_to_rules_on_any_llm_failure(
    fake_openai: FakeOpenAI, step: object
) -> None:
    fake_openai.script(step)  # type: ignore[arg-type]
    async with client(fake_openai, timeout_s=0.5) as llm:
        decision = await hybrid("hmm deixa eu pensar aqui", llm)
        assert (llm.calls, llm.failures) == (1, 1)
    assert decision.journal["source"] == "rules"
    assert decision.journal["clarification"] == "n1_menu"
