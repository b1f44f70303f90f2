"""A process's tenants on a real Redis (``shared/process.py``): a reload replaces a tenant's
loops, the old ones stop and the new ones run, and a shared loop runs once for every tenant."""

from __future__ import annotations

import asyncio

from services.registry import BY_NAME, TOPOLOGY
from shared.process import make_tenancy, start, stop
from shared.service import Lookup, Runtime
from shared.settings import Settings
from shared.tenants import Tenant


class Generations:
    """Each build's loop, told apart by the build it came from: started and cancelled."""

    def __init__(self) -> None:
        self.current = 0
        self.started: dict[int, asyncio.Event] = {}
        self.cancelled: dict[int, asyncio.Event] = {}
        self.shared_runs = 0

    def build(self, rt: Runtime, tenant: Tenant) -> None:
        generation = self.current
        self.started[generation] = asyncio.Event()
        self.cancelled[generation] = asyncio.Event()

        async def loop() -> None:
            self.started[generation].set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled[generation].set()
                raise

        async def shared(lookup: Lookup) -> None:
            self.shared_runs += 1
            await asyncio.Event().wait()

        rt.background.append(loop)
        rt.shared_loops["generations"] = shared


async def test_a_reload_stops_the_old_loops_and_runs_the_new_ones(
    redis_url: str, unique_prefix: str
) -> None:
    generations = Generations()
    settings = Settings(redis_url=redis_url, prefix=unique_prefix)
    base, tenancy, tenants = make_tenancy(
        BY_NAME["faq"], generations.build, settings, topology=TOPOLOGY
    )
    await tenancy.serve(tenants)
    tasks = await start(base)
    tenancy.start_loops()
    try:
        async with asyncio.timeout(10):
            await generations.started[0].wait()
            generations.current = 1
            await tenancy.reload(None)
            await generations.started[1].wait()
            await generations.cancelled[0].wait()
        assert not generations.cancelled[1].is_set()
        assert generations.shared_runs == 1
    finally:
        await tenancy.stop()
        await stop(base, tasks)
    assert generations.cancelled[1].is_set()
