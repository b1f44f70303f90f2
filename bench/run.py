"""One benchmark run: every phase in order, each measured the same way, into one results dict.

Phases (one fresh Redis and one set of service processes, rules mode, burst window 0 unless
said otherwise), in this order so that no phase has to restore a service:

1. ``idle`` (no traffic), a warm-up (not reported), ``one`` (one person: the latency floor of a
   turn), ``max`` (many people: sustained throughput, CPU per turn of every process, Redis
   commands and memory) and ``half`` (the rate paced to half of ``max``);
2. baseline A (``bench.inproc``) and baseline B (``bench.busfloor``) in their own processes;
3. the gateway restarted with the default burst windows (the short one and the longer wait after
   a fragment), one person again, saying only complete messages;
4. baseline C: triage, trial and faq restarted in ``llm`` mode against the simulated LLM, first
   with a few people (the turn's own time), then with many (throughput);
5. scaling: the trial replaced by a CPU-heavy trial, booking conversations only, 1, 2, 3 replicas.

Against a running system (``--url``) only phase 1 runs (nothing can be restarted there), plus
the baselines on a Redis of their own unless ``--redis-url`` names the system's.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import redis

from bench.cluster import ROOT, Cluster, cpu_seconds, machine_busy_seconds
from bench.conversations import (
    BOOKING_MIX,
    COMPLETE_MIX,
    DEFAULT_MIX,
    Conversation,
    conversation,
)
from bench.load import LoadPlan, Session, run_load
from bench.profile import summarize_raw
from bench.stats import TurnSample, llm_critical_path
from bench.targets import HttpSession
from orquestra.redis_server import EmbeddedRedis
from shared.keys import Keys, partition_of
from shared.settings import Settings

BASE = datetime.fromisoformat("2026-03-02T09:00:00-03:00")  # a Monday, business time
# The product's windows, as its settings default them (the burst part measures those).
DEFAULT_BURST_WINDOW_MS = int(Settings.model_fields["burst_window_ms"].default)
DEFAULT_BURST_FRAGMENT_MS = int(Settings.model_fields["burst_fragment_ms"].default)
# Coalescing off: the load phases measure the machinery, not the burst policy's waits.
NO_BURST_WINDOWS = {"ORQ_BURST_WINDOW_MS": "0", "ORQ_BURST_FRAGMENT_MS": "0"}
LLM_SERVICES = ("triage", "trial", "faq")  # the services that read ORQ_NLU_MODE
NOT_THE_SYSTEM = ("driver", "llm_server")
LIGHT_USERS = 8  # conversations of the light llm phase


@dataclass
class Options:
    url: str | None = None
    redis_url: str | None = None
    token: str | None = None
    users: int = 32
    seconds: float = 8.0  # every max-load phase (system, baselines, llm mode)
    one_seconds: float = 4.0  # every one-conversation phase
    short_seconds: float = 5.0  # the half-load and scaling phases
    llm_delay_ms: int = 300
    llm_users: int = 64
    llm_workers: int | None = None  # a second llm run with this many handlers per subscription
    trial_burn_ms: int = 100
    scaling_users: int = 16
    profile: str | None = None  # a service to sample with py-spy during the max phase
    # With --url: the processes of that system (name -> pids) whose CPU the phases count.
    system_pids: dict[str, list[int]] = field(default_factory=dict)
    skip: set[str] = field(default_factory=set)
    # A local Redis Cluster of this many masters (one replica each) instead of one Redis, the
    # bus split into ``partitions`` partitions: the system phases only.
    redis_cluster: int = 0
    partitions: int = 1
    # Services run in one process (``python -m services ...``, or the gateway's ``--with``),
    # in ``replicas_together`` replicas; the others alone.
    together: tuple[str, ...] = ()
    replicas_together: int = 1


def progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def own_cpu() -> float:
    times = os.times()
    return times.user + times.system


def children_cpu() -> float:
    """CPU of this process's children that have exited and been waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class OtherLoad:
    """Cores used by processes outside the benchmark while a baseline runs (start-up
    included): the services idling, Redis, the driver and every subprocess are ours."""

    def __init__(self, cluster: Cluster | None) -> None:
        self.cluster = cluster
        self.started = self._reading()

    def _reading(self) -> tuple[float, float, float]:
        ours = own_cpu() + children_cpu()
        if self.cluster is not None:
            ours += sum(self.cluster.cpu().values())
        return time.perf_counter(), machine_busy_seconds(), ours

    def cores(self) -> float:
        at, machine, ours = self._reading()
        wall = at - self.started[0]
        others = (machine - self.started[1]) - (ours - self.started[2])
        return round(max(0.0, others) / wall, 3) if wall > 0 else 0.0


def redis_calls(client: redis.Redis) -> dict[str, int]:
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def redis_reads(client: redis.Redis) -> int:
    """The reads Redis made from its clients' sockets so far: one per round trip, however many
    commands a pipeline carried (Redis 6's ``total_reads_processed``)."""
    return int(client.info("stats").get("total_reads_processed", 0))


def node_calls(nodes: list[redis.Redis]) -> dict[str, dict[str, int]]:
    """Commands run so far on each master of a cluster (by address), per command."""
    found: dict[str, dict[str, int]] = {}
    for node in nodes:
        kwargs = node.connection_pool.connection_kwargs
        found[f"{kwargs['host']}:{kwargs['port']}"] = redis_calls(node)
    return found


def calls_delta(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    delta = {name: calls - before.get(name, 0) for name, calls in after.items()}
    return {name: calls for name, calls in delta.items() if calls > 0}


class Counters:
    """Readings taken around a phase: CPU of every process, Redis commands, LLM requests."""

    def __init__(
        self,
        redis_client: redis.Redis | None,
        cluster: Cluster | None,
        llm_stats: Callable[[], int] | None = None,
        extra_pids: dict[str, list[int]] | None = None,
        masters: list[redis.Redis] | None = None,
    ) -> None:
        self.redis = redis_client
        self.cluster = cluster
        self.llm_stats = llm_stats
        self.extra_pids = extra_pids or {}
        # A Redis Cluster's masters: commands are counted on each and summed.
        self.masters = masters or []

    def read(self) -> dict[str, Any]:
        cpu = self.cluster.cpu() if self.cluster else {}
        for name, pids in self.extra_pids.items():
            cpu[name] = sum(cpu_seconds(pid) for pid in pids)
        cpu["driver"] = own_cpu()
        return {
            "at": time.perf_counter(),
            "cpu": cpu,
            "machine": machine_busy_seconds(),
            **self._calls(),
            "llm": self.llm_stats() if self.llm_stats else 0,
        }

    def _calls(self) -> dict[str, Any]:
        """Commands run so far: in all (``calls``) and, on a cluster, by master (``nodes``),
        from one ``INFO commandstats`` per node."""
        if not self.masters:
            if self.redis is None:
                return {"calls": {}, "nodes": {}, "reads": 0}
            return {"calls": redis_calls(self.redis), "nodes": {}, "reads": redis_reads(self.redis)}
        nodes = node_calls(self.masters)
        total: Counter[str] = Counter()
        for calls in nodes.values():
            total.update(calls)
        reads = sum(redis_reads(master) for master in self.masters)
        return {"calls": dict(total), "nodes": nodes, "reads": reads}

    def per_turn(self, before: dict[str, Any], after: dict[str, Any], turns: int) -> dict[str, Any]:
        """Per-turn costs between two readings, plus the CPU others used on the machine."""
        turns = max(turns, 1)
        wall = after["at"] - before["at"]
        cpu = {name: after["cpu"][name] - before["cpu"].get(name, 0.0) for name in after["cpu"]}
        ours = sum(cpu.values())
        # The system is the services and Redis; the driver and the simulated LLM are not.
        system = sum(used for name, used in cpu.items() if name not in NOT_THE_SYSTEM)
        calls = calls_delta(before["calls"], after["calls"])
        top = sorted(calls.items(), key=lambda item: -item[1])[:8]
        others = max(0.0, after["machine"] - before["machine"] - ours)
        result: dict[str, Any] = {
            "cpu_ms_per_turn": {name: round(1000 * s / turns, 3) for name, s in cpu.items()},
        }
        if (self.cluster is not None or self.extra_pids) and wall > 0:
            result["cpu_ms_per_turn_total"] = round(1000 * system / turns, 3)
            result["cores_used"] = round(system / wall, 3)
            result["other_load_cores"] = round(others / wall, 3)
        elif wall > 0:  # --url: the system's processes are among the machine's others
            result["machine_cores"] = round((after["machine"] - before["machine"]) / wall, 3)
        if self.masters:
            result["redis_commands_per_turn_per_node"] = {
                node: round(sum(calls_delta(before["nodes"][node], now).values()) / turns, 2)
                for node, now in after["nodes"].items()
            }
        if self.redis is not None or self.masters:
            result["redis_commands_per_turn"] = round(sum(calls.values()) / turns, 2)
            result["redis_reads_per_turn"] = round((after["reads"] - before["reads"]) / turns, 2)
            result["redis_top_commands_per_turn"] = {k: round(v / turns, 2) for k, v in top}
            # What the replica acknowledgement costs (shared/durability.py): its WAITs.
            result["redis_waits_per_turn"] = round(calls.get("wait", 0) / turns, 2)
        if self.llm_stats is not None:
            result["llm_calls_per_turn"] = round((after["llm"] - before["llm"]) / turns, 3)
        return result


def redis_memory(client: redis.Redis) -> dict[str, Any]:
    info = client.info("memory")
    return {"used_memory_mb": round(info["used_memory"] / 2**20, 2), "keys": client.dbsize()}


class Benchmark:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.run_id = f"b{uuid.uuid4().hex[:6]}"
        self.prefix = f"orqbench-{self.run_id}:"
        self.workdir = Path(tempfile.mkdtemp(prefix="orquestra-bench-"))
        self.index = itertools.count()
        self.mix: tuple[str, ...] = DEFAULT_MIX
        self.cluster: Cluster | None = None
        self.embedded: EmbeddedRedis | None = None
        self.redis_url = ""
        self.base_url = ""
        self.results: dict[str, Any] = {}
        self.peak_samples: list[TurnSample] = []

    # Conversations and sessions -------------------------------------------------------------

    def conversations(self) -> Iterator[Conversation]:
        for i in self.index:
            yield conversation(i, run_id=self.run_id, base=BASE, mix=self.mix)

    def take_indexes(self, count: int) -> int:
        """Reserve ``count`` conversation numbers for a subprocess; returns the first."""
        first = next(self.index)
        for _ in range(count - 1):
            next(self.index)
        return first

    async def connect(self) -> Session:
        return HttpSession(self.base_url, self.options.token)

    async def phase(
        self, name: str, plan: LoadPlan, counters: Counters
    ) -> tuple[dict[str, Any], list[TurnSample]]:
        progress(f"{name}: {plan.users} users for {plan.seconds:.0f}s")
        before = counters.read()
        summary, samples = await run_load(self.connect, plan, self.conversations())
        after = counters.read()
        result = {**summary.as_dict(), **counters.per_turn(before, after, len(samples))}
        if plan.rate:
            result["offered_rate"] = round(plan.rate, 1)
        if summary.errors:
            progress(f"{name}: {summary.errors} turns failed")
        return result, samples

    # The run ----------------------------------------------------------------------------------

    def start(self) -> redis.Redis:
        options = self.options
        if options.url:
            self.base_url = options.url.rstrip("/")
            if options.redis_url:
                self.redis_url = options.redis_url
            else:
                self.embedded = EmbeddedRedis(self.workdir / "redis", persist=False).start()
                self.redis_url = self.embedded.url
            return redis.Redis.from_url(self.redis_url, decode_responses=True)
        env = dict(NO_BURST_WINDOWS)
        if options.redis_cluster:
            env["ORQ_PARTITIONS"] = str(options.partitions)
        self.cluster = Cluster(
            self.workdir,
            self.prefix,
            env=env,
            together=options.together,
            replicas_together=options.replicas_together,
        )
        if options.redis_cluster:
            progress(f"starting a Redis Cluster of {options.redis_cluster} masters")
            self.redis_url = self.cluster.start_redis_cluster(options.redis_cluster)
        else:
            self.redis_url = self.cluster.start_redis()
        progress(f"starting the services (logs in {self.workdir})")
        started = time.perf_counter()
        self.cluster.start_all()
        self.cluster.wait_ready()
        self.results["startup_s"] = round(time.perf_counter() - started, 1)
        self.base_url = f"http://127.0.0.1:{self.cluster.port}"
        return redis.Redis.from_url(self.redis_url, decode_responses=True)

    async def run(self) -> dict[str, Any]:
        clock = time.perf_counter()
        self.results["machine"] = machine()
        timings: dict[str, float] = {}
        self.results["timings_s"] = timings
        client = self.start()
        timings["startup"] = round(time.perf_counter() - clock, 1)
        skip = self.options.skip
        masters = self.masters()
        if masters:  # a Redis Cluster: its own figures, no baselines or other parts
            skip = skip | {"baselines", "burst", "llm", "scaling"}
        system_redis = client if (self.cluster or self.options.redis_url) and not masters else None
        counters = Counters(
            system_redis, self.cluster, extra_pids=self.options.system_pids, masters=masters
        )
        parts: list[tuple[str, Callable[[], Awaitable[Any]], bool]] = [
            ("system", lambda: self.system_phases(counters, client), True),
            ("partitions", lambda: self.partition_spread(), bool(masters)),
            ("baseline_a", lambda: self.baseline_a(client), "baselines" not in skip),
            ("baseline_b", lambda: self.baseline_b(client), "baselines" not in skip),
            ("burst_window", lambda: self.burst_window(client),
             self.cluster is not None and "burst" not in skip),
            ("llm", lambda: self.llm_phase(client), self.cluster is not None and "llm" not in skip),
            ("scaling", lambda: self.scaling(client),
             self.cluster is not None and "scaling" not in skip),
        ]  # fmt: skip
        speed: dict[str, float] = {}
        self.results["speed_probe_ms"] = speed
        try:
            for name, part, wanted in parts:
                if not wanted:
                    continue
                speed[name] = speed_probe()
                started = time.perf_counter()
                result = await part()
                if result is not None:
                    self.results[name] = result
                timings[name] = round(time.perf_counter() - started, 1)
        finally:
            for node in [client, *masters]:
                node.close()
            stopping = time.perf_counter()
            if self.cluster is not None:
                self.cluster.shutdown()
            if self.embedded is not None:
                self.embedded.stop()
            timings["shutdown"] = round(time.perf_counter() - stopping, 1)
        self.results["elapsed_s"] = round(time.perf_counter() - clock, 1)
        shutil.rmtree(self.workdir, ignore_errors=True)  # kept, with the logs, if a phase failed
        return self.results

    def masters(self) -> list[redis.Redis]:
        """The masters of the run's Redis Cluster (none for a single Redis)."""
        if self.cluster is None or self.cluster.redis_cluster is None:
            return []
        nodes = self.cluster.redis_cluster.masters_now()
        return [redis.Redis(port=node.port, decode_responses=True) for node in nodes]

    async def partition_spread(self) -> dict[str, Any]:
        """How evenly the max phase's turns spread over the partitions of the turns stream (a
        conversation's partition is the CRC-32 of its id, ``shared.keys.partition_of``), and
        the master that held each partition."""
        assert self.cluster is not None and self.cluster.redis_cluster is not None
        local = self.cluster.redis_cluster
        keys = Keys(self.prefix, self.options.partitions)
        turns = Counter(
            partition_of(sample.conversation_id, keys.partitions) for sample in self.peak_samples
        )
        return {
            part.removeprefix(self.prefix): {
                "turns": turns[index],
                "node": local.node_of(part).address,
            }
            for index, part in enumerate(keys.parts(keys.turns))
        }

    async def system_phases(self, counters: Counters, client: redis.Redis) -> dict[str, Any]:
        options = self.options
        idle = await self.idle(counters) if self.cluster else None
        await run_load(self.connect, LoadPlan(users=8, seconds=3, warmup_s=0), self.conversations())
        one, _ = await self.phase("one", LoadPlan(users=1, seconds=options.one_seconds), counters)
        profiler = await self.start_profiler() if options.profile and self.cluster else None
        peak, self.peak_samples = await self.phase(
            "max", LoadPlan(users=options.users, seconds=options.seconds), counters
        )
        if profiler is not None:
            self.results["profile"] = await self.finish_profiler(profiler)
        if counters.redis is not None:
            peak["redis_memory"] = redis_memory(client)
        rate = max(1.0, peak["turns_per_s"] / 2)
        half, _ = await self.phase(
            "half",
            LoadPlan(users=options.users, seconds=options.short_seconds, rate=rate),
            counters,
        )
        return {"idle": idle, "one": one, "max": peak, "half": half}

    async def start_profiler(self) -> asyncio.subprocess.Process | None:
        """py-spy on the first replica of ``--profile``'s service, for the max phase."""
        service = self.options.profile
        assert self.cluster is not None and service is not None
        py_spy = shutil.which("py-spy")
        replicas = self.cluster.replicas(service)
        if py_spy is None or not replicas:
            progress(f"no profile: {'py-spy is not installed' if replicas else 'no ' + service}")
            return None
        progress(f"profiling {service} with py-spy during the max phase")
        return await asyncio.create_subprocess_exec(
            py_spy, "record", "--nonblocking", "-r", "100", "-f", "raw",
            "-d", str(max(1, int(self.options.seconds))), "-p", str(replicas[0].pid),
            "-o", str(self.workdir / "profile.raw"),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip

    async def finish_profiler(self, profiler: asyncio.subprocess.Process) -> dict[str, Any]:
        await profiler.wait()
        raw = self.workdir / "profile.raw"
        lines = raw.read_text().splitlines() if raw.exists() else []
        return {"service": self.options.profile, **summarize_raw(lines).as_dict()}

    async def idle(self, counters: Counters, seconds: float = 3.0) -> dict[str, Any]:
        """What the services cost with no traffic at all (polling reads, heartbeats, sweeps)."""
        progress(f"idle: {seconds:.0f}s without traffic")
        before = counters.read()
        await asyncio.sleep(seconds)
        after = counters.read()
        wall = after["at"] - before["at"]
        cpu = {
            name: round(1000 * (used - before["cpu"].get(name, 0.0)) / wall, 1)
            for name, used in after["cpu"].items()
            if name != "driver"
        }
        calls = calls_delta(before["calls"], after["calls"])
        return {
            "cpu_ms_per_s": cpu,
            "cores": round(sum(cpu.values()) / 1000, 3),
            "redis_commands_per_s": round(sum(calls.values()) / wall, 1),
        }

    # Baselines --------------------------------------------------------------------------------

    async def subprocess_json(self, *args: str) -> dict[str, Any]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, *args, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed:\n{err.decode()[-2000:]}")
        return json.loads(out.decode().strip().splitlines()[-1])

    async def baseline_a(self, client: redis.Redis) -> dict[str, Any]:
        options = self.options
        progress("baseline A: the same conversations through the services' code in one process")
        first = self.take_indexes(100_000)
        counters = Counters(client, None)
        before = counters.read()
        redis_before = cpu_seconds(self.redis_pid())
        load = OtherLoad(self.cluster)
        result = await self.subprocess_json(
            "-m", "bench.inproc",
            "--redis-url", self.redis_url,
            "--prefix", f"{self.prefix}a:",
            "--run-id", f"{self.run_id}a",
            "--base", BASE.isoformat(),
            "--first-index", str(first),
            "--phase", f"one:1:{options.one_seconds}",
            "--phase", f"max:{options.users}:{options.seconds}",
        )  # fmt: skip
        after = counters.read()
        turns = int(result["turns"])
        costs = counters.per_turn(before, after, turns)
        result["cpu_ms_per_turn"] = {
            "process": round(1000 * result.pop("cpu_s") / turns, 3),
            "redis": round(1000 * (cpu_seconds(self.redis_pid()) - redis_before) / turns, 3),
        }
        result["redis_commands_per_turn"] = costs.get("redis_commands_per_turn")
        result["max"]["other_load_cores"] = load.cores()
        if result["errors"]:
            progress(f"baseline A: handler errors, first: {result['errors'][0]}")
        # Averages over both phases, shown on the max row of the table.
        result["max"]["cpu_ms_per_turn_total"] = sum(result["cpu_ms_per_turn"].values())
        result["max"]["redis_commands_per_turn"] = result["redis_commands_per_turn"]
        return result

    def redis_pid(self) -> int:
        if self.cluster is not None:
            return self.cluster.redis_pid
        if self.embedded is not None and self.embedded.process is not None:
            return self.embedded.process.pid
        return 0

    async def baseline_b(self, client: redis.Redis) -> dict[str, Any]:
        options = self.options
        progress("baseline B: a bare FastStream chain with a turn's hops and empty handlers")
        prefix = f"{self.prefix}b:"
        load = OtherLoad(self.cluster)
        roles = []
        for role in ("triage", "trial", "mode_router", "merger"):
            args = ["-m", "bench.busfloor", role, "--redis-url", self.redis_url, "--prefix", prefix]
            with open(self.workdir / f"floor-{role}.log", "ab") as log:
                process = await asyncio.create_subprocess_exec(
                    sys.executable, *args, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=log
                )
            roles.append(process)
        try:
            for process in roles:
                assert process.stdout is not None
                async with asyncio.timeout(60):
                    line = await process.stdout.readline()
                if b"ready" not in line:
                    raise RuntimeError("a baseline B role did not start")
            pids = [p.pid for p in roles]
            cpu_before = sum(cpu_seconds(pid) for pid in pids)
            redis_before = cpu_seconds(self.redis_pid())
            result = await self.subprocess_json(
                "-m", "bench.busfloor", "drive",
                "--redis-url", self.redis_url, "--prefix", prefix,
                "--phase", f"one:1:{options.one_seconds}",
                "--phase", f"max:{options.users}:{options.seconds}",
            )  # fmt: skip
            chains = max(1, int(result.pop("chains")))
            workers = sum(cpu_seconds(pid) for pid in pids) - cpu_before
            result["cpu_ms_per_turn"] = {
                "workers": round(1000 * workers / chains, 3),
                "driver": round(1000 * result.pop("driver_cpu_s") / chains, 3),
                "redis": round(1000 * (cpu_seconds(self.redis_pid()) - redis_before) / chains, 3),
            }
            result["max"]["cpu_ms_per_turn_total"] = sum(result["cpu_ms_per_turn"].values())
        finally:
            for process in roles:
                if process.returncode is None:
                    process.terminate()
            for process in roles:
                await process.wait()
        result["max"]["other_load_cores"] = load.cores()
        return result

    # Phases that restart services ---------------------------------------------------------------

    async def llm_phase(self, client: redis.Redis) -> dict[str, Any]:
        options = self.options
        cluster = self.cluster
        assert cluster is not None
        progress(f"baseline C: llm mode, simulated LLM answering in {options.llm_delay_ms} ms")
        with open(self.workdir / "llm_server.log", "ab") as log:
            server = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.llm_server", "--delay-ms", str(options.llm_delay_ms),
                cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=log,
            )  # fmt: skip
        try:
            assert server.stdout is not None
            async with asyncio.timeout(60):
                base_url = json.loads(await server.stdout.readline())["base_url"]
            stats_url = base_url.removesuffix("/v1") + "/stats"

            def llm_requests() -> int:
                return int(httpx.get(stats_url, timeout=5).json()["requests"])

            result: dict[str, Any] = {"delay_ms": options.llm_delay_ms}
            variants: list[tuple[str, int | None]] = [("default_workers", None)]
            if options.llm_workers:
                variants.append(("more_workers", options.llm_workers))
            for label, workers in variants:
                env = {"ORQ_NLU_MODE": "llm", "ORQ_LLM_BASE_URL": base_url}
                if workers:
                    env["ORQ_LLM_WORKERS"] = str(workers)
                cluster.restart_many(LLM_SERVICES, **env)
                cluster.wait_ready()
                counters = Counters(client, cluster, llm_requests, {"llm_server": [server.pid]})
                plans = [(label, LoadPlan(options.llm_users, options.seconds, warmup_s=3.0))]
                if label == "default_workers":
                    # Few people first: the turn's own time, with no queue in front of it.
                    plans.insert(0, ("light", LoadPlan(LIGHT_USERS, options.short_seconds, 2.0)))
                for name, plan in plans:
                    phase, samples = await self.phase(f"llm ({name})", plan, counters)
                    phase["workers"] = workers or Settings().llm_workers
                    phase["critical_path"] = critical_path(client, self.prefix, samples, options)
                    result[name] = phase
        finally:
            server.terminate()
            await server.wait()
        return result

    async def scaling(self, client: redis.Redis) -> dict[str, Any]:
        options = self.options
        cluster = self.cluster
        assert cluster is not None
        progress(f"scaling: trial burning {options.trial_burn_ms} ms of CPU per task")
        self.mix = BOOKING_MIX
        heavy = {"ORQ_BENCH_TRIAL_BURN_MS": str(options.trial_burn_ms)}
        # Back to rules mode (the llm phase may have run), with the heavy trial: the last phase,
        # so nothing is restored after it. Services run together run alone here: the phase
        # adds replicas of the trial by itself.
        stopped = [c for c in cluster.children if set(c.service.split("+")) & {*LLM_SERVICES}]
        cluster.stop(stopped)
        for service in dict.fromkeys(s for c in stopped for s in c.service.split("+")):
            cluster.spawn(service, "bench.heavy_trial" if service == "trial" else None, **heavy)
        rows = []
        try:
            for replicas in (1, 2, 3):
                if replicas > 1:
                    cluster.spawn("trial", "bench.heavy_trial", **heavy)
                cluster.wait_ready()
                counters = Counters(client, cluster)
                plan = LoadPlan(users=options.scaling_users, seconds=options.short_seconds)
                phase, _ = await self.phase(f"scaling trial={replicas}", plan, counters)
                rows.append({"trial_replicas": replicas, **phase})
        finally:
            self.mix = DEFAULT_MIX
        return {"burn_ms": options.trial_burn_ms, "rows": rows}

    async def burst_window(self, client: redis.Redis) -> dict[str, Any]:
        """One person saying only complete messages, the gateway at the default short window:
        first with the fragment wait off, then at its default. A complete message must pay the
        short window either way; the two rows side by side show what the fragment rule costs."""
        cluster = self.cluster
        assert cluster is not None
        phases: dict[str, Any] = {}
        self.mix = COMPLETE_MIX
        try:
            for key, fragment_ms in (("one_fragment_off", 0), ("one", DEFAULT_BURST_FRAGMENT_MS)):
                progress(
                    f"burst window: gateway restarted with ORQ_BURST_WINDOW_MS="
                    f"{DEFAULT_BURST_WINDOW_MS} and ORQ_BURST_FRAGMENT_MS={fragment_ms}, "
                    "complete messages only"
                )
                cluster.restart(
                    "gateway",
                    ORQ_BURST_WINDOW_MS=str(DEFAULT_BURST_WINDOW_MS),
                    ORQ_BURST_FRAGMENT_MS=str(fragment_ms),
                )
                cluster.wait_ready()
                phases[key], samples = await self.phase(
                    f"one (burst window, fragment wait {fragment_ms} ms)",
                    # A longer warm-up: the first phase after the loaded ones ran slower.
                    LoadPlan(users=1, seconds=self.options.one_seconds, warmup_s=3.0),
                    Counters(client, cluster),
                )
            # Latency on a shared machine is noisy; the waits the gateway chose are not.
            phases["waits"] = quiet_waits(client, self.prefix, samples)
        finally:
            self.mix = DEFAULT_MIX
            # The parts after this one measure without the windows, like the ones before.
            cluster.restart("gateway")
            cluster.wait_ready()
        return {
            "burst_window_ms": DEFAULT_BURST_WINDOW_MS,
            "burst_fragment_ms": DEFAULT_BURST_FRAGMENT_MS,
            **phases,
        }


def quiet_waits(client: redis.Redis, prefix: str, samples: list[TurnSample]) -> dict[str, int]:
    """How many of the sampled conversations' turns waited each quiet window, by the rule that
    chose it (``quiet_rule`` of their ``turn.started`` journal entries)."""
    counts: dict[str, int] = {}
    for conversation_id in sorted({s.conversation_id for s in samples}):
        for raw in client.lrange(f"{prefix}{{{conversation_id}}}:journal", 0, -1):
            entry = json.loads(raw)
            if entry.get("event") == "turn.started":
                rule = f"{entry.get('quiet_rule')} {entry.get('quiet_ms')} ms"
                counts[rule] = counts.get(rule, 0) + 1
    return counts


def critical_path(
    client: redis.Redis, prefix: str, samples: list[TurnSample], options: Options
) -> dict[str, Any]:
    """The LLM calls of each sampled turn, from the journals of (up to 300 of) its
    conversations, against the turn's latency (``bench.stats.llm_critical_path``)."""
    conversations = sorted({s.conversation_id for s in samples})[:300]
    calls: dict[str, dict[str, int]] = {}
    for conversation_id in conversations:
        for raw in client.lrange(f"{prefix}{{{conversation_id}}}:journal", 0, -1):
            entry = json.loads(raw)
            if entry.get("event") in ("llm.used", "llm.fallback") and entry.get("turn_id"):
                per_service = calls.setdefault(entry["turn_id"], {})
                per_service[entry["service"]] = per_service.get(entry["service"], 0) + 1
    return llm_critical_path(samples, calls, options.llm_delay_ms)


def speed_probe(iterations: int = 1_000_000) -> float:
    """CPU ms of a fixed pure-Python loop. The machine is shared and its speed drifts (the same
    loop took twice as long as a few minutes earlier, here), so each part of a run is stamped
    with the speed it ran at: figures from parts at different speeds do not compare exactly."""
    started = time.process_time()
    total = 0
    for i in range(iterations):
        total += i * i
    return round(1000 * (time.process_time() - started), 1)


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_1m_before": round(load, 2) if load is not None else None,
    }
