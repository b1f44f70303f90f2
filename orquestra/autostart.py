"""A private system for one developer command: ``orquestra up`` as a child process.

``orquestra chat --start`` and ``orquestra test`` (without ``--url``) run against a system of
their own, so they never share consumer groups or conversations with a bot already running on
the same Redis: the child gets a free port, a fresh key prefix and a throw-away data folder.
Its output goes to a log file (shown when it fails to come up) instead of mixing with the
command's own output. On exit the child is stopped like Ctrl-C stops ``orquestra up``, and
the keys it left on a shared Redis are deleted (an embedded Redis goes away with its folder).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from orquestra.client import Client
from orquestra.redis_server import free_port
from shared.settings import get_settings

READY_TIMEOUT_S = 90.0
STOP_GRACE_S = 20.0


class StartFailed(RuntimeError):
    """The child system did not become healthy; the message carries its log's tail."""


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _delete_prefix(url: str, prefix: str) -> None:
    """Delete the child's keys from the configured Redis, if that is the one it used.

    Tried whatever happened at start: the child may have found that Redis answering when we
    did not. With an embedded Redis nothing carries the (fresh) prefix, so nothing is deleted.
    """
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        for key in client.scan_iter(match=f"{prefix}*", count=1000):
            client.delete(key)
    except (redis.RedisError, OSError):
        return
    finally:
        client.close()


@contextmanager
def local_system() -> Iterator[str]:
    """Start a whole system, wait until ``/healthz`` is green, yield its base URL."""
    settings = get_settings()
    prefix = f"orqdev-{uuid.uuid4().hex[:8]}:"
    folder = Path(tempfile.mkdtemp(prefix="orquestra-dev-"))
    log_path = folder / "system.log"
    port = free_port()
    env = {**os.environ, "ORQ_PREFIX": prefix, "ORQ_LOG_JSON": "true", "PYTHONUNBUFFERED": "1"}
    args = [sys.executable, "-m", "orquestra.cli", "up", "--port", str(port)]
    args += ["--data-dir", str(folder / "data")]
    with log_path.open("wb") as log:
        process = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(process, url, log_path)
        yield url
    finally:
        _stop(process)
        _delete_prefix(settings.redis_url, prefix)
        shutil.rmtree(folder, ignore_errors=True)


def _wait_healthy(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    with Client(url) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                code = process.returncode
                raise StartFailed(f"the system exited with code {code}:\n{_tail(log_path)}")
            if client.healthy():
                return
            time.sleep(0.2)
    waited = f"{READY_TIMEOUT_S:.0f}s"
    raise StartFailed(f"the system was not healthy after {waited}:\n{_tail(log_path)}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
