"""One service process: its tenants, their loops, pack reloads and an orderly stop.

A process serves every tenant of the deployment (one, without ``ORQ_TENANTS``). ``Tenancy``
holds one runtime per tenant over the process's shared Redis clients and broker
(``shared.service.for_tenant``), builds each with the service's ``build``, and runs each one's
loops. Loops that belong to the process (heartbeat, the reload watcher, the gateway's janitor)
run once, on the base runtime.

``orquestra tenants reload`` appends a request to a stream that every process reads (no
consumer group: each process applies every request). The process reads the tenants file and the
packs again and builds the named tenants anew; a new build's handlers replace the old ones on
every stream in one step (``Bus.install``), then the old loops stop. So a reload is atomic per
tenant: a message is handled wholly by the old configuration or wholly by the new one. A build
that fails (a pack that no longer loads, a section the service refuses) leaves the tenant as it
was, with an error log line; the process then records the request as applied, which the
command waits for.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from typing import Any, cast

import uvloop
from prometheus_client import start_http_server
from pydantic import ValidationError

from shared import tracing
from shared.bus import ensure_groups, running_taken
from shared.keys import Topology
from shared.lag import register_lag_collector
from shared.logs import get_logger, setup_logging
from shared.loops import supervised
from shared.pack import PackError, load_pack
from shared.service import Lookup, Runtime, SharedLoop, for_tenant, make_runtime
from shared.settings import Settings, get_settings
from shared.spec import ServiceSpec
from shared.tenants import Sections, Tenant, TenantsError, tenants_of
from shared.tracing import TracingConfigError

# How long the reload watcher's XREAD blocks: under redis-py's default socket timeout (5 s),
# else every read timed out client-side, dropped its connection and was retried on a new one
# (a reconnect every 5 s in every process, doing nothing).
RELOAD_BLOCK_MS = 4000

Build = Callable[[Runtime, Tenant], None]
Job = Callable[[], Awaitable[None]]
Tasks = list[asyncio.Task[None]]
# XREAD's reply with decoded responses: per stream, its entries (id, fields).
ReadReply = list[tuple[str, list[tuple[str, dict[str, str]]]]] | None


async def heartbeat(rt: Runtime) -> None:
    """Announce a live consumer; /healthz reads these. Runs supervised (``shared/loops.py``),
    so a Redis outage delays the next beat instead of ending them."""
    member = f"{rt.service}|{rt.bus.consumer}"
    while True:
        now = time.time()
        async with rt.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(rt.keys.heartbeats(member), {member: now})
            pipe.zremrangebyscore(rt.keys.heartbeats(member), 0, now - 3600)
            await pipe.execute()
        await asyncio.sleep(rt.settings.heartbeat_s)


async def watch_parent() -> None:
    """Exit when the supervisor that started us is gone, so no process is left behind."""
    parent = os.getppid()
    while True:
        await asyncio.sleep(1.0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def run_loops(rt: Runtime, jobs: list[Job]) -> Tasks:
    """Each job as a supervised task (restarted after a failure), logged as ``rt``'s."""
    return [
        asyncio.create_task(supervised(name, job, rt.log), name=name)
        for job in jobs
        if (name := getattr(job, "__name__", repr(job)))
    ]


async def cancel(tasks: Tasks) -> None:
    # A cancel can be swallowed on Python 3.11 when it lands inside a client's own timeout
    # (redis-py's socket timeout runs through asyncio.wait_for): cancel until each task ends.
    for task in tasks:
        while not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=1.0)
    for task in tasks:
        with suppress(asyncio.CancelledError):
            await task


async def start(rt: Runtime) -> Tasks:
    """Create the bus's groups, start the broker, run the process's loops and ``rt``'s."""
    await ensure_groups(rt.redis, rt.keys)
    await rt.bus.broker.start()

    async def beat() -> None:
        await heartbeat(rt)

    jobs: list[Job] = [beat, *rt.background]
    if os.environ.get("ORQ_SUPERVISED") == "1":
        jobs.append(watch_parent)
    return run_loops(rt, jobs)


async def stop(rt: Runtime, tasks: Tasks) -> None:
    await cancel(tasks)
    # Messages taken on write still running stay pending: another replica reclaims them.
    await cancel(running_taken())
    await rt.bus.broker.stop()
    for hook in rt.on_stop:
        await hook()
    if rt.llm:
        await rt.llm.aclose()
    member = f"{rt.service}|{rt.bus.consumer}"
    await rt.redis.zrem(rt.keys.heartbeats(member), member)
    await rt.redis.aclose()
    # The spans still buffered go out before the process ends.
    tracing.shutdown()


class Tenancy:
    """The tenants one process serves, each on a runtime of its own, rebuilt on a reload."""

    def __init__(
        self,
        base: Runtime,
        build: Build,
        settings: Settings,
        retire_after_s: float = 0.0,
        sections: Sections | None = None,
    ) -> None:
        self.base = base
        self.build = build
        self.settings = settings
        # The channel sections of a tenant's entry this process reads (the gateway's).
        self.sections = sections
        # How long a replaced runtime's resources stay open after a reload, for the work it
        # has in flight (the gateway: its longest long-poll); then its stop hooks run.
        self.retire_after_s = retire_after_s
        self._retiring: dict[asyncio.Task[None], Runtime] = {}
        self.tenants: list[Tenant] = []
        self.served: dict[str, Runtime] = {}
        self._loops: dict[str, Tasks] = {}
        # name -> tenant -> object, for the shared loops (``Runtime.shared_loops``).
        self.exports: dict[str, dict[str, Any]] = {}
        self._shared: dict[str, SharedLoop] = {}
        self._shared_tasks: Tasks = []
        # Told after every reload (the gateway rebuilds how requests find their tenant).
        self.listeners: list[Callable[[Tenancy], None]] = []

    def _build(self, tenant: Tenant, *, strict: bool = False) -> Runtime | None:
        """A new runtime for ``tenant``, built, its subscriptions staged; None when the
        tenant's pack does not load or this service refuses it (said in the log). ``strict``:
        raise instead (the one business of a deployment at start, as before tenants)."""
        if tenant.pack is None:
            self.base.log.error(tenant.problem or "tenant disabled", tenant=tenant.id)
            return None
        rt = for_tenant(self.base, tenant)
        try:
            self.build(rt, tenant)
        except (PackError, ValidationError) as exc:
            if strict:
                raise
            rt.log.error("tenant not served by this service: its pack is refused", error=str(exc))
            return None
        return rt

    def lookup(self, name: str) -> Lookup:
        """What a shared loop named ``name`` finds each tenant's object with."""
        return lambda tenant_id: self.exports.get(name, {}).get(tenant_id)

    def _run_shared(self, name: str, loop: SharedLoop) -> asyncio.Task[None]:
        lookup = self.lookup(name)

        async def shared() -> None:
            await loop(lookup)

        shared.__name__ = f"shared {name}"
        [task] = run_loops(self.base, [shared])
        return task

    async def _swap(self, tenant_id: str, new: Runtime | None) -> None:
        # The exports change in the same step as the handlers: ``install`` swaps those before
        # its first await, so nothing runs between the two.
        for objects in self.exports.values():
            objects.pop(tenant_id, None)
        for name, exported in new.exports.items() if new else []:
            self.exports.setdefault(name, {})[tenant_id] = exported
        await self.base.bus.install(new.bus if new else None, tenant_id)
        old = self.served.pop(tenant_id, None)
        old_loops = self._loops.pop(tenant_id, [])
        running = self.base.bus.broker.running
        if new is not None:
            self.served[tenant_id] = new
            for name, loop in new.shared_loops.items():
                if name not in self._shared:
                    self._shared[name] = loop
                    if running:
                        self._shared_tasks.append(self._run_shared(name, loop))
            if running:
                self._loops[tenant_id] = run_loops(new, new.background)
        if old is not None:
            await cancel(old_loops)
            if self.retire_after_s and running:
                task = asyncio.create_task(self._retire(old), name=f"retire {tenant_id}")
                self._retiring[task] = old
            else:
                for hook in old.on_stop:
                    await hook()

    async def _retire(self, old: Runtime) -> None:
        await asyncio.sleep(self.retire_after_s)
        for hook in old.on_stop:
            await hook()
        if (task := asyncio.current_task()) is not None:
            self._retiring.pop(task, None)

    async def serve(self, tenants: list[Tenant]) -> None:
        """Build every tenant (before the broker starts: ``start_loops`` runs their loops)."""
        self.tenants = tenants
        for tenant in tenants:
            if (rt := self._build(tenant, strict=not tenant.id)) is not None:
                await self._swap(tenant.id, rt)

    def start_loops(self) -> None:
        for tenant_id, rt in self.served.items():
            self._loops[tenant_id] = run_loops(rt, rt.background)
        self._shared_tasks = [self._run_shared(name, loop) for name, loop in self._shared.items()]

    async def reload(self, only: str | None) -> None:
        """Read the tenants and their packs again; build ``only`` (every tenant: None) anew."""
        load_pack.cache_clear()
        try:
            fresh = tenants_of(self.settings, self.sections)
        except (TenantsError, PackError) as exc:
            self.base.log.error("reload refused, tenants unchanged", error=str(exc))
            return
        before = {tenant.id: tenant for tenant in self.tenants}
        after: dict[str, Tenant] = {}
        for tenant in fresh:
            if only not in (None, tenant.id):
                if tenant.id in before:
                    after[tenant.id] = before[tenant.id]
                continue
            new = self._build(tenant)
            if new is None and tenant.id in self.served:
                # Refused: keep serving it as it was, tokens and pack included.
                after[tenant.id] = before[tenant.id]
                continue
            await self._swap(tenant.id, new)
            after[tenant.id] = tenant
            self.base.log.info("tenant reloaded", tenant=tenant.id, pack=new and new.pack.name)
        for gone in [tenant_id for tenant_id in before if tenant_id not in after]:
            if only in (None, gone):
                await self._swap(gone, None)
                self.base.log.info("tenant no longer served", tenant=gone)
            else:
                after[gone] = before[gone]
        self.tenants = list(after.values())
        for listener in self.listeners:
            listener(self)

    async def stop(self) -> None:
        await cancel(self._shared_tasks)
        await cancel(list(self._retiring))
        for old in self._retiring.values():
            for hook in old.on_stop:
                await hook()
        for tenant_id in list(self.served):
            await cancel(self._loops.pop(tenant_id, []))
            for hook in self.served.pop(tenant_id).on_stop:
                await hook()

    async def watch_reloads(self) -> None:
        """Apply every reload request appended after this process started, in order, and
        record each as applied (``orquestra tenants reload`` waits for every live process)."""
        rt = self.base
        stream, applied = rt.keys.tenant_reloads, rt.keys.tenant_reloads_applied
        latest = cast(list[tuple[str, dict[str, str]]], await rt.redis.xrevrange(stream, count=1))
        last = latest[0][0] if latest else "0-0"
        while True:
            read = cast(
                ReadReply, await rt.redis.xread({stream: last}, block=RELOAD_BLOCK_MS, count=10)
            )
            for _, entries in read or []:
                for entry_id, fields in entries:
                    last = entry_id
                    await self.reload(fields.get("tenant") or None)
                    await rt.redis.hset(applied, rt.bus.consumer, entry_id)


def make_tenancy(
    spec: ServiceSpec,
    build: Build,
    settings: Settings | None = None,
    *,
    topology: Topology,
    retire_after_s: float = 0.0,
    sections: Sections | None = None,
) -> tuple[Runtime, Tenancy, list[Tenant]]:
    """The process's base runtime and its ``Tenancy`` (not built yet), and the tenants.
    ``TenantsError`` when the tenants file is bad or no tenant's pack loads."""
    settings = settings or get_settings()
    tenants = tenants_of(settings, sections)
    enabled = [tenant for tenant in tenants if tenant.pack is not None]
    if not enabled:
        problems = "; ".join(tenant.problem or tenant.id for tenant in tenants)
        raise TenantsError(f"no tenant can be served: {problems}")
    base = make_runtime(spec, settings, topology=topology, tenant=enabled[0])
    base.log = get_logger(spec.name).bind(service=spec.name)
    tenancy = Tenancy(base, build, settings, retire_after_s, sections)

    async def watch_reloads() -> None:
        await tenancy.watch_reloads()

    base.background.append(watch_reloads)
    return base, tenancy, tenants


def build_service(spec: ServiceSpec) -> Build:
    """A worker's build: its spec's ``build(rt)``, unless the tenant's pack lacks its section."""

    def build(rt: Runtime, tenant: Tenant) -> None:
        if spec.out_of(rt.pack):
            rt.log.info(
                f"out of this pack's turns: pack {rt.pack.name!r} has no "
                f"{spec.needs_section!r} section; idling"
            )
            return
        spec.builder()(rt)

    return build


Running = list[tuple[Runtime, Tenancy, Tasks]]


async def serve_services(specs: Sequence[ServiceSpec], topology: Topology) -> Running:
    """Build and start ``specs`` in this process, each as it would run alone."""
    served: list[tuple[Runtime, Tenancy]] = []
    for spec in specs:
        rt, tenancy, tenants = make_tenancy(spec, build_service(spec), topology=topology)
        await tenancy.serve(tenants)
        served.append((rt, tenancy))
    running: Running = []
    for rt, tenancy in served:
        running.append((rt, tenancy, await start(rt)))
        tenancy.start_loops()
        rt.log.info(
            "service started",
            consumer=rt.bus.consumer,
            packs={tenant_id or "-": each.pack.name for tenant_id, each in tenancy.served.items()},
        )
    settle_heap()
    return running


# Allocations (less deallocations) that start a young collection: CPython's 700 runs one
# every few turns here (each one a fixed cost, most of what they find already freed by reference
# counting); 5,000 runs one now and then. Cycles still go, a little later.
YOUNG_COLLECTION_THRESHOLD = 5000


def settle_heap() -> None:
    """What a process built to start (packs, NLU tables, pydantic's validators, routes: about
    160,000 objects) lives as long as the process; ``gc.freeze`` takes it out of the garbage
    collector's generations. Every full collection walked all of it, about 100 ms each under
    load, 4-5 % of a together replica's CPU; now they walk what the turns made. Garbage of the
    start is collected first, so none of it is kept. Young collections, then about 1.5 % of the
    CPU, run less often (``YOUNG_COLLECTION_THRESHOLD``)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


async def stop_services(running: Running) -> None:
    for rt, tenancy, tasks in running:
        rt.log.info("service stopping")
        await tenancy.stop()
        await stop(rt, tasks)


async def _serve(specs: Sequence[ServiceSpec], topology: Topology) -> None:
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    running = await serve_services(specs, topology)
    first = running[0][0]
    if first.settings.metrics_port:
        start_http_server(first.settings.metrics_port)
        register_lag_collector(
            first.settings.redis_url, first.keys, cluster=first.settings.redis_mode == "cluster"
        )
    await stopping.wait()
    await stop_services(running)


def run_service(spec: ServiceSpec, topology: Topology) -> None:
    """Run a service on uvloop: its event loop and socket transports are C, and a bus
    service spends most of its CPU in them (docs/performance.md)."""
    run_services((spec,), topology)


def run_services(specs: Sequence[ServiceSpec], topology: Topology) -> None:
    """Run several services in one process (``python -m services A B``), each with its own
    runtime, broker, consumer and loops as if it ran alone; what one publishes to another is
    read on write (``shared.bus``), without a delivery of its own."""
    settings = get_settings()
    name = "+".join(spec.name for spec in specs)
    setup_logging(name, settings.log_level, settings.log_json)
    try:
        # Before the runtime: its broker gets the telemetry middleware only when tracing is on.
        tracing.setup(name)
        uvloop.run(_serve(specs, topology))
    except (TenantsError, TracingConfigError) as exc:
        sys.exit(f"{name}: {exc}")
