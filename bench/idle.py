"""What a deployment costs while nobody talks to it, by the number of tenants it serves.

    python -m bench.idle [--tenants 1 20] [--warmup 10] [--seconds 20]

For each count, runs ``orquestra up --embedded`` with that many tenants (every one on the
``ctsmash`` pack, in a tenants file of its own), waits ``--warmup`` seconds, then reads the
embedded Redis' processed-command count and the CPU time of every process ``up`` started (the
services and Redis) over ``--seconds``. Every polling loop running once per process, whatever
the number of tenants, is what keeps the second count's figures at the first's
(docs/operations/tenants.md).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml
from redis import Redis

from bench.cluster import cpu_seconds
from orquestra.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent
UP_TIMEOUT_S = 120
REDIS_URL = re.compile(r"redis://127\.0\.0\.1:\d+")


def tenants_file(folder: Path, count: int) -> Path:
    listed = [
        {"id": f"t{i:03d}", "pack": "ctsmash", "admin_token": f"idle-{i:03d}-0123456789abcdef"}
        for i in range(count)
    ]
    path = folder / f"tenants-{count}.yaml"
    path.write_text(yaml.safe_dump({"tenants": listed}), encoding="utf-8")
    return path


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (``up`` starts each in a session of its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def measure(count: int, folder: Path, warmup_s: float, seconds: float) -> tuple[float, float]:
    """(Redis commands/s, CPU ms/s of the services and Redis) of an idle deployment."""
    env = {
        **os.environ,
        "ORQ_TENANTS": str(tenants_file(folder, count)),
        "ORQ_PREFIX": f"idle{count}:",
        "ORQ_LOG_LEVEL": "WARNING",
    }
    port = free_port()
    command = [sys.executable, "-m", "orquestra.cli", "up", "--embedded", "--port", str(port)]
    command += ["--data-dir", str(folder / f"data-{count}")]
    up = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        url = None
        deadline = time.monotonic() + UP_TIMEOUT_S
        assert up.stdout is not None
        for line in up.stdout:
            if match := REDIS_URL.search(line):
                url = url or match[0]
            if "orquestra: up:" in line or time.monotonic() > deadline:
                break
        if url is None:
            raise RuntimeError(f"orquestra up with {count} tenants did not come up")
        # Keep reading what it says, so a full pipe never blocks it.
        threading.Thread(target=up.stdout.read, daemon=True).start()
        time.sleep(warmup_s)
        redis = Redis.from_url(url)
        pids = [up.pid, *children(up.pid)]
        commands = int(redis.info("stats")["total_commands_processed"])
        cpu = sum(cpu_seconds(pid) for pid in pids)
        time.sleep(seconds)
        commands = int(redis.info("stats")["total_commands_processed"]) - commands
        cpu = sum(cpu_seconds(pid) for pid in pids) - cpu
        redis.close()
        return commands / seconds, cpu * 1000 / seconds
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.idle", description=__doc__)
    parser.add_argument("--tenants", type=int, nargs="+", default=[1, 20])
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    print("tenants  Redis commands/s  CPU ms/s (services + Redis)")
    with tempfile.TemporaryDirectory(prefix="orq-idle-") as folder:
        for count in args.tenants:
            commands, cpu = measure(count, Path(folder), args.warmup, args.seconds)
            print(f"{count:>7}  {commands:>16.1f}  {cpu:>27.1f}")


if __name__ == "__main__":
    main()
