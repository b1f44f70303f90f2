"""A local OpenAI-compatible chat server whose answers a test scripts.

The real ``openai`` client talks to it over HTTP, so tests exercise the client's own stack
(timeouts, status codes, response parsing) instead of patching it. Each request takes the next
scripted :class:`Step` (or the default step when the script is empty): answer with content,
possibly computed from the request's messages, after a delay, or fail with an HTTP status.

It lives in ``bench/`` because the benchmark's simulated LLM (``bench/llm_server.py``) is this
server with a fixed answer, and the tests import ``bench/`` while ``bench/`` never imports
``tests/``.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from bench.serve import serve_in_thread

Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class Step:
    """How the server answers one request."""

    content: str | Callable[[Messages], str] | None = None
    status: int = 200
    delay_ms: int = 0
    refusal: str | None = None


def reply(content: str | Callable[[Messages], str], *, delay_ms: int = 0) -> Step:
    """Answer with this content (or the content a callable computes from the messages)."""
    return Step(content=content, delay_ms=delay_ms)


def reply_model(build: Callable[[Messages], BaseModel], *, delay_ms: int = 0) -> Step:
    """Answer with the JSON of a model computed from the request's messages."""
    return Step(content=lambda messages: build(messages).model_dump_json(), delay_ms=delay_ms)


def fail(status: int, *, delay_ms: int = 0) -> Step:
    """Answer with an HTTP error status (500, 429...) and an OpenAI-style error body."""
    return Step(status=status, delay_ms=delay_ms)


def refuse(reason: str) -> Step:
    """Answer with a refusal instead of content."""
    return Step(refusal=reason)


def malformed() -> Step:
    """Answer 200 with content that is not JSON."""
    return Step(content='{"intents": ["trial", oops')


class FakeOpenAI:
    """The server, its script, and every request body it received."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.default = reply("{}")
        self._script: deque[Step] = deque()
        self._ids = itertools.count(1)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self.app = self._build_app()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    def script(self, *steps: Step) -> None:
        """Answer the next requests with these steps, in order."""
        self._script.extend(steps)

    def reset(self) -> None:
        self._script.clear()
        self.requests.clear()
        self.default = reply("{}")

    def _next_step(self) -> Step:
        return self._script.popleft() if self._script else self.default

    def _build_app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat_completions(request: Request) -> JSONResponse:
            body = await request.json()
            self.requests.append(body)
            step = self._next_step()
            if step.delay_ms:
                await asyncio.sleep(step.delay_ms / 1000)
            if step.status != 200:
                error = {"message": f"scripted {step.status}", "type": "fake", "code": None}
                return JSONResponse({"error": error}, status_code=step.status)
            content = step.content(body["messages"]) if callable(step.content) else step.content
            return JSONResponse(self._completion(body["model"], content, step.refusal))

        return app

    def _completion(self, model: str, content: str | None, refusal: str | None) -> dict:
        message = {"role": "assistant", "content": content, "refusal": refusal}
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def start(self) -> None:
        """Serve on a free port of 127.0.0.1 from a background thread."""
        self._server, self._thread, self._port = serve_in_thread(self.app, "fake OpenAI server")

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            # Do not wait for scripted delays still sleeping: nobody is listening any more.
            self._server.should_exit = self._server.force_exit = True
            self._thread.join(timeout=10)

    @classmethod
    @contextmanager
    def running(cls) -> Iterator[FakeOpenAI]:
        fake = cls()
        fake.start()
        try:
            yield fake
        finally:
            fake.stop()
