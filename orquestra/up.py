"""``orquestra up``: Redis plus every service as its own child process, supervised.

Uses ``REDIS_URL`` when it answers, else (or with ``--embedded``) launches the embedded server,
and says which and why. A child that dies is reported and restarted (with a limit, so a crash
loop stops the system instead of spinning); so is the embedded Redis, on the same port with the
same data folder, and the services reconnect by themselves.

Ctrl-C or SIGTERM stops every service first (SIGTERM, then SIGKILL after a grace period) and
the embedded Redis last, so services never stop against a Redis that is gone. Every child runs
in a session of its own: a terminal's Ctrl-C reaches only this supervisor, which decides the
order. Children also exit on their own if this supervisor is killed outright.

``--redis-cluster N`` starts a local Redis Cluster instead (N masters, one replica each, from
the same shipped binary; ``orquestra.redis_cluster``) and runs the services in cluster mode.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from orquestra.forked import Forked, fork, preload
from orquestra.redis_cluster import LocalCluster
from orquestra.redis_server import EmbeddedRedis, reachable
from services.gateway.channels.registry import SECTIONS
from services.registry import SERVICES, services_together
from shared.pack import PackError
from shared.settings import get_settings
from shared.tenants import TenantsError, tenants_of

WORKERS = [s for s in SERVICES if s != "gateway"]
# What every replica imports, once in the supervisor before it forks them (``forked.py``).
PRELOADED = ["shared.process", *(f"services.{name}.app" for name in SERVICES)]
RESTARTS_PER_MINUTE = 5
GRACE_S = 10.0
DEFAULT_DATA_DIR = ".orquestra"


@dataclass
class Child:
    service: str
    replica: int
    # What ``python -m`` would be given: the module, then its arguments.
    module: str
    argv: list[str] = field(default_factory=list)
    process: Forked | None = None
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


def parse_together(values: list[str]) -> list[tuple[str, ...]]:
    """``--together A,B``: groups of two or more services (checked as every command that runs
    services together checks them: ``services_together``), each in one group at most, each
    group in the registry's order."""
    groups: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for value in values:
        names = [name.strip() for name in value.split(",") if name.strip()]
        try:
            group = services_together(names, gateway=True, at_least=2)
        except ValueError as exc:
            raise ValueError(f"--together {value!r}: {exc}") from None
        if twice := sorted(seen & set(group)):
            raise ValueError(f"--together: {', '.join(twice)} named in two groups")
        seen |= set(group)
        groups.append(group)
    return groups


def together_child(group: tuple[str, ...], replica: int, port: int) -> Child:
    """One replica of services run together: the gateway's process with the others
    (``--with``, its replicas sharing the port), or ``python -m services A B``."""
    label = "+".join(group)
    if "gateway" not in group:
        return Child(label, replica, "services", [*group])
    workers = ",".join(name for name in group if name != "gateway")
    argv = ["--port", str(port), "--with", workers, "--reuse-port"]
    return Child(label, replica, "services.gateway", argv)


@dataclass(frozen=True)
class RedisChoice:
    """Which Redis ``orquestra up`` uses, and why (said once at start)."""

    embedded: bool
    reason: str
    warning: str | None = None


def choose_redis(
    redis_url: str, answers: bool, *, embedded: bool, data_dir: Path, data_dir_given: bool
) -> RedisChoice:
    """The decision alone (pure): ``--embedded`` wins; else ``REDIS_URL`` when it answers."""
    if embedded:
        return RedisChoice(True, "--embedded")
    if not answers:
        return RedisChoice(True, f"REDIS_URL {redis_url} did not answer")
    warning = None
    if data_dir_given:
        warning = (
            f"--data-dir {data_dir} is not used: the Redis at REDIS_URL answers and keeps its own"
            f" data (add --embedded to run a private Redis with its data in {data_dir})"
        )
    return RedisChoice(False, "REDIS_URL answers", warning)


class Supervisor:
    def __init__(
        self,
        port: int,
        scale: dict[str, int],
        data_dir: Path,
        redis_url: str,
        *,
        embedded: bool = False,
        data_dir_given: bool = False,
        cluster_masters: int = 0,
        together: list[tuple[str, ...]] | None = None,
    ) -> None:
        self.port = port
        self.scale = scale
        self.together = together or []
        self.data_dir = data_dir
        self.redis_url = redis_url
        self.force_embedded = embedded
        self.data_dir_given = data_dir_given
        self.embedded: EmbeddedRedis | None = None
        self.cluster_masters = cluster_masters
        self.cluster: LocalCluster | None = None
        self.redis_restarts: deque[float] = deque()
        self.children: list[Child] = []
        self.stopping = False

    def say(self, message: str) -> None:
        print(f"orquestra: {message}", file=sys.stderr, flush=True)

    def start_cluster(self) -> str:
        """A fresh local cluster (its folder is emptied: ports change at every start)."""
        folder = self.data_dir / "redis-cluster"
        shutil.rmtree(folder, ignore_errors=True)
        self.cluster = LocalCluster(folder, masters=self.cluster_masters, replicas=1).start()
        ports = ", ".join(str(node.port) for node in self.cluster.nodes)
        self.say(
            f"started a local Redis Cluster: {self.cluster_masters} masters with a replica each"
            f" on 127.0.0.1 ports {ports} (data in {folder}); REDIS_URL={self.cluster.url}"
        )
        return self.cluster.url

    def start_redis(self) -> str:
        answers = not self.force_embedded and reachable(self.redis_url)
        choice = choose_redis(
            self.redis_url,
            answers,
            embedded=self.force_embedded,
            data_dir=self.data_dir,
            data_dir_given=self.data_dir_given,
        )
        if choice.warning:
            self.say(f"warning: {choice.warning}")
        if not choice.embedded:
            self.say(f"using Redis at {self.redis_url} ({choice.reason})")
            return self.redis_url
        folder = self.data_dir / "redis"
        self.embedded = EmbeddedRedis(folder, unix_socket=True).start()
        self.say(
            f"started embedded Redis on {self.embedded.url} (pid {self.embedded.pid},"
            f" data in {folder}) because {choice.reason}"
        )
        return self.embedded.url

    def spawn(self, child: Child, env: dict[str, str]) -> None:
        # A session of its own: the terminal's Ctrl-C reaches only the supervisor (shutdown).
        child.process = fork(child.module, child.argv, env)

    def run(self) -> int:
        # Before anything starts: a Ctrl-C from here on is a flag, never a KeyboardInterrupt.
        # SIGHUP too (the terminal closed): the children, in sessions of their own, would not
        # get it, and the embedded Redis has no parent watch of its own.
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, self._on_signal)
        try:
            url = self.start_cluster() if self.cluster_masters else self.start_redis()
            env = {**os.environ, "REDIS_URL": url, "ORQ_SUPERVISED": "1"}
            if self.cluster:
                env["ORQ_REDIS_MODE"] = "cluster"
            grouped = {name for group in self.together for name in group}
            for service in WORKERS:
                if service in grouped:
                    continue
                for replica in range(1, self.scale.get(service, 1) + 1):
                    self.children.append(Child(service, replica, f"services.{service}"))
            for group in self.together:
                # A group runs as many replicas as the most scaled of its services.
                replicas = max(self.scale.get(service, 1) for service in group)
                for replica in range(1, replicas + 1):
                    self.children.append(together_child(group, replica, self.port))
            if "gateway" not in grouped:
                port = ["--port", str(self.port)]
                self.children.append(Child("gateway", 1, "services.gateway", port))
            preload(PRELOADED)
            for child in self.children:
                self.spawn(child, env)
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
            if not self._keep_redis():
                return 1
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

    def _keep_redis(self) -> bool:
        """Restart the embedded Redis if it died (same port, same data folder); False when it
        keeps dying."""
        if self.embedded is None or self.stopping:
            return True
        code = self.embedded.exit_code()
        if code is None:
            return True
        now = time.monotonic()
        while self.redis_restarts and now - self.redis_restarts[0] > 60:
            self.redis_restarts.popleft()
        if len(self.redis_restarts) >= RESTARTS_PER_MINUTE:
            self.say(f"embedded Redis keeps dying (exit {code}); stopping everything")
            return False
        self.redis_restarts.append(now)
        folder = self.embedded.folder
        self.say(f"embedded Redis exited with code {code}; restarting it with data in {folder}")
        try:
            self.embedded.restart()
        except RuntimeError as exc:
            self.say(f"embedded Redis did not restart: {exc}")
            return True  # tried again on the next round, within the restart limit
        self.say(f"embedded Redis restarted on {self.embedded.url} (pid {self.embedded.pid})")
        return True

    def shutdown(self) -> None:
        """Services first (they still write to Redis while they stop), the embedded Redis last."""
        live = [c.process for c in self.children if c.process and c.process.poll() is None]
        if live:
            self.say(f"stopping {len(live)} services")
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
            self.say("stopping embedded Redis")
            self.embedded.stop()
        if self.cluster:
            self.say("stopping the local Redis Cluster")
            self.cluster.stop()
        self.say("stopped")


def run(args: argparse.Namespace) -> int:
    try:
        scale = parse_scale(args.scale)
        together = parse_together(args.together)
    except ValueError as exc:
        print(f"orquestra up: {exc}", file=sys.stderr)
        return 2
    if args.redis_cluster and args.redis_cluster < 3:
        print("orquestra up: --redis-cluster needs at least 3 masters", file=sys.stderr)
        return 2
    settings = get_settings()
    try:
        for tenant in tenants_of(settings, SECTIONS):
            if tenant.problem:
                print(f"orquestra up: {tenant.problem}", file=sys.stderr)
    except (TenantsError, PackError) as exc:
        print(f"orquestra up: {exc}", file=sys.stderr)
        return 2
    given = args.data_dir is not None
    data_dir = Path(args.data_dir if given else DEFAULT_DATA_DIR)
    supervisor = Supervisor(
        args.port,
        scale,
        data_dir,
        settings.redis_url,
        embedded=args.embedded,
        data_dir_given=given,
        cluster_masters=args.redis_cluster,
        together=together,
    )
    return supervisor.run()


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
    parser.add_argument(
        "--together",
        action="append",
        default=[],
        metavar="A,B,...",
        help="run these workers in one process (repeatable; its replicas: the largest --scale"
        " of its services): what one publishes to another is taken without a delivery of its"
        " own",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        help=f"embedded Redis data folder (default {DEFAULT_DATA_DIR}; not used with an"
        " external Redis)",
    )
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="run the embedded Redis even when REDIS_URL answers",
    )
    parser.add_argument(
        "--redis-cluster",
        type=int,
        default=0,
        metavar="MASTERS",
        help="start a local Redis Cluster (MASTERS >= 3, one replica each) and run the services"
        " in cluster mode (development)",
    )
    parser.set_defaults(func=run)
