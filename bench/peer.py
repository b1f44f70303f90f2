"""``orquestra bench --peer PATH``: this system next to a peer of the same logic, in one run.

The peer (for example the LangGraph monolith of issue 20) is started from ``PATH/run`` with
``ORQ_SRC`` naming the orquestra checkout whose cores it imports, its own embedded Redis and a
burst window of 0; it prints its Redis URL and pid. Both systems then go through the same
phases of ``bench.run`` (warm-up, one conversation, max load, half load) one after the other,
each stamped with the speed probe, and ``compare`` turns the two results into the ratios and
targets of the issue: CPU ms per turn at max load (the whole process tree: the peer and its
Redis against every service and their Redis), turns/s at max load, p50 at one conversation and
Redis commands per turn (``INFO commandstats`` deltas on each side's Redis).

The machine's speed drifts by more than the differences measured (a fixed loop took 40 ms
before one side and 71 ms before the other in one run), so a run is several alternated rounds
(peer then this system, then this system then the peer, ...), each round's ratios taken from
its two halves, back to back; ``combine`` reports each figure's median over the rounds.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from orquestra.redis_server import free_port

REDIS_LINE = re.compile(r"started embedded Redis on (redis://\S+) \(pid (\d+)")
UNREACHABLE_REDIS = "redis://127.0.0.1:1/0"  # never the developer's 6379: the peer embeds its own
READY_TIMEOUT_S = 180.0  # the first start builds the peer's virtualenv


@dataclass(frozen=True)
class Target:
    figure: str
    peer: float | None
    ours: float | None
    ratio: float | None  # ours / peer
    goal: str
    met: bool | None  # None when a figure is missing
    # What the ratio is held to, or with ``absolute`` the figure itself.
    bound: float = field(default=1.0, compare=False)
    at_most: bool = field(default=True, compare=False)
    absolute: bool = field(default=False, compare=False)

    def judge(self, ours: float | None, ratio: float | None) -> bool | None:
        value = ours if self.absolute else ratio
        if value is None:
            return None
        return value <= self.bound if self.at_most else value >= self.bound


def _ratio(ours: float | None, peer: float | None) -> float | None:
    if ours is None or peer is None or peer == 0:
        return None
    return round(ours / peer, 2)


def _figure(results: dict[str, Any], phase: str, key: str) -> float | None:
    value = results.get("system", {}).get(phase, {}).get(key)
    return float(value) if isinstance(value, int | float) else None


def compare(peer: dict[str, Any], ours: dict[str, Any]) -> list[Target]:
    """The issue's table from two ``bench.run`` results: figures, ratio ours/peer, target met.

    Targets: CPU per turn at max load ≤ 1.0 × the peer's, turns/s at max load ≥ 1.8 × the
    peer's, p50 at one conversation ≤ the peer's, Redis commands per turn ≤ 60.
    """
    rows = [
        ("CPU ms per turn, max load", "max", "cpu_ms_per_turn_total", "≤ 1.0 × peer", 1.0, True),
        ("turns/s, max load", "max", "turns_per_s", "≥ 1.8 × peer", 1.8, False),
        ("p50 ms, one conversation", "one", "p50_ms", "≤ 1.0 × peer", 1.0, True),
    ]
    targets = []
    for figure, phase, key, goal, bound, at_most in rows:
        mine, theirs = _figure(ours, phase, key), _figure(peer, phase, key)
        row = Target(figure, theirs, mine, _ratio(mine, theirs), goal, None, bound, at_most)
        targets.append(replace(row, met=row.judge(mine, row.ratio)))
    mine = _figure(ours, "max", "redis_commands_per_turn")
    theirs = _figure(peer, "max", "redis_commands_per_turn")
    figure = "Redis commands per turn, max load"
    row = Target(figure, theirs, mine, _ratio(mine, theirs), "≤ 60", None, 60, True, True)
    targets.append(replace(row, met=row.judge(mine, row.ratio)))
    return targets


def combine(rounds: list[list[Target]]) -> list[Target]:
    """One table from the tables of alternated rounds: each figure's median peer and own
    value, and the median of the rounds' ratios (each ratio's two halves ran back to back,
    so it drifts less than a ratio of medians), judged against the figure's target."""
    combined = []
    for rows in zip(*rounds, strict=True):
        first = rows[0]
        peer = _median([row.peer for row in rows])
        ours = _median([row.ours for row in rows])
        ratio = _ratio(ours, peer) if first.absolute else _median([row.ratio for row in rows])
        combined.append(
            replace(first, peer=peer, ours=ours, ratio=ratio, met=first.judge(ours, ratio))
        )
    return combined


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(statistics.median(present), 4) if present else None


def table(targets: list[Target]) -> list[str]:
    """The targets as a Markdown table's lines."""

    def num(value: float | None) -> str:
        return "—" if value is None else f"{value:.4g}"

    lines = ["| figure | peer | orquestra | ratio | target | met |", "|---|---|---|---|---|---|"]
    for t in targets:
        met = "—" if t.met is None else ("yes" if t.met else "no")
        lines.append(
            f"| {t.figure} | {num(t.peer)} | {num(t.ours)} | {num(t.ratio)} | {t.goal} | {met} |"
        )
    return lines


def render(peer: dict[str, Any], ours: dict[str, Any], targets: list[Target]) -> str:
    users = ours.get("system", {}).get("max", {}).get("users", "?")
    lines = [
        f"orquestra bench --peer: {users} conversations at max load; speed probe (ms) "
        f"peer {peer.get('speed_probe_ms', {}).get('system')}, "
        f"orquestra {ours.get('speed_probe_ms', {}).get('system')}",
        "",
        *table(targets),
    ]
    for name, results in (("peer", peer), ("orquestra", ours)):
        cpu = results.get("system", {}).get("max", {}).get("cpu_ms_per_turn", {})
        parts = ", ".join(
            f"{key} {value:g}" for key, value in sorted(cpu.items(), key=lambda kv: -kv[1])
        )
        lines.append(f"{name} CPU ms per turn at max load: {parts}")
        peak = results.get("system", {}).get("max", {})
        top = peak.get("redis_top_commands_per_turn", {})
        lines.append(
            f"{name} Redis commands per turn: " + ", ".join(f"{k} {v:g}" for k, v in top.items())
        )
        if "redis_reads_per_turn" in peak:
            lines.append(f"{name} Redis round trips per turn: {peak['redis_reads_per_turn']:g}")
    return "\n".join(lines)


class Peer:
    """The peer's process (``PATH/run``), its embedded Redis's URL and pid."""

    def __init__(self, path: Path, src: Path) -> None:
        self.path = path
        self.src = src
        self.port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="orquestra-peer-"))
        self.process: subprocess.Popen[str] | None = None
        self.redis_url = ""
        self.redis_pid = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Peer:
        env = {**os.environ, "ORQ_SRC": str(self.src), "ORQ_BURST_WINDOW_MS": "0"}
        env.pop("REDIS_URL", None)
        log = open(self.workdir / "peer.log", "w")  # noqa: SIM115 - closed with the process
        self.process = subprocess.Popen(
            [str(self.path / "run"), "--port", str(self.port),
             "--data-dir", str(self.workdir / "data"), "--burst-window-ms", "0",
             "--redis-url", UNREACHABLE_REDIS],
            env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the peer exited: {self.log()[-2000:]}")
            found = REDIS_LINE.search(self.log())
            if found and self._healthy():
                self.redis_url, self.redis_pid = found.group(1), int(found.group(2))
                return self
            time.sleep(0.2)
        raise RuntimeError(f"the peer did not answer /healthz: {self.log()[-2000:]}")

    def log(self) -> str:
        return (self.workdir / "peer.log").read_text(errors="replace")

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def pids(self) -> dict[str, list[int]]:
        assert self.process is not None
        return {"peer": [self.process.pid], "peer_redis": [self.redis_pid]}

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
