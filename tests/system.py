"""Real processes for tests: the whole system through ``orquestra up``, or single services."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from orquestra.redis_server import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# The wait after a message that may go on, in tests: the default (seconds, a person typing)
# would add that much to every statement a test sends. The burst tests run with the default.
TEST_FRAGMENT_MS = "400"


def service_env(redis_url: str, prefix: str, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "ORQ_PREFIX": prefix,
        "ORQ_LOG_LEVEL": "WARNING",
        "ORQ_LOG_JSON": "true",
        "ORQ_BURST_FRAGMENT_MS": TEST_FRAGMENT_MS,
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra)
    return env


class OutputWatcher:
    """Reads a child's output in a thread; lets a test await a line instead of sleeping."""

    def __init__(self, stream: Any) -> None:
        self.lines: deque[str] = deque(maxlen=400)
        self._seen = threading.Condition()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: Any) -> None:
        for raw in iter(stream.readline, b""):
            with self._seen:
                self.lines.append(raw.decode("utf-8", "replace").rstrip())
                self._seen.notify_all()
        with self._seen:
            self.lines.append("<eof>")
            self._seen.notify_all()

    def wait_for(self, needle: str, timeout_s: float) -> bool:
        with self._seen:
            return self._seen.wait_for(
                lambda: any(needle in line or line == "<eof>" for line in self.lines), timeout_s
            ) and any(needle in line for line in self.lines)

    def tail(self, n: int = 40) -> str:
        return "\n".join(list(self.lines)[-n:])


class System:
    def __init__(self, process: subprocess.Popen[bytes], port: int, watcher: OutputWatcher):
        self.process = process
        self.port = port
        self.watcher = watcher
        self.base_url = f"http://127.0.0.1:{port}"
        self.http = httpx.Client(base_url=self.base_url, timeout=30)

    @classmethod
    @contextmanager
    def up(cls, redis_url: str, prefix: str, *args: str, **env: str) -> Iterator[System]:
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "orquestra.cli", "up", "--port", str(port), *args],
            cwd=ROOT,
            env=service_env(redis_url, prefix, **env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        watcher = OutputWatcher(process.stdout)
        system = cls(process, port, watcher)
        token = env.get("ORQ_ADMIN_TOKEN") or env.get("ORQ_API_TOKEN")
        if token:
            system.http.headers["authorization"] = f"Bearer {token}"
        try:
            if not watcher.wait_for("orquestra: up:", 180):
                raise RuntimeError(f"system did not come up:\n{watcher.tail()}")
            yield system
        finally:
            system.stop()

    def stop(self) -> int:
        self.http.close()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return int(self.process.returncode)

    def post(self, conversation_id: str, text: str, **fields: Any) -> httpx.Response:
        body = {"conversation_id": conversation_id, "text": text, **fields}
        body.setdefault("message_id", uuid.uuid4().hex)
        return self.http.post("/v1/messages", json=body)

    def replies(self, conversation_id: str, after: str = "0-0", wait: float = 0) -> dict[str, Any]:
        response = self.http.get(
            f"/v1/conversations/{conversation_id}/replies", params={"after": after, "wait": wait}
        )
        response.raise_for_status()
        return response.json()

    def next_reply(self, conversation_id: str, after: str = "0-0", wait: float = 20) -> dict:
        """The first reply after ``after``, long-polling (no sleeping)."""
        data = self.replies(conversation_id, after, wait)
        if not data["replies"]:
            raise AssertionError(f"no reply within {wait}s\n{self.watcher.tail()}")
        return {**data["replies"][0], "cursor": data["cursor"]}

    def say(self, conversation_id: str, text: str, after: str = "0-0", **fields: Any) -> dict:
        """Post one message and return the reply to it."""
        response = self.post(conversation_id, text, **fields)
        assert response.status_code == 202, response.text
        return self.next_reply(conversation_id, after)

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        response = self.http.get(f"/v1/conversations/{conversation_id}")
        response.raise_for_status()
        return response.json()

    def journal(self, conversation_id: str) -> list[dict[str, Any]]:
        response = self.http.get(f"/v1/conversations/{conversation_id}/journal")
        response.raise_for_status()
        return response.json()["entries"]


@contextmanager
def service(
    name: str, redis_url: str, prefix: str, *args: str, **env: str
) -> Iterator[tuple[subprocess.Popen[bytes], OutputWatcher]]:
    """One replica of one service as its own process; its output can be awaited."""
    process = subprocess.Popen(
        [sys.executable, "-m", f"services.{name}", *args],
        cwd=ROOT,
        env=service_env(redis_url, prefix, **{"ORQ_LOG_LEVEL": "INFO", **env}),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    watcher = OutputWatcher(process.stdout)
    try:
        if not watcher.wait_for("started", 60):
            raise RuntimeError(f"{name} did not start:\n{watcher.tail()}")
        yield process, watcher
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def decode_entry(fields: dict[bytes, bytes]) -> bytes:
    """The body of a stream entry written by FastStream (its binary message format)."""
    from faststream.redis.parser.binary import BinaryMessageFormatV1

    body, _headers = BinaryMessageFormatV1.parse(fields[b"__data__"])
    return body
