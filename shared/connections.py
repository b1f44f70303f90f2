"""Redis connections: one place for pool sizes and the reconnect policy.

Every client retries a command that failed on a broken connection (Redis restarted, a
failover, a network blip) with a short exponential backoff, so services reconnect on their
own. Commands are safe to resend: every write is a Lua script or command made idempotent by
its keys (dedupe claims, compare-and-set versions, per-turn outboxes).
"""

from __future__ import annotations

from typing import Any

from redis import Redis as SyncRedis
from redis.asyncio import BlockingConnectionPool, Redis, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster as SyncCluster
from redis.exceptions import ConnectionError, TimeoutError

from shared.settings import Settings

RECONNECT_ATTEMPTS = 8

# Either client: their command methods (and ``pipeline``, ``register_script``) are the same;
# a cluster client routes each command to the node that holds its key.
AnyRedis = Redis | RedisCluster


def retry_options() -> dict[str, Any]:
    """redis-py options: retry connection errors and timeouts, backing off up to ~2 s."""
    return {
        "retry": Retry(ExponentialBackoff(cap=2.0, base=0.05), RECONNECT_ATTEMPTS),
        "retry_on_error": [ConnectionError, TimeoutError, ConnectionResetError],
    }


def connect(settings: Settings, **overrides: Any) -> AnyRedis:
    """A client whose pool waits for a free connection instead of failing under load.

    In cluster mode, a ``RedisCluster`` that discovers every node from the one in
    ``REDIS_URL``, with ``redis_max_connections`` per node; it follows MOVED/ASK redirections
    and refreshes its slot map after a failover.
    """
    if settings.redis_mode == "cluster":
        return connect_cluster(settings.redis_url, settings.redis_max_connections, **overrides)
    options: dict[str, Any] = {
        "max_connections": settings.redis_max_connections,
        "timeout": 10,
        "decode_responses": True,
        **retry_options(),
        **overrides,
    }
    return Redis(connection_pool=BlockingConnectionPool.from_url(settings.redis_url, **options))


def connect_cluster(url: str, max_connections: int, **overrides: Any) -> RedisCluster:
    """A cluster client; ``overrides`` are per-connection options (e.g. ``socket_timeout``)."""
    options: dict[str, Any] = {
        "max_connections": max_connections,
        "decode_responses": True,
        **retry_options(),
        **overrides,
    }
    return RedisCluster.from_url(url, **options)


def connect_sync(settings: Settings, **options: Any) -> SyncRedis | SyncCluster:
    """A blocking client for the command-line tools and the metrics scrape."""
    if settings.redis_mode == "cluster":
        return SyncCluster.from_url(settings.redis_url, **options)
    return SyncRedis.from_url(settings.redis_url, **options)
