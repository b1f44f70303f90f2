"""The Redis commands of one scripted conversation, message by message (Redis's ``MONITOR``).

    python -m bench.trace [--index 0] [--together gateway,triage,...]

Starts the services as ``orquestra bench`` does (a private embedded Redis, no burst windows,
the same ``--together``), runs conversation ``--index`` of the bench's mix and prints, for each
message, every command from its POST until its reply was read, those run inside scripts marked
``lua``, then the count. What the bench gives as an average per turn, this shows for one turn.
Polling that does not belong to the turn (blocked reads, heartbeats, the merger's and the
scheduler's timers, the tenants' reload stream) is left out, as is ``MONITOR``'s own marker.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import tempfile
import threading
import uuid
from collections.abc import Iterable
from pathlib import Path

import redis

from bench.cluster import Cluster
from bench.conversations import DEFAULT_MIX, conversation
from bench.run import BASE, NO_BURST_WINDOWS
from bench.targets import HttpSession

# Commands that run whatever the traffic: a line holding one of these is not the turn's.
IDLE = ("BLOCK 1000", "BLOCK 4000", ":heartbeats", ":merge:deadlines -inf", ":merge:deadlines (",
        ":sched:{buckets}", ":tenants:reloads", "XAUTOCLAIM", "XPENDING", "XINFO")  # fmt: skip
MARK = "bench-trace-mark"


def turn_lines(commands: Iterable[str]) -> list[str]:
    """The commands of a turn among everything ``MONITOR`` saw meanwhile."""
    return [c for c in commands if MARK not in c and not any(idle in c for idle in IDLE)]


class Monitor:
    """``MONITOR`` on a thread of its own; ``until_mark`` returns what it saw up to a marker
    command sent after a turn, so nothing of that turn can still be on its way."""

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)
        self.seen: queue.Queue[str] = queue.Queue()
        self.thread = threading.Thread(target=self._listen, daemon=True)
        self.started = threading.Event()

    def _listen(self) -> None:
        with self.client.monitor() as monitor:
            self.started.set()
            try:
                for command in monitor.listen():
                    origin = "lua" if command.get("client_type") == "lua" else "   "
                    self.seen.put(f"{origin} {command['command']}")
            except redis.ConnectionError:
                return  # the trace's Redis stopped with the services: nothing more to see

    def start(self) -> None:
        self.thread.start()
        self.started.wait()

    def until_mark(self, n: int) -> list[str]:
        mark = f"{MARK}-{n}"
        self.client.echo(mark)
        lines: list[str] = []
        while mark not in (line := self.seen.get(timeout=30)):
            lines.append(line)
        return lines


async def trace(base_url: str, index: int, monitor: Monitor) -> list[str]:
    """Each message of the conversation, then the commands of its turn and their count."""
    session = HttpSession(base_url)
    talk = conversation(index, run_id=f"t{uuid.uuid4().hex[:4]}", base=BASE, mix=DEFAULT_MIX)
    out = [f"conversation {talk.conversation_id} ({talk.kind})"]
    monitor.until_mark(0)
    for n, message in enumerate(talk.messages, start=1):
        await session.say(talk.conversation_id, message)
        lines = turn_lines(monitor.until_mark(n))
        out.append(f"-- {message.text!r}: {len(lines)} commands")
        out += [f"   {line[:160]}" for line in lines]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.trace", description=__doc__)
    parser.add_argument("--index", type=int, default=0, help="conversation of the bench's mix")
    parser.add_argument("--together", default="", help="these services in one process")
    options = parser.parse_args(argv)
    together = tuple(name for name in options.together.split(",") if name)
    workdir = Path(tempfile.mkdtemp(prefix="orquestra-trace-"))
    cluster = Cluster(workdir, "trace:", env=dict(NO_BURST_WINDOWS), together=together)
    url = cluster.start_redis()
    try:
        cluster.start_all()
        cluster.wait_ready()
        monitor = Monitor(url)
        monitor.start()
        base_url = f"http://127.0.0.1:{cluster.port}"
        print("\n".join(asyncio.run(trace(base_url, options.index, monitor))))
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
