"""A process's tenants on a real Redis (``shared/process.py``): a reload replaces a tenant's
loops, the old ones stop and the new ones run, and a shared loop runs once for every tenant."""

from __future__ import annotations

import asyncio

from redis.asyncio import Redis

from services.registry import BY_NAME, TOPOLOGY
from shared.bus import Bus, make_broker
from shared.contracts import DeadLetter
from shared.keys import Keys
from shared.process import make_tenancy, start, stop
from shared.service import Lookup, Runtime
from shared.settings import Settings
from shared.tenants import Tenant
from tests.system import decode_entry


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


async def test_a_stream_first_read_after_a_reload_is_consumed(
    redis_url: str, redis: Redis, unique_prefix: str
) -> None:
    """A tenant added by a reload may need a stream no tenant of the process read before (a
    trial service that idled while every tenant's pack lacked trial classes): its subscriber
    starts on the running broker; once the tenant is removed again, its messages are no
    handler's here (retried, then dead-lettered)."""
    # One attempt: a message no tenant here serves goes to the dead letters at once.
    settings = Settings(prefix=unique_prefix, redis_url=redis_url, workers=1, max_attempts=1)
    broker = make_broker(settings)
    bus = Bus(broker, redis, settings, Keys(unique_prefix), "tenancy-test")
    stream, group = f"{unique_prefix}late", "late"
    await redis.xgroup_create(stream, group, id="0", mkstream=True)
    await broker.start()
    handled = asyncio.Event()
    calls: list[str] = []

    async def handle(body: bytes) -> None:
        calls.append(body.decode())
        handled.set()

    try:
        acme = bus.for_tenant(Keys(unique_prefix, tenant="acme"))
        acme.subscribe(stream, group, handle)
        await bus.install(acme, "acme")
        await acme.publish(stream, "for acme")
        async with asyncio.timeout(10):
            await handled.wait()
        await bus.install(None, "acme")
        await acme.publish(stream, "after acme left")
        raw = Redis.from_url(redis_url)  # entries in FastStream's binary format
        async with asyncio.timeout(10):
            read = await raw.xread({bus.keys.dlq: "0-0"}, block=10_000, count=1)
        await raw.aclose()
        [(_, [(_, fields)])] = read
        letter = DeadLetter.model_validate_json(decode_entry(fields))
        assert "UnknownTenant" in letter.error and letter.payload == "after acme left"
        assert calls == ["for acme"]
    finally:
        await broker.stop()
