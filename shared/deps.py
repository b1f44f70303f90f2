"""The one object an app's route handlers depend on, instead of loose names on ``app.state``.

The gateway builds its dependencies once at start (``services/gateway/deps.py`` extends
``AppDeps``) and keeps them as ``app.state.deps``, the only name on ``app.state``. A service's
staff routes, which the gateway mounts, take the part every app has (settings, Redis, keys)
with ``deps: AppDepends`` and so never import the gateway (services do not import each other).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from redis.asyncio import Redis

from shared.keys import Keys
from shared.settings import Settings


@dataclass(frozen=True)
class AppDeps:
    settings: Settings
    redis: Redis
    keys: Keys


async def app_deps(request: Request) -> AppDeps:
    """``app.state.deps``. Async on purpose: a plain ``def`` dependency would run in a thread."""
    deps = getattr(request.app.state, "deps", None)
    if not isinstance(deps, AppDeps):
        raise RuntimeError("the app's dependencies are not built yet (its lifespan did not run)")
    return deps


AppDepends = Annotated[AppDeps, Depends(app_deps)]
