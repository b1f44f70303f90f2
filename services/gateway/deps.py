"""What the gateway's route handlers need, built once at start (``app.build``) and typed.

Handlers take it as ``deps: Deps``; ``app.state`` holds nothing else. Tests of one router may
swap it with ``app.dependency_overrides[gateway_deps]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated
from zoneinfo import ZoneInfo

from fastapi import Depends, Request

from shared.deps import AppDeps, app_deps

if TYPE_CHECKING:
    from services.gateway.channels.base import ChannelSet
    from services.gateway.channels.http import HttpChannel
    from services.gateway.handoff import Handoff
    from services.gateway.history import History
    from services.gateway.inbox import Inbox
    from services.gateway.privacy import Privacy
    from services.gateway.turns import Publish, TurnKeeper
    from shared.clock import Clock
    from shared.scheduled import ScheduleStore
    from shared.state import StateStore
    from shared.trial.bookings import BookingStore
    from shared.trial.config import TrialConfig


@dataclass(frozen=True)
class GatewayDeps(AppDeps):
    store: StateStore
    tz: ZoneInfo
    publish: Publish
    clock: Clock
    channels: ChannelSet
    http_channel: HttpChannel
    turns: TurnKeeper
    history: History
    handoff: Handoff
    inbox: Inbox
    schedule: ScheduleStore
    privacy: Privacy
    bookings: BookingStore
    # None for a pack without trial classes (e.g. staffing): no roster to show.
    trial_config: TrialConfig | None


async def gateway_deps(request: Request) -> GatewayDeps:
    deps = await app_deps(request)
    if not isinstance(deps, GatewayDeps):
        raise RuntimeError("app.state.deps is not the gateway's")
    return deps


Deps = Annotated[GatewayDeps, Depends(gateway_deps)]
