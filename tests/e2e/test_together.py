"""Workers run together in one process (``orquestra up --together``): what one of them commits
for another is taken on write and run there (``shared.bus``), and every guarantee of a
delivery holds: a ``kill -9`` of that process mid-load loses no turn and answers none twice,
because a taken message is pending under the process's consumer like any other delivery and
the claimer of the replica that lives on (or of the restarted one) takes it up."""

from __future__ import annotations

import asyncio
import os
import signal
from datetime import datetime, timedelta

import pytest

from tests.e2e.test_reliability import FAST_RECOVERY
from tests.load import BOOKING, booked_once, children, drive_while, load_size
from tests.system import System

WORKERS = "triage,mode_router,trial,faq,enrollment"
ALL = "gateway,triage,mode_router,trial,faq,enrollment"


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("together", "group"),
    [
        (WORKERS, "triage+trial+faq+enrollment+mode_router"),
        (ALL, "gateway+triage+trial+faq+enrollment+mode_router"),
    ],
    ids=["workers", "with-the-gateway"],
)
def test_kill_9_of_a_process_running_services_together_mid_load_every_turn_answered_once(
    redis_url: str, unique_prefix: str, together: str, group: str
) -> None:
    """Two replicas of the process (the gateway's share its port); one is killed mid-load."""
    n = load_size(16)
    base = datetime.fromisoformat("2026-03-05T10:00:00-03:00")
    scripts = {f"together-{i}": (BOOKING, base + timedelta(weeks=i)) for i in range(n)}
    env = {**FAST_RECOVERY, "ORQ_MERGE_DEADLINE_MS": "10000"}
    with System.up(
        redis_url, unique_prefix, "--together", together, "--scale", "trial=2", **env
    ) as system:
        processes = children(system.process.pid)
        assert len(processes[group]) == 2
        assert not set(together.split(",")) & set(processes)

        async def chaos() -> None:
            await asyncio.sleep(0.8)
            os.kill(children(system.process.pid)[group][0], signal.SIGKILL)

        run = drive_while(chaos, system.base_url, scripts, n)
        assert booked_once(system, redis_url, unique_prefix, scripts, run)
