"""The system under test as child processes: Redis plus every service, started like
``orquestra up`` starts them (same modules, same environment), but one by one, so a phase can
restart one service with other settings or add replicas, and so each child's CPU time can be
read from ``/proc``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from orquestra.redis_cluster import LocalCluster
from orquestra.redis_server import EmbeddedRedis, free_port
from orquestra.up import WORKERS
from shared.connections import connect_sync
from shared.keys import Keys
from shared.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
GRACE_S = 5.0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, from ``/proc/<pid>/stat``; 0 once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    # The command name (field 2) may hold spaces; the fields after its closing ")" do not.
    fields = raw.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def machine_busy_seconds() -> float:
    """CPU time spent by every process on the machine (all cores), from ``/proc/stat``."""
    first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in first[:8])
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS


@dataclass
class Child:
    service: str
    module: str
    process: subprocess.Popen[bytes]
    cpu_before_exit: float = 0.0

    @property
    def pid(self) -> int:
        return self.process.pid


@dataclass
class Cluster:
    """Redis and the services of one benchmark run, all private to it (own port, prefix)."""

    workdir: Path
    prefix: str
    env: dict[str, str] = field(default_factory=dict)
    redis_url: str = ""
    port: int = 0
    children: list[Child] = field(default_factory=list)
    retired_cpu: dict[str, float] = field(default_factory=dict)
    embedded: EmbeddedRedis | None = None
    redis_cluster: LocalCluster | None = None
    # Services run in one process (``python -m services ...``, or the gateway's ``--with``),
    # in ``replicas_together`` replicas; the rest alone.
    together: tuple[str, ...] = ()
    replicas_together: int = 1

    def start_redis_cluster(self, masters: int) -> str:
        """A fresh local Redis Cluster (``masters`` masters, one replica each, AOF on), as
        ``orquestra up --redis-cluster`` runs it; the services run in cluster mode."""
        folder = self.workdir / "redis-cluster"
        self.redis_cluster = LocalCluster(folder, masters=masters, node_timeout_ms=5000).start()
        self.redis_url = self.redis_cluster.url
        self.env = {**self.env, "ORQ_REDIS_MODE": "cluster"}
        return self.redis_url

    def start_redis(self) -> str:
        """A fresh embedded Redis with AOF on, as ``orquestra up`` runs it on a new machine."""
        self.embedded = EmbeddedRedis(
            self.workdir / "redis", persist=True, unix_socket=True
        ).start()
        self.redis_url = self.embedded.url
        return self.redis_url

    @property
    def redis_pid(self) -> int:
        assert self.embedded is not None and self.embedded.process is not None
        return self.embedded.process.pid

    def child_env(self, overrides: dict[str, str] | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "REDIS_URL": self.redis_url,
            "ORQ_PREFIX": self.prefix,
            "ORQ_SUPERVISED": "1",
            "ORQ_LOG_JSON": "true",
            "PYTHONUNBUFFERED": "1",
            **self.env,
            **(overrides or {}),
        }

    def spawn(self, service: str, module: str | None = None, **env: str) -> Child:
        """Start ``service`` (a worker group's label ``a+b``: those services in one process,
        ``python -m services a b``) as a child."""
        names = service.split("+")
        if module is None and len(names) > 1:
            module = "services.gateway" if "gateway" in names else "services"
        module = module or f"services.{service}"
        args = [sys.executable, "-m", module]
        if module == "services":
            args += names
        if "gateway" in names:
            self.port = self.port or free_port()
            args += ["--port", str(self.port)]
            if len(names) > 1:
                # Its replicas share the port: the kernel spreads the connections.
                args += ["--with", ",".join(n for n in names if n != "gateway"), "--reuse-port"]
        log = open(self.workdir / f"{service}.log", "ab")  # noqa: SIM115 - the child owns it
        process = subprocess.Popen(
            args, cwd=ROOT, env=self.child_env(env), stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        child = Child(service, module, process)
        self.children.append(child)
        return child

    def start_all(self, **env: str) -> None:
        together = [name for name in ("gateway", *WORKERS) if name in self.together]
        for service in WORKERS:
            if service not in together:
                self.spawn(service, **env)
        for _ in range(self.replicas_together if together else 0):
            self.spawn("+".join(together), **env)
        if "gateway" not in together:
            self.spawn("gateway", **env)

    def replicas(self, service: str) -> list[Child]:
        """The children running ``service``, alone or with others."""
        return [c for c in self.children if service in c.service.split("+")]

    def stop(self, children: list[Child]) -> None:
        """SIGTERM, then SIGKILL after a grace period; their CPU time is kept for the totals."""
        for child in children:
            used = cpu_seconds(child.pid)
            self.retired_cpu[child.service] = self.retired_cpu.get(child.service, 0.0) + used
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        for child in children:
            try:
                child.process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
            self.children.remove(child)

    def restart(self, service: str, module: str | None = None, **env: str) -> None:
        """Restart every process running ``service`` (alone or with others) with ``env``."""
        stopped = self.replicas(service)
        self.stop(stopped)
        for label in [c.service for c in stopped] or [service]:
            self.spawn(label, module if label == service else None, **env)

    def restart_many(self, services: tuple[str, ...], **env: str) -> None:
        """Stop every replica of ``services`` at once, then start one of each (in parallel);
        a process running some of them with others is restarted whole."""
        stopped = [c for c in self.children if set(c.service.split("+")) & set(services)]
        self.stop(stopped)
        labels = dict.fromkeys(c.service for c in stopped if "+" in c.service)
        grouped = {name for label in labels for name in label.split("+")}
        for label in [*labels, *(s for s in services if s not in grouped)]:
            self.spawn(label, **env)

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        """Until every child announces a live consumer (its heartbeat names its pid)."""
        settings = Settings(
            redis_url=self.redis_url,
            redis_mode="cluster" if self.redis_cluster else "single",
        )
        client = connect_sync(settings, decode_responses=True)
        keys = Keys(self.prefix, int(self.env.get("ORQ_PARTITIONS", "1")))
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                dead = [c for c in self.children if c.process.poll() is not None]
                if dead:
                    names = ", ".join(f"{c.service} (exit {c.process.returncode})" for c in dead)
                    raise RuntimeError(f"exited while starting: {names}; logs in {self.workdir}")
                fresh = [
                    member
                    for key in keys.all_heartbeats()
                    for member in client.zrangebyscore(key, time.time() - 10, "+inf")
                ]
                waiting = [c for c in self.children if not any(f"-{c.pid}-" in m for m in fresh)]
                if not waiting:
                    return
                time.sleep(0.1)
        finally:
            client.close()
        raise RuntimeError(f"services not ready after {timeout_s:.0f}s; logs in {self.workdir}")

    def cpu(self) -> dict[str, float]:
        """CPU seconds used so far per service (replicas summed, stopped ones included), and
        by Redis."""
        totals = dict(self.retired_cpu)
        for child in self.children:
            totals[child.service] = totals.get(child.service, 0.0) + cpu_seconds(child.pid)
        if self.embedded is not None:
            totals["redis"] = cpu_seconds(self.redis_pid)
        if self.redis_cluster is not None:
            nodes = self.redis_cluster.nodes
            totals["redis"] = sum(cpu_seconds(n.process.pid) for n in nodes if n.process)
        return totals

    def shutdown(self) -> None:
        self.stop(list(self.children))
        if self.embedded is not None:
            self.embedded.stop()
        if self.redis_cluster is not None:
            self.redis_cluster.stop()
