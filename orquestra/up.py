"""``orquestra up``: Redis plus every service as its own child process, supervised.

Uses ``REDIS_URL`` when it answers, else launches the embedded server. A child that dies is
reported and restarted (with a limit, so a crash loop stops the system instead of spinning).
Ctrl-C or SIGTERM stops every child (SIGTERM, then SIGKILL after a grace period) and the
embedded Redis; children also exit on their own if this supervisor is killed outright.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from orquestra.redis_server import EmbeddedRedis, reachable
from shared.keys import SERVICES
from shared.settings import get_settings

WORKERS = [s for s in SERVICES if s != "gateway"]
RESTARTS_PER_MINUTE = 5
GRACE_S = 10.0


@dataclass
class Child:
    service: str
    replica: int
    args: list[str]
    process: subprocess.Popen[bytes] | None = None
    restarts: deque[float] = field(default_factory=deque)

    @property
    def label(self) -> str:
        return f"{self.service}#{self.replica}"


def parse_scale(values: list[str]) -> dict[str, int]:
    scale: dict[str, int] = {}
    for value in values:
        for item in value.split(","):
            name, _, count = item.partition("=")
            name = name.strip()
            if name not in WORKERS or not count.strip().isdigit() or int(count) < 1:
                raise ValueError(
                    f"--scale takes SERVICE=N with N >= 1 and SERVICE one of {', '.join(WORKERS)}"
                    f" (got {item!r})"
                )
            scale[name] = int(count)
    return scale


class Supervisor:
    def __init__(self, port: int, scale: dict[str, int], data_dir: Path, redis_url: str) -> None:
        self.port = port
        self.scale = scale
        self.data_dir = data_dir
        self.redis_url = redis_url
        self.embedded: EmbeddedRedis | None = None
        self.children: list[Child] = []
        self.stopping = False

    def say(self, message: str) -> None:
        print(f"orquestra: {message}", file=sys.stderr, flush=True)

    def start_redis(self) -> str:
        if reachable(self.redis_url):
            self.say(f"using Redis at {self.redis_url}")
            return self.redis_url
        self.embedded = EmbeddedRedis(self.data_dir / "redis").start()
        self.say(f"no Redis at {self.redis_url}; started embedded Redis on {self.embedded.url}")
        return self.embedded.url

    def spawn(self, child: Child, env: dict[str, str]) -> None:
        child.process = subprocess.Popen(child.args, env=env)

    def run(self) -> int:
        url = self.start_redis()
        env = {**os.environ, "REDIS_URL": url, "ORQ_SUPERVISED": "1"}
        python = sys.executable
        for service in WORKERS:
            for replica in range(1, self.scale.get(service, 1) + 1):
                self.children.append(Child(service, replica, [python, "-m", f"services.{service}"]))
        gateway = [python, "-m", "services.gateway", "--port", str(self.port)]
        self.children.append(Child("gateway", 1, gateway))
        for child in self.children:
            self.spawn(child, env)
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        try:
            self._wait_ready()
            return self._watch(env)
        finally:
            self.shutdown()

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.stopping = True

    def _wait_ready(self, timeout_s: float = 120.0) -> None:
        url = f"http://127.0.0.1:{self.port}/healthz"
        deadline = time.monotonic() + timeout_s
        while not self.stopping and time.monotonic() < deadline:
            try:
                if httpx.get(url, timeout=1.0).status_code == 200:
                    replicas = ", ".join(f"{c.label}" for c in self.children)
                    self.say(f"up: http://127.0.0.1:{self.port}  ({replicas})")
                    self.say("press Ctrl-C to stop")
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        if not self.stopping:
            self.say(f"still not healthy after {timeout_s:.0f}s; see the logs above ({url})")

    def _watch(self, env: dict[str, str]) -> int:
        while not self.stopping:
            time.sleep(0.2)
            for child in self.children:
                code = child.process.poll() if child.process else None
                if code is None or self.stopping:
                    continue
                now = time.monotonic()
                while child.restarts and now - child.restarts[0] > 60:
                    child.restarts.popleft()
                if len(child.restarts) >= RESTARTS_PER_MINUTE:
                    self.say(f"{child.label} keeps dying (exit {code}); stopping everything")
                    return 1
                child.restarts.append(now)
                self.say(f"{child.label} exited with code {code}; restarting it")
                self.spawn(child, env)
        self.say("stopping")
        return 0

    def shutdown(self) -> None:
        live = [c.process for c in self.children if c.process and c.process.poll() is None]
        for process in live:
            process.terminate()
        deadline = time.monotonic() + GRACE_S
        for process in live:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.embedded:
            self.embedded.stop()


def run(args: argparse.Namespace) -> int:
    try:
        scale = parse_scale(args.scale)
    except ValueError as exc:
        print(f"orquestra up: {exc}", file=sys.stderr)
        return 2
    settings = get_settings()
    return Supervisor(args.port, scale, Path(args.data_dir), settings.redis_url).run()


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("up", help="run Redis (if needed), every service and the gateway")
    parser.add_argument("--port", type=int, default=get_settings().port, help="gateway port")
    parser.add_argument(
        "--scale",
        action="append",
        default=[],
        metavar="SERVICE=N",
        help="replicas of a worker, e.g. --scale trial=2 (repeatable)",
    )
    parser.add_argument("--data-dir", default=".orquestra", help="embedded Redis data folder")
    parser.set_defaults(func=run)
