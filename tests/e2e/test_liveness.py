"""Self-healing liveness (issue 15): the whole system through a Redis outage longer than the
clients' own reconnect retries, on an embedded Redis of the test's own that it can stop."""

from __future__ import annotations

import os
import re
import signal
import sys
import time
import uuid
from pathlib import Path
from subprocess import PIPE, STDOUT, Popen

import httpx

from orquestra.redis_server import EmbeddedRedis, free_port
from tests.system import ROOT, OutputWatcher, System, service_env

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
            down_at = time.monotonic()
            # A request meanwhile is told to retry (503, Retry-After), not a server error.
            response = system.http.get("/v1/conversations/during/replies", timeout=30)
            assert response.status_code == 503, response.text
            assert response.headers["Retry-After"]
            assert system.watcher.wait_for("redis unavailable; answered 503", 5)
            # The fault itself: Redis stays away this long.
            time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - down_at)))
            server.start()  # same port, same data folder
            health = healthy_within(system, 60)
            assert health is not None, f"/healthz never 200 again\n{system.watcher.tail()}"
            assert health["missing"] == []
            assert system.say(f"after-{uuid.uuid4().hex[:8]}", "onde fica a CT?")["text"]
            # The loops did fail, and said so, rather than dying silently.
            assert system.watcher.wait_for("background loop failed; restarting", 1)
    finally:
        server.stop()


def up_in_own_session(redis_url: str, *args: str) -> tuple[Popen, OutputWatcher, int]:
    """``orquestra up`` as a terminal runs it: its own process group, so a test can send the
    group the SIGINT a Ctrl-C sends, without signalling pytest."""
    port = free_port()
    process = Popen(
        [sys.executable, "-m", "orquestra.cli", "up", "--port", str(port), *args],
        cwd=ROOT,
        env=service_env(redis_url, f"up-{uuid.uuid4().hex[:6]}:"),
        stdout=PIPE,
        stderr=STDOUT,
        start_new_session=True,
    )
    return process, OutputWatcher(process.stdout), port


def test_up_restarts_its_embedded_redis_and_ctrl_c_stops_services_then_redis(
    redis_url: str, tmp_path: Path
) -> None:
    """``--embedded`` even though REDIS_URL answers; kill -9 of the embedded redis-server: it
    comes back with the same data folder and the bot answers; then Ctrl-C (SIGINT to the
    process group) stops the services, then Redis, with no traceback."""
    data = tmp_path / "data"
    process, watcher, port = up_in_own_session(redis_url, "--embedded", "--data-dir", str(data))
    system = System(process, port, watcher)
    try:
        assert watcher.wait_for("orquestra: up:", 180), watcher.tail()
        (started,) = [line for line in watcher.lines if "started embedded Redis" in line]
        assert "because --embedded" in started and str(data / "redis") in started
        pid = int(re.search(r"\(pid (\d+),", started).group(1))  # type: ignore[union-attr]
        conversation = f"kept-{uuid.uuid4().hex[:8]}"
        assert system.say(conversation, "quero agendar uma aula experimental")["text"]
        aof = data / "redis" / "appendonly.aof"
        deadline = time.monotonic() + 20  # fsync every second: await the write, not a clock
        while conversation.encode() not in aof.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.2)

        os.kill(pid, signal.SIGKILL)  # the embedded redis-server, a child of ours
        assert watcher.wait_for("embedded Redis exited with code", 30), watcher.tail()
        assert watcher.wait_for("embedded Redis restarted on", 30), watcher.tail()
        (restarting,) = [line for line in watcher.lines if "restarting it with data in" in line]
        assert str(data / "redis") in restarting
        assert healthy_within(system, 60) is not None, watcher.tail()
        assert system.say(f"after-{uuid.uuid4().hex[:8]}", "onde fica a CT?")["text"]
        # Same data folder: the conversation from before the crash is still there.
        assert system.conversation(conversation)["trial"] is not None

        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
        process.wait(30)
        assert watcher.wait_for("orquestra: stopped", 5), watcher.tail()
        lines = list(watcher.lines)
        after = lines[lines.index("orquestra: stopping") :]
        assert process.returncode == 0, "\n".join(after)
        assert not [line for line in after if "Traceback" in line], "\n".join(after)
        services_at = next(
            i for i, line in enumerate(after) if "services" in line and "stopping" in line
        )
        redis_at = next(i for i, line in enumerate(after) if "stopping embedded Redis" in line)
        assert services_at < redis_at
    finally:
        system.stop()  # SIGINT to the supervisor alone if the test stopped early; no-op if done
