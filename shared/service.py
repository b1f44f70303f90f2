"""What every service process shares: connections, bus, state, heartbeat, orderly shutdown.

A service module builds its subscriptions on a ``Runtime`` (``build(rt)``) and its
``__main__`` calls ``run_service(SPEC, TOPOLOGY)`` (its spec and the registry's bus).
Everything a handler needs is on the runtime, passed in explicitly; nothing is global.

A process serving several tenants (``shared/tenants.py``) builds once per tenant, each on a
runtime with that tenant's pack, keys, settings and view of the bus; the Redis clients, the
broker and the subscriptions are the process's, shared.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast
from zoneinfo import ZoneInfo

import uvloop
from prometheus_client import start_http_server
from pydantic import BaseModel, ValidationError
from redis.asyncio import Redis
from structlog.typing import FilteringBoundLogger

from shared.bus import Bus, ensure_groups, make_broker
from shared.connections import connect
from shared.contracts import DomainEvent, Part, SpecialistTask, Turn
from shared.keys import Keys, Topology
from shared.lag import register_lag_collector
from shared.llm import LLMClient, LLMError, LLMSettings
from shared.logs import get_logger, setup_logging
from shared.loops import supervised
from shared.lua import Scripts, register
from shared.metrics import LLM_CALLS
from shared.pack import Pack, PackError
from shared.settings import Settings, get_settings
from shared.spec import ServiceSpec
from shared.state import Outbox, Snapshot, StateConflict, StateStore, journal_entry
from shared.tenants import Tenant, TenantsError, tenants_of

M = TypeVar("M", bound=BaseModel)


@dataclass
class Runtime:
    service: str
    settings: Settings
    keys: Keys
    redis: Redis
    scripts: Scripts
    store: StateStore
    bus: Bus
    pack: Pack
    tz: ZoneInfo
    llm: LLMClient | None = None
    log: FilteringBoundLogger = field(default_factory=get_logger)
    # Long-running loops; each runs under ``shared.loops.supervised`` (restarted after a failure).
    background: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    on_stop: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    owns: tuple[str, ...] = ()

    @property
    def tenant(self) -> str:
        return self.keys.tenant


def _store(
    redis: Redis,
    scripts: Scripts,
    keys: Keys,
    settings: Settings,
    owner: str,
    owns: tuple[str, ...],
) -> StateStore:
    return StateStore(
        redis,
        scripts,
        keys,
        journal_max=settings.journal_max,
        state_ttl_s=settings.state_ttl_days * 86400,
        outbox_ttl_s=settings.turn_ttl_s,
        owner=owner,
        owns=owns,
    )


def _timezone(pack: Pack) -> ZoneInfo:
    return ZoneInfo(pack.sections.get("business", {}).get("timezone", "America/Sao_Paulo"))


def make_runtime(
    spec: ServiceSpec,
    settings: Settings | None = None,
    *,
    topology: Topology,
    tenant: Tenant | None = None,
) -> Runtime:
    """A service's runtime; its state store accepts commits only of the slices ``spec`` owns.

    ``topology`` is the registry's bus (``services.registry.TOPOLOGY``): every process creates
    every group up front, so it must know them all, not only its own. ``tenant``: whose
    runtime (default: the one business of ``settings``).
    """
    service = spec.name
    settings = settings or get_settings()
    if tenant is None:
        [tenant] = tenants_of(settings.model_copy(update={"tenants": None}))
    assert tenant.pack is not None, tenant.problem
    keys = Keys(settings.prefix, settings.partitions, tenant=tenant.id, topology=topology)
    # A cluster client answers every command the services use as a single-node one does.
    redis = cast(Redis, connect(settings))
    scripts = register(redis)
    pack = tenant.pack
    bus = Bus(make_broker(settings), redis, settings, keys, service)
    tz = _timezone(pack)
    llm = None
    if settings.nlu_mode != "rules":
        llm = LLMClient(
            LLMSettings(
                base_url=settings.llm_base_url,
                model=settings.llm_model,
                api_key=settings.llm_api_key,
                timeout_s=settings.llm_timeout_s,
                response_format=settings.llm_response_format,
            )
        )
    log = get_logger(service).bind(tenant=tenant.id) if tenant.id else get_logger(service)
    store = _store(redis, scripts, keys, settings, service, spec.slices)
    return Runtime(
        service,
        tenant.settings,
        keys,
        redis,
        scripts,
        store,
        bus,
        pack,
        tz,
        llm,
        log,
        owns=spec.slices,
    )


def for_tenant(rt: Runtime, tenant: Tenant) -> Runtime:
    """``rt``'s process as another tenant's runtime: the same clients, broker and consumer;
    that tenant's settings, pack, keys, store and bus view, and loops of its own."""
    assert tenant.pack is not None, tenant.problem
    keys = replace(rt.keys, tenant=tenant.id)
    return replace(
        rt,
        settings=tenant.settings,
        keys=keys,
        store=_store(rt.redis, rt.scripts, keys, rt.settings, rt.service, rt.owns),
        bus=rt.bus.for_tenant(keys),
        pack=tenant.pack,
        tz=_timezone(tenant.pack),
        log=get_logger(rt.service).bind(tenant=tenant.id),
        background=[],
        on_stop=[],
    )


def make_runtimes(
    spec: ServiceSpec, settings: Settings | None = None, *, topology: Topology
) -> tuple[list[Runtime], list[Tenant]]:
    """One runtime per tenant this process serves (one, for a deployment of one), and every
    tenant with whether it is enabled. ``TenantsError`` when the tenants file is bad or no
    tenant's pack loads: the process cannot serve anyone."""
    settings = settings or get_settings()
    tenants = tenants_of(settings)
    enabled = [tenant for tenant in tenants if tenant.pack is not None]
    if not enabled:
        problems = "; ".join(tenant.problem or tenant.id for tenant in tenants)
        raise TenantsError(f"no tenant can be served: {problems}")
    first = make_runtime(spec, settings, topology=topology, tenant=enabled[0])
    return [first, *(for_tenant(first, tenant) for tenant in enabled[1:])], tenants


def gather_loops(runtimes: list[Runtime]) -> Runtime:
    """The first runtime, now running every runtime's loops and stop hooks (one process)."""
    first = runtimes[0]
    for other in runtimes[1:]:
        first.background.extend(other.background)
        first.on_stop.extend(other.on_stop)
    return first


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


async def start(rt: Runtime) -> list[asyncio.Task[None]]:
    await ensure_groups(rt.redis, rt.keys)
    await rt.bus.broker.start()
    jobs: list[Callable[[], Awaitable[None]]] = [lambda: heartbeat(rt), *rt.background]
    names = ["heartbeat", *(getattr(job, "__name__", repr(job)) for job in rt.background)]
    if os.environ.get("ORQ_SUPERVISED") == "1":
        jobs.append(watch_parent)
        names.append("watch_parent")
    return [
        asyncio.create_task(supervised(name, job, rt.log), name=name)
        for name, job in zip(names, jobs, strict=True)
    ]


async def stop(rt: Runtime, tasks: list[asyncio.Task[None]]) -> None:
    # A cancel can be swallowed on Python 3.11 when it lands inside a client's own timeout
    # (redis-py's socket timeout runs through asyncio.wait_for): cancel until each task ends.
    for task in tasks:
        while not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=1.0)
    for task in tasks:
        with suppress(asyncio.CancelledError):
            await task
    await rt.bus.broker.stop()
    for hook in rt.on_stop:
        await hook()
    if rt.llm:
        await rt.llm.aclose()
    member = f"{rt.service}|{rt.bus.consumer}"
    await rt.redis.zrem(rt.keys.heartbeats(member), member)
    await rt.redis.aclose()


async def _serve(spec: ServiceSpec, topology: Topology) -> None:
    runtimes, tenants = make_runtimes(spec, topology=topology)
    for tenant in tenants:
        if tenant.problem:
            runtimes[0].log.error(tenant.problem, tenant=tenant.id)
    for each in runtimes:
        if spec.out_of(each.pack):
            each.log.info(
                f"out of this pack's turns: pack {each.pack.name!r} has no "
                f"{spec.needs_section!r} section; idling"
            )
            continue
        try:
            spec.builder()(each)
        except (PackError, ValidationError) as exc:
            if len(tenants) == 1:
                raise
            # One tenant's section this service refuses: that tenant only is left out here
            # (its messages are retried, then dead-lettered), the others are served.
            each.log.error("tenant disabled in this service: its pack is refused", error=str(exc))
    rt = gather_loops(runtimes)
    if rt.settings.metrics_port:
        start_http_server(rt.settings.metrics_port)
        register_lag_collector(
            rt.settings.redis_url, rt.keys, cluster=rt.settings.redis_mode == "cluster"
        )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    tasks = await start(rt)
    rt.log.info(
        "service started",
        consumer=rt.bus.consumer,
        packs={each.tenant or "-": each.pack.name for each in runtimes},
    )
    await stopping.wait()
    rt.log.info("service stopping")
    await stop(rt, tasks)


def run_service(spec: ServiceSpec, topology: Topology) -> None:
    """Run a service on uvloop: its event loop and socket transports are C, and a bus
    service spends most of its CPU in them (README "Performance")."""
    settings = get_settings()
    setup_logging(spec.name, settings.log_level, settings.log_json)
    try:
        uvloop.run(_serve(spec, topology))
    except TenantsError as exc:
        sys.exit(f"{spec.name}: {exc}")


@dataclass
class Decision:
    """What a handler decided for one turn: slices to write, messages to publish, journal."""

    writes: dict[str, object] = field(default_factory=dict)
    outbox: Outbox = field(default_factory=Outbox)
    journal: list[str] = field(default_factory=list)


@dataclass
class TurnDecision(Decision):
    """A decision about one turn, with the tail every handler shares: the service's part of
    the reply for the merger, the business events the turn caused, its journal entry."""

    rt: Runtime = field(kw_only=True)
    turn: Turn = field(kw_only=True)

    def reply(
        self, text: str | None, *, asks_question: bool = False, data: dict[str, Any] | None = None
    ) -> None:
        """The service's part of the turn's reply (``None``: it has nothing to say)."""
        rt, turn = self.rt, self.turn
        part = Part(
            turn_id=turn.turn_id,
            conversation_id=turn.conversation_id,
            source=rt.service,
            text=text,
            asks_question=asks_question,
            data=data or {},
        )
        self.outbox.add(rt.keys.route(rt.keys.merge, turn.conversation_id), part)

    def emit(self, event_type: str, data: dict[str, Any]) -> None:
        """A business event of this turn, for whoever listens on the events stream."""
        rt, turn = self.rt, self.turn
        event = DomainEvent(
            type=event_type,
            conversation_id=turn.conversation_id,
            turn_id=turn.turn_id,
            at=turn.now,
            data=data,
        )
        self.outbox.add(rt.keys.route(rt.keys.events, turn.conversation_id), event)

    def record(self, event: str, /, **fields: Any) -> None:
        """The journal entry that explains the decision (``orquestra explain`` shows it)."""
        rt, turn = self.rt, self.turn
        self.journal.append(journal_entry(rt.service, turn.turn_id, event, **fields))


TurnHandler = Callable[[Turn, Snapshot, TurnDecision], Awaitable[None]]
TaskHandler = Callable[[SpecialistTask, Snapshot, TurnDecision], Awaitable[None]]


async def decide_turn_once(
    rt: Runtime,
    turn: Turn,
    decide: Callable[[Snapshot, TurnDecision], Awaitable[None]],
) -> None:
    """``handle_once`` for a turn: ``decide`` fills a fresh ``TurnDecision`` per attempt."""

    async def attempt(snapshot: Snapshot) -> Decision:
        decision = TurnDecision(rt=rt, turn=turn)
        await decide(snapshot, decision)
        return decision

    await handle_once(rt, turn.conversation_id, turn.turn_id, attempt)


def on_turns(rt: Runtime, decide: TurnHandler) -> None:
    """Decide on every turn, once in effect, in the service's own consumer group."""

    async def handler(body: bytes) -> None:
        turn = Turn.model_validate_json(body)
        await decide_turn_once(rt, turn, lambda snapshot, d: decide(turn, snapshot, d))

    rt.bus.subscribe(rt.keys.turns, rt.service, handler)


def on_tasks(rt: Runtime, decide: TaskHandler) -> None:
    """A specialist's subscription: the tasks triage routes to it (``tasks.<service>``),
    each decided once in effect."""

    async def handler(body: bytes) -> None:
        task = SpecialistTask.model_validate_json(body)
        await decide_turn_once(rt, task.turn, lambda snapshot, d: decide(task, snapshot, d))

    rt.bus.subscribe(rt.keys.tasks(rt.service), rt.service, handler)


async def handle_once(
    rt: Runtime,
    conversation_id: str,
    turn_id: str,
    decide: Callable[[Snapshot], Awaitable[Decision]],
    attempts: int = 3,
) -> None:
    """Run ``decide`` for a turn at most once in effect, then publish what it decided.

    A redelivered turn whose decision was already committed republishes the stored outbox
    instead of deciding again (its answer may depend on state it has since changed). A
    version conflict (a concurrent writer) reloads and decides again.
    """
    for _ in range(attempts):
        stored, snapshot = await rt.store.load_turn(conversation_id, turn_id, rt.service)
        if stored is not None:
            await rt.bus.publish_all(stored.messages)
            return
        decision = await decide(snapshot)
        try:
            committed = await rt.store.commit(
                conversation_id,
                turn_id,
                rt.service,
                snapshot=snapshot,
                writes=decision.writes,  # type: ignore[arg-type]
                outbox=decision.outbox,
                journal=decision.journal,
            )
        except StateConflict:
            rt.log.warning("state changed concurrently, deciding again", turn_id=turn_id)
            continue
        if committed:
            await rt.bus.publish_all(decision.outbox.messages)
            return
    raise StateConflict(f"turn {turn_id}: could not commit after {attempts} attempts")


async def ask_llm(
    rt: Runtime,
    messages: list[dict[str, object]],
    model_cls: type[M],
    *,
    turn_id: str,
    purpose: str,
    journal: list[str],
) -> M | None:
    """One structured LLM call; on any failure None (the caller falls back to its rules).

    Success and failure are both journaled, so "why did the bot say that" shows the LLM's part.
    """
    if rt.llm is None:
        return None
    try:
        result = await rt.llm.structured(messages, model_cls)
    except LLMError as exc:
        LLM_CALLS.labels(rt.service, exc.kind, rt.tenant).inc()
        rt.log.warning("llm failed, using rules", purpose=purpose, kind=exc.kind, turn_id=turn_id)
        journal.append(
            journal_entry(rt.service, turn_id, "llm.fallback", purpose=purpose, kind=exc.kind)
        )
        return None
    LLM_CALLS.labels(rt.service, "ok", rt.tenant).inc()
    journal.append(journal_entry(rt.service, turn_id, "llm.used", purpose=purpose))
    return result
