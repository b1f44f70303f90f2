"""The gateway's answer when Redis is out of reach mid-request: a 503 to retry, never a 500;
and a 500 still for what is a bug."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from services.gateway.unavailable import closed_connection

CLOSED = "unable to perform operation on <TCPTransport closed=True>; the handler is closed"


def app_raising(error: Exception) -> FastAPI:
    app = FastAPI()
    app.add_exception_handler(RuntimeError, closed_connection)

    @app.get("/v1/thing")
    async def thing() -> None:
        raise error

    return app


async def get(app: FastAPI) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
        return await client.get("/v1/thing")


async def test_a_write_on_a_connection_a_dead_node_closed_is_a_503() -> None:
    response = await get(app_raising(RuntimeError(CLOSED)))
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "2"


async def test_any_other_runtime_error_stays_a_500() -> None:
    response = await get(app_raising(RuntimeError("dictionary changed size during iteration")))
    assert response.status_code == 500


def test_a_connection_dropped_under_a_command_is_told_apart_from_a_bug() -> None:
    """A cluster client drops a dead node's connections while a command is on its way:
    redis-py then writes to a stream that is None. Raised from redis-py's code it is a lost
    connection (retried, or a 503); the same error raised from ours is a bug."""
    import asyncio

    import pytest
    import redis.asyncio.connection
    from redis.exceptions import ConnectionError as RedisConnectionError

    from shared.connections import dropped_mid_command, retryable

    class Stream:
        writer = None

        def write(self) -> None:
            self.writer.writelines([b"PING"])  # type: ignore[attr-defined]

    try:
        Stream().write()
    except AttributeError as ours:
        assert not dropped_mid_command(ours)  # raised from our code: a bug, not a dropped line

    # The same error raised from inside redis-py's connection code is a lost connection.
    namespace: dict[str, object] = {}
    code = compile(
        "def send(c):\n    c._writer.writelines([b'PING'])\n",
        redis.asyncio.connection.__file__,
        "exec",
    )
    exec(code, namespace)

    class Conn:
        _writer = None

    async def command() -> None:
        namespace["send"](Conn())  # type: ignore[operator]

    try:
        asyncio.run(command())
    except AttributeError as theirs:
        assert dropped_mid_command(theirs)

    with pytest.raises(RedisConnectionError):
        asyncio.run(retryable(command()))
