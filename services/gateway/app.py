"""The gateway: FastAPI for the HTTP API and FastStream for egress, in one process.

Ingress stores messages and starts turns (``turns.py``); egress delivers replies through the
channel adapters and releases the turn (``egress.py``); the sweeper recovers bursts and turns
left behind by a dead replica.

The two sweepers (pending starts; handoff reminders and idle returns) run once per process
whatever the number of tenants (``Runtime.shared_loops``): their sorted sets hold every
tenant's conversations, and each due one is handed to its tenant's ``TurnKeeper`` or
``Handoff`` (``Runtime.exports``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import httpx
from fastapi import Depends, FastAPI
from fastapi.exceptions import RequestValidationError
from prometheus_client import REGISTRY

from services.gateway import auth
from services.gateway import handoff as handoffs
from services.gateway import turns as pending
from services.gateway.api import admin, router
from services.gateway.bookings import router as bookings_router
from services.gateway.channels.base import ChannelSet
from services.gateway.channels.http import MAX_WAIT_S, HttpChannel
from services.gateway.channels.http import NAME as HTTP
from services.gateway.channels.registry import CHANNELS, SECTIONS, routes_of
from services.gateway.channels.spec import Parts
from services.gateway.deps import GatewayDeps
from services.gateway.egress import Composer, Egress
from services.gateway.handoff import Handoff
from services.gateway.history import History
from services.gateway.hot_routes import HotRoutes
from services.gateway.inbox import Inbox
from services.gateway.janitor import janitor
from services.gateway.limits import BodyLimit
from services.gateway.privacy import Privacy
from services.gateway.privacy import router as privacy_router
from services.gateway.schedule_api import router as schedule_router
from services.gateway.spec import SPEC
from services.gateway.turns import TurnKeeper
from services.gateway.unavailable import (
    UNAVAILABLE,
    closed_connection,
    dropped_connection,
    redis_unavailable,
)
from services.gateway.validation import validation_error
from services.gateway.webchat import router as webchat_router
from services.gateway.webchat import sessions as webchat_sessions
from services.registry import BY_NAME, SPECS, TOPOLOGY
from shared import tracing
from shared.clock import Clock
from shared.deps import Deployment
from shared.durability import ReplicaAck, replica_ack
from shared.lag import register_lag_collector
from shared.nlu.fragment import fragments_of
from shared.process import Tenancy, make_tenancy, serve_services, start, stop, stop_services
from shared.scheduled import ScheduleStore
from shared.service import Lookup, Runtime
from shared.settings import Settings, get_settings
from shared.tenants import Tenant
from shared.trial.bookings import BookingStore
from shared.trial.config import load_trial_config


def build(rt: Runtime, tenant: Tenant | None = None, ack: ReplicaAck | None = None) -> GatewayDeps:
    """Wire the gateway's parts for ``rt``'s tenant; what the route handlers need, in one
    object. ``tenant``: whose channel sections configure its channels (default: the single
    business, whose channels read the environment); ``ack``: the replicas an ingest and a
    delivery claim wait for (default: none)."""
    ack = ack or ReplicaAck()
    settings = rt.settings
    tenant = tenant or Tenant(id="", settings=settings, pack=rt.pack)
    history = History(
        rt.redis,
        rt.scripts,
        rt.keys,
        settings.history_kept,
        settings.state_ttl_days * 86400,
        settings.turn_ttl_s,
    )
    parts = Parts(rt, history, tenant, ack)
    channels = ChannelSet(spec.make(parts) for spec in CHANNELS)
    http = channels[HTTP]  # the API's own channel: its long-polls read it
    if not isinstance(http, HttpChannel):
        raise TypeError(f"channel {HTTP!r} is not the HTTP API's")
    # Each message's and turn's own adapter is asked: one may answer turns made only of
    # media/locations/reactions itself, show "typing..." while a fragment waits for the rest
    # of a burst, or have a reply window.
    turns = TurnKeeper(
        rt.redis,
        rt.scripts,
        rt.keys,
        rt.settings,
        rt.store,
        rt.bus.publish,
        rt.log,
        own_answer=channels.own_answer,
        fragments=fragments_of(rt.pack),
        on_fragment=channels.on_fragment,
        reply_window=channels.reply_window,
        ack=ack,
    )
    http_client = httpx.AsyncClient(timeout=rt.settings.handoff_webhook_timeout_s)
    handoff = Handoff(
        rt.scripts,
        rt.keys,
        rt.store,
        http_client,
        settings,
        rt.pack,
        rt.log,
        on_handoff=channels.on_handoff,
    )
    inbox = Inbox(
        rt.redis,
        rt.scripts,
        rt.keys,
        rt.store,
        history,
        handoff,
        rt.bus.publish,
        rt.pack,
        settings.dedupe_ttl_s,
        rt.log,
        channels.reply_window,
        channels.name_of,
    )
    egress = Egress(channels, turns, handoff, history, rt.log, Composer(rt.pack))
    rt.bus.subscribe(rt.keys.outbound, "gateway", egress.handle)
    rt.bus.subscribe(rt.keys.events, "gateway", handoff.on_event)
    rt.exports["turns"] = turns
    rt.exports["handoff"] = handoff

    async def sweep_pending(keepers: Lookup) -> None:
        await pending.sweeper(rt.redis, rt.keys, keepers, settings.sweep_interval_ms / 1000)

    async def sweep_handoffs(lookup: Lookup) -> None:
        await handoffs.sweeper(rt.redis, rt.keys, settings, lookup)

    # The first tenant's build declares each (the sets and settings they read are the same
    # for every tenant: only the pack and tokens differ).
    rt.shared_loops["turns"] = sweep_pending
    rt.shared_loops["handoff"] = sweep_handoffs

    async def close() -> None:
        turns.cancel_timers()
        await channels.aclose()
        await http_client.aclose()

    rt.on_stop.append(close)
    # Bookings belong to the trial service: the gateway reads them and relays staff commands.
    # A pack without trial classes (e.g. staffing) has no roster; erase still looks for bookings.
    bookings = BookingStore(rt.redis, rt.keys.prefix + "trial:", tenant=rt.keys.tenant)
    return GatewayDeps(
        settings=settings,
        redis=rt.redis,
        keys=rt.keys,
        store=rt.store,
        tz=rt.tz,
        publish=rt.bus.publish,
        clock=Clock(rt.redis, rt.keys, movable=settings.test_clock),
        channels=channels,
        http_channel=http,
        turns=turns,
        history=history,
        handoff=handoff,
        inbox=inbox,
        schedule=ScheduleStore(
            rt.redis,
            rt.scripts,
            rt.keys,
            journal_max=settings.journal_max,
            ttl_s=settings.state_ttl_days * 86400,
        ),
        privacy=Privacy(
            rt.redis,
            rt.keys,
            rt.store,
            bookings,
            {s.name: r for s in SPECS if (r := s.records_of(rt.redis, rt.keys)) is not None},
            services=[s.name for s in SPECS],
            turn_ttl_s=settings.turn_ttl_s,
        ),
        bookings=bookings,
        trial_config=load_trial_config(rt.pack) if rt.pack.has("trial") else None,
    )


def serve_bus(rt: Runtime) -> None:
    """What one gateway process does for the whole bus, whatever the tenants: trim the
    streams and show every group's lag on its /metrics."""

    async def trim_streams() -> None:
        await janitor(rt.redis, rt.keys, rt.settings.sweep_interval_ms / 1000)

    rt.background.append(trim_streams)
    lag = register_lag_collector(
        rt.settings.redis_url, rt.keys, cluster=rt.settings.redis_mode == "cluster"
    )

    async def unregister() -> None:
        REGISTRY.unregister(lag)

    rt.on_stop.append(unregister)


def create_app(settings: Settings | None = None, together: Sequence[str] = ()) -> FastAPI:
    """The gateway's app; ``together``: worker services this process runs too
    (``shared.process.serve_services``), so what the gateway publishes to them and what they
    commit for it is read on write (``shared.bus``)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Every tenant's gateway in this one process (one, for a deployment of one); requests
        # find theirs through the ``Deployment``, rebuilt after each reload.
        own = settings or get_settings()
        built: dict[str, GatewayDeps] = {}

        ack = ReplicaAck()

        def build_tenant(rt: Runtime, tenant: Tenant) -> None:
            built[tenant.id] = build(rt, tenant, ack)

        def resolve(tenancy: Tenancy) -> None:
            operator = own.admin_token if own.tenants else None
            deps = {tenant_id: built[tenant_id] for tenant_id in tenancy.served}
            app.state.deps = Deployment(
                tenancy.tenants,
                dict(deps),
                operator_token=operator,
                token_tenant=auth.webchat_tenant,
                channel_routes=routes_of,
            )

        # A tenant's gateway replaced by a reload closes its clients once its longest
        # long-poll could have ended.
        rt, tenancy, tenants = make_tenancy(
            SPEC,
            build_tenant,
            own,
            topology=TOPOLOGY,
            retire_after_s=MAX_WAIT_S + 5,
            sections=SECTIONS,
        )
        serve_bus(rt)
        ack = await replica_ack(rt.redis, own, "gateway")
        await tenancy.serve(tenants)
        resolve(tenancy)
        tenancy.listeners.append(resolve)
        tasks: list[asyncio.Task[None]] = await start(rt)
        tenancy.start_loops()
        for warning in auth.startup_warnings(own):
            rt.log.warning(warning)
        rt.log.info("gateway started", consumer=rt.bus.consumer, tenants=len(tenancy.served))
        workers = await serve_services([BY_NAME[name] for name in together], TOPOLOGY)
        try:
            yield
        finally:
            await stop_services(workers)
            await tenancy.stop()
            await stop(rt, tasks)

    app = FastAPI(
        title="orquestra gateway",
        version="1",
        description="Messaging assistant backend: messages in, replies out.",
        lifespan=lifespan,
        # Requests are traced by OpenTelemetry's FastAPI instrumentation when tracing is on
        # (``tracing.instrument_app``) and counted by the gateway's Prometheus metrics:
        # FastAPI's own telemetry would only ask the OpenTelemetry globals for providers on
        # every request (about 1.5 % of a gateway's CPU under load) to find none.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    configured = settings or get_settings()
    app.add_middleware(BodyLimit, max_bytes=configured.max_body_bytes)
    if configured.http_hot_routes:
        app.add_middleware(HotRoutes, max_body_bytes=configured.max_body_bytes)
    app.add_exception_handler(RequestValidationError, validation_error)
    for error in UNAVAILABLE:
        app.add_exception_handler(error, redis_unavailable)
    app.add_exception_handler(RuntimeError, closed_connection)
    app.add_exception_handler(AttributeError, dropped_connection)
    app.include_router(router)
    app.include_router(admin)
    app.include_router(schedule_router)
    app.include_router(bookings_router)
    # Staff routes a service declares in its spec (its data, served here behind the admin token).
    for spec in SPECS:
        if (staff := spec.admin_router()) is not None:
            app.include_router(staff, dependencies=[Depends(auth.require_admin)])
    app.include_router(privacy_router)
    # Each channel's inbound webhooks, as its spec declares them.
    for channel in CHANNELS:
        if (webhooks := channel.router()) is not None:
            app.include_router(webhooks)
    app.include_router(webchat_router)
    app.include_router(webchat_sessions)
    tracing.instrument_app(app)
    return app
