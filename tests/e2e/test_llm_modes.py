"""The LLM path across real processes: the services call a local OpenAI-compatible server with
the real ``openai`` client; any failure falls back to the rules and is journaled."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from bench.fake_openai import FakeOpenAI, Messages, fail, reply
from tests.system import System

MODEL_SAYS = "(resposta do modelo)"


def answer(messages: Messages) -> str:
    """Answer whichever service asks, recognised by the JSON schema in its prompt."""
    prompt = " ".join(str(m["content"]) for m in messages)
    if "ids_used" in prompt:
        return json.dumps(
            {"answer": f"Ficamos na Rua das Palmeiras, 250 {MODEL_SAYS}", "ids_used": ["endereco"]}
        )
    if "desired_date" in prompt:
        return json.dumps({"nome": None, "idade": None, "nivel": None})
    if "intents" in prompt:
        return json.dumps({"intents": ["faq"], "general_response": None})
    return json.dumps({"text": ""})  # phrasing: an empty text means "say the fallback"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI.running() as server:
        yield server


@pytest.fixture(scope="module")
def llm_system(redis_url: str, prefix: str, fake: FakeOpenAI) -> Iterator[System]:
    with System.up(
        redis_url,
        f"{prefix}llm:",
        ORQ_NLU_MODE="llm",
        ORQ_LLM_BASE_URL=fake.base_url,
        ORQ_LLM_TIMEOUT_S="5",
    ) as system:
        yield system


def llm_events(system: System, conversation: str) -> list[tuple[str, str]]:
    return [
        (e["service"], e["event"])
        for e in system.journal(conversation)
        if e["event"].startswith("llm.")
    ]


def test_llm_mode_understands_and_phrases_through_the_real_client(
    llm_system: System, fake: FakeOpenAI
) -> None:
    fake.reset()
    fake.default = reply(answer)
    conversation = f"llm-{uuid.uuid4().hex[:8]}"
    result = llm_system.say(conversation, "onde fica a CT?")
    assert MODEL_SAYS in result["text"]
    assert ("triage", "llm.used") in llm_events(llm_system, conversation)
    assert ("faq", "llm.used") in llm_events(llm_system, conversation)
    assert llm_system.conversation(conversation)["triage"]["last_source"] == "llm"
    assert fake.requests, "the services reached the server over HTTP"


def test_any_llm_failure_falls_back_to_the_rules(llm_system: System, fake: FakeOpenAI) -> None:
    fake.reset()
    fake.default = fail(500)
    conversation = f"llm-{uuid.uuid4().hex[:8]}"
    result = llm_system.say(conversation, "onde fica a CT?")
    assert "Rua das Palmeiras" in result["text"] and MODEL_SAYS not in result["text"]
    fallbacks = [e for e in llm_system.journal(conversation) if e["event"] == "llm.fallback"]
    assert {e["service"] for e in fallbacks} >= {"triage"}
    assert all(e["kind"] == "http" for e in fallbacks)
    assert llm_system.conversation(conversation)["triage"]["last_source"] == "rules"
