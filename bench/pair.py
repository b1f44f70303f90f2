"""Two trees of the project measured side by side: which one costs less CPU per turn.

The machine is shared and its speed drifts (a fixed loop ran twice as long as a few minutes
earlier, here), so two benchmark runs one after the other can differ more than the change being
measured. This runs both systems *at the same time*, each from its own checkout with its own
virtualenv, private Redis and port, each driven by the same number of simulated people, and
compares the CPU each service and its Redis spent per turn: whatever the machine does
meanwhile, it does to both. Absolute figures are inflated (two systems share the cores); the
ratio is what counts.

    python -m bench.pair OLD_TREE NEW_TREE [--users 8] [--seconds 8] [--rounds 3] [--up ARGS]

``--up`` gives both the same deployment (``orquestra up``'s arguments, e.g. the services of a
turn together: ``--up '--together gateway,triage,mode_router,trial,faq,enrollment --scale
trial=2'``); by default every service runs its own process.

Each tree needs its virtualenv (``uv sync`` in it), for example one made with
``git worktree add /tmp/old HEAD~1 && (cd /tmp/old && uv sync)``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.cluster import cpu_seconds
from bench.conversations import DEFAULT_MIX, Conversation, conversation
from bench.load import LoadPlan, Session, run_load
from bench.run import BASE
from bench.targets import HttpSession
from orquestra.forked import service_of
from orquestra.redis_server import EmbeddedRedis, free_port


@dataclass
class Tree:
    """One checkout's system: its Redis, its ``orquestra up`` and what it spent."""

    path: Path
    redis: EmbeddedRedis
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    up: tuple[str, ...] = ()  # more arguments for ``orquestra up`` (a deployment)
    cpu_s: dict[str, float] = field(default_factory=dict)
    turns: int = 0

    def start(self, logs: Path) -> None:
        env = {
            **os.environ,
            "REDIS_URL": self.redis.start().url,
            "ORQ_BURST_WINDOW_MS": "0",
            "ORQ_BURST_FRAGMENT_MS": "0",
        }
        env["ORQ_LOG_LEVEL"] = "warning"
        with open(logs / f"{self.path.name}-{self.port}.log", "wb") as log:
            self.process = subprocess.Popen(
                [str(self.path / ".venv/bin/orquestra"), "up", "--port", str(self.port), *self.up],
                cwd=self.path,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/healthz").json()["missing"] == []:
                    return
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.3)
        raise RuntimeError(f"{self.path}: the system did not become healthy")

    def services(self) -> dict[str, int]:
        """pid of each service process (the supervisor's children), by module name (a second
        replica's with its number), and of its Redis."""
        assert self.process is not None and self.redis.pid is not None
        pid = self.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        found = {"redis": self.redis.pid}
        for child in children:
            # Forked replicas carry their service in their title, not in "-m" (forked.py).
            if service := service_of(Path(f"/proc/{child}/cmdline").read_bytes()):
                name, n = service, 1
                while name in found:
                    n += 1
                    name = f"{service}#{n}"
                found[name] = int(child)
        return found

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        self.redis.stop()


def per_turn_table(trees: list[tuple[str, dict[str, float], int]]) -> list[str]:
    """One line per tree: total and per-service CPU ms per turn."""
    lines = []
    for name, cpu_s, turns in trees:
        per = {k: 1000 * v / max(turns, 1) for k, v in sorted(cpu_s.items())}
        services = "  ".join(f"{k} {v:.2f}" for k, v in per.items())
        lines.append(f"{name}: {turns} turns, {sum(per.values()):.2f} CPU ms/turn ({services})")
    return lines


async def drive(tree: Tree, plan: LoadPlan, conversations: Iterator[Conversation]) -> int:
    async def connect() -> Session:
        return HttpSession(f"http://127.0.0.1:{tree.port}")

    _, samples = await run_load(connect, plan, conversations)
    return len(samples)


def scripts(tag: str) -> Iterator[Conversation]:
    run_id = f"{tag}{time.time_ns()}"
    return (conversation(i, run_id=run_id, base=BASE, mix=DEFAULT_MIX) for i in range(10**9))


async def compare(trees: list[Tree], users: int, seconds: float, rounds: int) -> None:
    warm = LoadPlan(users=4, seconds=3, warmup_s=0)
    await asyncio.gather(*(drive(t, warm, scripts(f"w{i}")) for i, t in enumerate(trees)))
    pids = [t.services() for t in trees]
    plan = LoadPlan(users=users, seconds=seconds, warmup_s=0)
    for r in range(rounds):
        before = [{name: cpu_seconds(pid) for name, pid in p.items()} for p in pids]
        turns = await asyncio.gather(
            *(drive(t, plan, scripts(f"r{r}t{i}")) for i, t in enumerate(trees))
        )
        for tree, p, b, n in zip(trees, pids, before, turns, strict=True):
            tree.turns += n
            for name, pid in p.items():
                tree.cpu_s[name] = tree.cpu_s.get(name, 0.0) + cpu_seconds(pid) - b[name]
        print(f"round {r + 1}/{rounds}: " + ", ".join(f"{n} turns" for n in turns), flush=True)
    for line in per_turn_table([(str(t.path), t.cpu_s, t.turns) for t in trees]):
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.pair", description=__doc__)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--users", type=int, default=8, help="simulated people per system")
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--up",
        default="",
        help="more arguments for orquestra up in both trees, e.g. "
        "'--together gateway,triage,mode_router,trial,faq,enrollment --scale trial=2'",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="orquestra-pair-") as work:
        folder = Path(work)
        trees = [
            Tree(
                path.resolve(),
                EmbeddedRedis(folder / f"redis{i}", persist=False, unix_socket=True),
                up=tuple(args.up.split()),
            )
            for i, path in enumerate((args.old, args.new))
        ]
        try:
            for tree in trees:
                tree.start(folder)
            for tree in trees:
                tree.wait_ready()
            asyncio.run(compare(trees, args.users, args.seconds, args.rounds))
        finally:
            for tree in trees:
                tree.stop()


if __name__ == "__main__":
    main()
