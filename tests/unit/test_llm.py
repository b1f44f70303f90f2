"""shared.llm against a real local OpenAI-compatible server, over HTTP."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from bench.fake_openai import (
    FakeOpenAI,
    Messages,
    fail,
    malformed,
    refuse,
    reply,
    reply_model,
)
from services.triage.models import LLMTriage, llm_triage_model
from shared.llm import LLMClient, LLMError, LLMSettings
from tests.support.fixtures import fake_openai_fixture, fake_openai_server_fixture  # noqa: F401

MESSAGES = [{"role": "user", "content": "quero agendar e onde fica a CT?"}]


def client_for(fake: FakeOpenAI, **overrides: object) -> LLMClient:
    settings = {"base_url": fake.base_url, "model": "fake-model", "timeout_s": 2.0, **overrides}
    return LLMClient(LLMSettings.model_validate(settings))


def classify_from_messages(messages: Messages) -> LLMTriage:
    """A stand-in model: reads the last user message, as a real model would."""
    text = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    intents = [i for i, word in (("trial", "agendar"), ("faq", "onde")) if word in text]
    return LLMTriage(intents=intents or ["general"])


async def test_success_returns_the_validated_model(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply_model(classify_from_messages))
    async with client_for(fake_openai) as llm:
        result = await llm.structured(MESSAGES, LLMTriage)
        assert result == LLMTriage(intents=["trial", "faq"])
        assert (llm.calls, llm.failures) == (1, 0)


async def test_request_carries_model_schema_and_json_schema_format(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply('{"intents": ["general"], "general_response": "Oi!"}'))
    async with client_for(fake_openai) as llm:
        await llm.structured(MESSAGES, LLMTriage)
    request = fake_openai.requests[0]
    assert request["model"] == "fake-model"
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"] == LLMTriage.model_json_schema()
    assert request["messages"][0] == MESSAGES[0]
    # The schema is in the prompt too, for servers that ignore response_format.
    assert json.dumps(LLMTriage.model_json_schema(), ensure_ascii=False) in str(
        request["messages"][-1]["content"]
    )


@pytest.mark.parametrize(
    ("mode", "expected"), [("json_object", {"type": "json_object"}), ("none", None)]
)
async def test_response_format_setting(
    fake_openai: FakeOpenAI, mode: str, expected: dict | None
) -> None:
    fake_openai.script(reply('{"intents": ["faq"]}'))
    async with client_for(fake_openai, response_format=mode) as llm:
        assert await llm.structured(MESSAGES, LLMTriage) == LLMTriage(intents=["faq"])
    assert fake_openai.requests[0].get("response_format") == expected


async def test_fenced_json_is_accepted(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply('```json\n{"intents": ["trial"]}\n```'))
    async with client_for(fake_openai) as llm:
        assert await llm.structured(MESSAGES, LLMTriage) == LLMTriage(intents=["trial"])


async def test_timeout_raises_llm_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply('{"intents": ["trial"]}', delay_ms=3000))
    async with client_for(fake_openai, timeout_s=0.2) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.structured(MESSAGES, LLMTriage)
        assert caught.value.kind == "timeout"
        assert (llm.calls, llm.failures) == (1, 1)


@pytest.mark.parametrize(("status", "kind"), [(500, "http"), (429, "rate_limit"), (400, "http")])
async def test_http_errors_raise_llm_error_without_retry(
    fake_openai: FakeOpenAI, status: int, kind: str
) -> None:
    fake_openai.script(fail(status), reply('{"intents": ["trial"]}'))
    async with client_for(fake_openai) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.structured(MESSAGES, LLMTriage)
    assert caught.value.kind == kind
    assert str(status) in caught.value.detail or kind == "rate_limit"
    assert len(fake_openai.requests) == 1  # max_retries=0: the scripted success was not used


async def test_malformed_json_raises_llm_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(malformed())
    async with client_for(fake_openai) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.structured(MESSAGES, LLMTriage)
    assert caught.value.kind == "invalid_json"


async def test_schema_mismatch_raises_llm_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply('{"intents": ["pizza"]}'))
    async with client_for(fake_openai) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.structured(MESSAGES, llm_triage_model(["trial", "faq", "handoff"]))
    assert caught.value.kind == "schema"


async def test_refusal_and_empty_content_raise_llm_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(refuse("não posso ajudar com isso"), reply(""))
    async with client_for(fake_openai) as llm:
        kinds = []
        for _ in range(2):
            with pytest.raises(LLMError) as caught:
                await llm.structured(MESSAGES, LLMTriage)
            kinds.append(caught.value.kind)
        assert kinds == ["refusal", "empty"]
        assert (llm.calls, llm.failures) == (2, 2)


async def test_connection_refused_raises_llm_error() -> None:
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", timeout_s=2.0)
    async with LLMClient(settings) as llm:
        with pytest.raises(LLMError) as caught:
            await llm.structured(MESSAGES, LLMTriage)
    assert caught.value.kind in {"connection", "timeout"}


class Nested(BaseModel):
    name: str
    tags: list[str]


async def test_any_pydantic_model_works(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply('{"name": "João", "tags": ["iniciante"]}'))
    async with client_for(fake_openai) as llm:
        assert await llm.structured(MESSAGES, Nested) == Nested(name="João", tags=["iniciante"])
