"""The gateway: FastAPI for the HTTP API and FastStream for egress, in one process.

Ingress stores messages and starts turns (``turns.py``); egress delivers replies through the
channel adapters and releases the turn (``egress.py``); the sweeper recovers bursts and turns
left behind by a dead replica.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from services.gateway.api import admin, router
from services.gateway.channels.base import Channel
from services.gateway.channels.console import ConsoleChannel
from services.gateway.channels.http import HttpChannel
from services.gateway.egress import Egress
from services.gateway.turns import TurnKeeper
from shared.service import Runtime, make_runtime, start, stop
from shared.settings import Settings


def build(rt: Runtime, app: FastAPI) -> None:
    http = HttpChannel(rt.redis, rt.scripts, rt.keys, rt.settings.redis_url)
    channels: dict[str, Channel] = {"http": http, "console": ConsoleChannel(rt.redis, rt.keys)}
    turns = TurnKeeper(rt.redis, rt.scripts, rt.keys, rt.settings, rt.store, rt.bus.publish, rt.log)
    egress = Egress(channels, turns, rt.store, rt.log)
    rt.bus.subscribe(rt.keys.outbound, "gateway", egress.handle)
    rt.background.append(turns.sweeper)

    async def forget_timers() -> None:
        turns.cancel_timers()
        await http.aclose()

    rt.on_stop.append(forget_timers)
    app.state.settings = rt.settings
    app.state.keys = rt.keys
    app.state.redis = rt.redis
    app.state.store = rt.store
    app.state.tz = rt.tz
    app.state.turns = turns
    app.state.http_channel = http


def create_app(settings: Settings | None = None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        rt = make_runtime("gateway", settings)
        build(rt, app)
        tasks: list[asyncio.Task[None]] = await start(rt)
        rt.log.info("gateway started", consumer=rt.bus.consumer)
        try:
            yield
        finally:
            await stop(rt, tasks)

    app = FastAPI(
        title="orquestra gateway",
        version="1",
        description="WhatsApp assistant backend: messages in, replies out.",
        lifespan=lifespan,
    )
    app.include_router(router)
    app.include_router(admin)
    return app
