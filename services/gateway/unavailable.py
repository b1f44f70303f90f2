"""Redis out of reach during a request: a 503 the client can retry, not a 500.

The clients retry a dropped connection for several seconds (``shared/connections.py``); when
Redis is still away after that (an outage, a cluster failover in progress), or a write that
must be on a replica before it is acknowledged was not confirmed in time
(``shared/durability.py``), the request cannot be served now but may be in a moment. Saying
so with ``Retry-After`` lets an HTTP client, a webhook's sender or a long-poll loop wait and try
again, and the log line says why, without a traceback per request.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse
from redis.exceptions import (
    ClusterDownError,
    MasterDownError,
    TryAgainError,
)
from redis.exceptions import (
    ConnectionError as RedisConnectionError,
)
from redis.exceptions import (
    TimeoutError as RedisTimeoutError,
)

from shared.connections import closed_transport, dropped_mid_command
from shared.durability import NotReplicated
from shared.logs import get_logger

# The errors that mean "not reachable now", as opposed to a bad command or a bug.
UNAVAILABLE: tuple[type[Exception], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterDownError,
    MasterDownError,
    TryAgainError,
    NotReplicated,
)
RETRY_AFTER_S = 2

log = get_logger("gateway")


async def redis_unavailable(request: Request, exc: Exception) -> JSONResponse:
    log.warning(
        "redis unavailable; answered 503",
        path=request.url.path,
        error=type(exc).__name__,
        detail=str(exc)[:200],
    )
    return JSONResponse(
        {"detail": "temporarily unavailable; retry shortly"},
        status_code=503,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


async def closed_connection(request: Request, exc: Exception) -> JSONResponse:
    """A write on a connection a dead node closed, surfacing from a cluster pipeline (single
    commands are retried by the clients, ``shared/connections.py``): out of reach too. Any
    other ``RuntimeError`` is a bug and stays a 500 with its traceback."""
    if isinstance(exc, RuntimeError) and closed_transport(exc):
        return await redis_unavailable(request, exc)
    raise exc


async def dropped_connection(request: Request, exc: Exception) -> JSONResponse:
    """A command on a connection dropped under it during a failover, surfacing from a cluster
    pipeline (``dropped_mid_command``): out of reach too. Any other ``AttributeError`` is a
    bug and stays a 500 with its traceback."""
    if dropped_mid_command(exc):
        return await redis_unavailable(request, exc)
    raise exc
