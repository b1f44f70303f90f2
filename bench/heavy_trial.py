"""``python -m bench.heavy_trial``: the real trial service with a CPU-heavy handler.

For the scaling table the trial must be the bottleneck. Instead of a product setting, this
wraps the service's own ``build``: every handler it subscribes first burns
``ORQ_BENCH_TRIAL_BURN_MS`` of CPU time (process time, so a busy machine does not shorten it),
blocking its event loop as CPU-bound work does, then runs the real handler. One replica then
handles at most 1000 / burn turns per second, and more replicas share the stream's consumer
group, which is what the table shows.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

from services.registry import TOPOLOGY
from services.trial.app import build
from services.trial.spec import SPEC
from shared.bus import Handler
from shared.process import run_service
from shared.service import Runtime


def burn(seconds: float) -> None:
    """Spin for ``seconds`` of this thread's CPU time."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def build_heavy(rt: Runtime) -> None:
    seconds = float(os.environ.get("ORQ_BENCH_TRIAL_BURN_MS", "100")) / 1000
    subscribe = rt.bus.subscribe

    def heavy_subscribe(stream: str, group: str, handler: Handler) -> None:
        async def heavy(body: bytes) -> None:
            burn(seconds)
            await handler(body)

        subscribe(stream, group, heavy)

    rt.bus.subscribe = heavy_subscribe  # type: ignore[method-assign]
    build(rt)


if __name__ == "__main__":
    run_service(replace(SPEC, build="bench.heavy_trial:build_heavy"), TOPOLOGY)
