"""Structured output from any OpenAI-compatible chat endpoint, failing in exactly one way.

Every service that may use an LLM (triage, trial, faq) goes through :class:`LLMClient`. Its one
job: send chat messages, get back a pydantic model, or raise :class:`LLMError` — for a
timeout, an HTTP error, a rate limit, a refusal, text that is not JSON, or JSON of the wrong
shape alike — so a caller needs a single ``except LLMError`` to fall back to its rules.

The JSON schema of the wanted model is always written into the prompt as well, so the client
works with servers that ignore ``response_format``; ``response_format`` is a setting because
servers differ in what they accept (``json_schema`` on OpenAI, ``json_object`` on most
OpenAI-compatible servers, nothing on the plainest ones).
"""

from __future__ import annotations

import asyncio
import json
from functools import cache
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

LLMErrorKind = Literal[
    "timeout", "connection", "rate_limit", "http", "refusal", "empty", "invalid_json", "schema"
]

_SCHEMA_INSTRUCTION = (
    "Reply with one JSON object that matches this JSON Schema, and nothing else:\n{schema}"
)


class LLMSettings(BaseModel):
    """Where and how to call the model; passed in by each service from its own settings."""

    base_url: str
    model: str
    # Servers without authentication ignore the key, but the client must send one.
    api_key: str = "no-key"
    timeout_s: float = 10.0
    # Retries multiply latency inside a turn that has a deadline; fall back to rules instead.
    max_retries: int = 0
    response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    temperature: float | None = 0.0


class LLMError(Exception):
    """Any failure to get a valid structured answer; ``kind`` says which, for logs and metrics."""

    def __init__(self, kind: LLMErrorKind, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


@cache
def _schema_instruction(model_cls: type[BaseModel]) -> str:
    """The prompt line carrying the model's JSON schema (built once per model: it never changes)."""
    schema = json.dumps(model_cls.model_json_schema(), ensure_ascii=False)
    return _SCHEMA_INSTRUCTION.format(schema=schema)


def _response_format(settings: LLMSettings, model_cls: type[BaseModel]) -> dict[str, Any] | None:
    if settings.response_format == "json_schema":
        schema = {"name": model_cls.__name__, "schema": model_cls.model_json_schema()}
        return {"type": "json_schema", "json_schema": {**schema, "strict": False}}
    if settings.response_format == "json_object":
        return {"type": "json_object"}
    return None


def _json_text(content: str) -> str:
    """The JSON inside a reply, without the Markdown fence some models wrap it in."""
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()


def _parse(content: str | None, model_cls: type[M]) -> M:
    if not content or not content.strip():
        raise LLMError("empty", "the model returned no content")
    try:
        data = json.loads(_json_text(content))
    except json.JSONDecodeError as exc:
        raise LLMError("invalid_json", f"{exc.msg} at {exc.pos}: {content[:200]!r}") from exc
    try:
        return model_cls.model_validate(data)
    except ValidationError as exc:
        raise LLMError("schema", str(exc)[:500]) from exc


class LLMClient:
    """An AsyncOpenAI client with one structured-output call and call counters.

    ``calls`` counts every call attempted and ``failures`` those that raised, so a benchmark
    can report LLM calls per turn and a service can export them as metrics.
    """

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.calls = 0
        self.failures = 0
        # Imported here and in _structured, not at the top: the openai package takes longer to
        # import than all the rest of a service, and a service in rules mode never builds a
        # client. After the first import, the one in _structured is a dictionary lookup.
        import openai

        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
        )

    async def structured(self, messages: list[dict[str, Any]], model_cls: type[M]) -> M:
        """Ask for ``model_cls`` as JSON and validate it; any failure is an ``LLMError``."""
        self.calls += 1
        try:
            return await self._structured(messages, model_cls)
        except LLMError:
            self.failures += 1
            raise

    async def _structured(self, messages: list[dict[str, Any]], model_cls: type[M]) -> M:
        instruction = {"role": "system", "content": _schema_instruction(model_cls)}
        options: dict[str, Any] = {}
        response_format = _response_format(self.settings, model_cls)
        if response_format is not None:
            options["response_format"] = response_format
        if self.settings.temperature is not None:
            options["temperature"] = self.settings.temperature
        import openai

        try:
            # The client's own timeout covers each network phase; this bounds the whole call.
            async with asyncio.timeout(self.settings.timeout_s):
                completion = await self._client.chat.completions.create(
                    model=self.settings.model,
                    messages=[*messages, instruction],  # type: ignore[list-item]
                    **options,
                )
        except (TimeoutError, openai.APITimeoutError) as exc:
            raise LLMError("timeout", f"no answer within {self.settings.timeout_s}s") from exc
        except openai.RateLimitError as exc:
            raise LLMError("rate_limit", str(exc)[:300]) from exc
        except openai.APIStatusError as exc:
            raise LLMError("http", f"HTTP {exc.status_code}: {str(exc)[:300]}") from exc
        except openai.APIConnectionError as exc:
            raise LLMError("connection", str(exc)[:300]) from exc
        except openai.OpenAIError as exc:
            raise LLMError("http", f"{type(exc).__name__}: {str(exc)[:300]}") from exc
        if not completion.choices:
            raise LLMError("empty", "the response has no choices")
        message = completion.choices[0].message
        if message.refusal:
            raise LLMError("refusal", message.refusal[:300])
        return _parse(message.content, model_cls)

    async def aclose(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()
