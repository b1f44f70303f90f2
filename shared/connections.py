"""Redis connections: one place for pool sizes and the reconnect policy.

Every client retries a command that failed on a broken connection (Redis restarted, a
failover, a network blip) with a short exponential backoff, so services reconnect on their
own. Commands are safe to resend: every write is a Lua script or command made idempotent by
its keys (dedupe claims, compare-and-set versions, per-turn outboxes).
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, TimeoutError

from shared.settings import Settings

RECONNECT_ATTEMPTS = 8


def retry_options() -> dict[str, Any]:
    """redis-py options: retry connection errors and timeouts, backing off up to ~2 s."""
    return {
        "retry": Retry(ExponentialBackoff(cap=2.0, base=0.05), RECONNECT_ATTEMPTS),
        "retry_on_error": [ConnectionError, TimeoutError, ConnectionResetError],
    }


def connect(settings: Settings, **overrides: Any) -> Redis:
    """A client whose pool waits for a free connection instead of failing under load."""
    options: dict[str, Any] = {
        "max_connections": settings.redis_max_connections,
        "timeout": 10,
        "decode_responses": True,
        **retry_options(),
        **overrides,
    }
    return Redis(connection_pool=BlockingConnectionPool.from_url(settings.redis_url, **options))
