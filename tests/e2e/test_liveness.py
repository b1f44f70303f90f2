"""Self-healing liveness (issue 15): the whole system through a Redis outage longer than the
clients' own reconnect retries, on an embedded Redis of the test's own that it can stop."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx

from orquestra.redis_server import EmbeddedRedis
from tests.system import System

# Longer than a client's reconnect retries (about 9 s, shared/connections.py): every command
# in flight fails, and every background loop meets the error.
OUTAGE_S = 15.0


def healthy_within(system: System, timeout_s: float) -> dict | None:
    """The first 200 body of /healthz within ``timeout_s`` (polled), else None."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            response = system.http.get("/healthz", timeout=5)
            if response.status_code == 200:
                return response.json()
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return None


def test_after_a_15s_redis_outage_health_and_answers_come_back(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis", persist=True).start()
    try:
        with System.up(server.url, f"outage-{uuid.uuid4().hex[:6]}:") as system:
            assert system.say(f"before-{uuid.uuid4().hex[:8]}", "onde fica a CT?")["text"]
            assert healthy_within(system, 10) is not None
            server.stop()
            server.process = None
            time.sleep(OUTAGE_S)  # the fault itself: Redis stays away this long
            server.start()  # same port, same data folder
            health = healthy_within(system, 60)
            assert health is not None, f"/healthz never 200 again\n{system.watcher.tail()}"
            assert health["missing"] == []
            assert system.say(f"after-{uuid.uuid4().hex[:8]}", "onde fica a CT?")["text"]
            # The loops did fail, and said so, rather than dying silently.
            assert system.watcher.wait_for("background loop failed; restarting", 1)
    finally:
        server.stop()
