"""Fixtures of the integration tests that drive the gateway's turn lifecycle by hand, and a
``redis-server`` of a test's own."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from orquestra.redis_server import EmbeddedRedis
from services.gateway.turns import TurnKeeper
from shared.contracts import Turn
from shared.keys import Keys
from shared.logs import get_logger
from shared.lua import register
from shared.settings import Settings
from shared.state import StateStore


@pytest.fixture
async def keeper(redis: Redis, unique_prefix: str):
    # A long burst window: no timer fires during a test; the test starts turns itself.
    settings = Settings(prefix=unique_prefix, burst_window_ms=600_000)
    keys = Keys(unique_prefix)
    scripts = register(redis)
    store = StateStore(redis, scripts, keys, journal_max=50, state_ttl_s=3600, outbox_ttl_s=60)
    published: list[Turn] = []

    async def publish(
        stream: str, turn: str, *, pipeline: object = None, taking: object = None
    ) -> None:
        assert stream == keys.turns
        published.append(Turn.model_validate_json(turn))

    turns = TurnKeeper(redis, scripts, keys, settings, store, publish, get_logger("test"))
    yield turns, published, store
    turns.cancel_timers()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """A private ``redis-server``, for a test that stops it, empties its script cache or
    counts its own writes; resumed if the test left it stopped (SIGSTOP), then stopped."""
    server = EmbeddedRedis(tmp_path / "redis", persist=False).start()
    try:
        yield server
    finally:
        if server.pid is not None:
            os.kill(server.pid, signal.SIGCONT)
        server.stop()
