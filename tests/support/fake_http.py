"""A small real HTTP server standing in for a provider we cannot run in a test (Chatwoot,
Evolution API): it records every request, and answers each from a script or with the provider's
success. The gateway's real adapters talk to it over HTTP, so tests exercise their own clients,
retries and claims. Tests wait on what it received (``wait_for``), never sleep.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from bench.serve import serve_in_thread


@dataclass(frozen=True)
class Step:
    """How the fake answers one request; ``body=None``: the provider's success. With ``hold``,
    the answer waits until the test sets that event (the request is recorded at once)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    hold: threading.Event | None = None


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeServer:
    """Subclasses route requests: ``script_key`` names whose script a request takes a step
    from, ``success`` makes the provider's success answer, ``authorized`` checks credentials."""

    name = "fake provider"

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._scripts: dict[str, deque[Step]] = defaultdict(deque)
        self._changed = threading.Condition()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self.app = FastAPI()

        @self.app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
        async def any_request(path: str, request: Request) -> JSONResponse:
            try:
                body = await request.json()
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in request.headers.items()}
            recorded = Recorded(request.method, "/" + path, headers, body)
            with self._changed:
                self.requests.append(recorded)
                script = self._scripts[self.script_key(recorded)]
                step = script.popleft() if script else None
                self._changed.notify_all()
            if step is not None and step.hold is not None:
                await asyncio.to_thread(step.hold.wait, 30)
            refusal = self.authorized(recorded)
            if refusal is not None:
                return refusal
            if step is None or step.body is None:
                status = step.status if step else self.success_status
                return JSONResponse(self.success(recorded), status_code=status)
            return JSONResponse(step.body, status_code=step.status, headers=step.headers)

    success_status = 200

    def script_key(self, request: Recorded) -> str:
        return request.path

    def success(self, request: Recorded) -> Any:
        return {}

    def authorized(self, request: Recorded) -> JSONResponse | None:
        return None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def script(self, key: str, *steps: Step) -> None:
        with self._changed:
            self._scripts[key].extend(steps)

    def received(self, predicate: Callable[[Recorded], bool]) -> list[Recorded]:
        with self._changed:
            return [r for r in self.requests if predicate(r)]

    def wait_for(
        self, predicate: Callable[[list[Recorded]], bool], timeout_s: float = 30
    ) -> list[Recorded]:
        """Block until ``predicate(requests)`` holds; the requests so far."""
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(self.requests), timeout_s):
                raise AssertionError(f"{self.name}: condition not met; got {self.requests!r}")
            return list(self.requests)

    def start(self) -> None:
        self._server, self._thread, self._port = serve_in_thread(self.app, self.name)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
