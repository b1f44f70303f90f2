"""How the services' Redis client takes a connection and writes a command
(``shared.connections``), against a real ``redis-server`` of the test's own, on uvloop as the
services run.

A command the socket takes at once is written without the task redis-py's bounded write
costs; one the socket cannot take (a Redis that stopped reading) still fails after
``socket_timeout`` as redis-py's write does, and the client goes on on a new connection. An
idle connection is handed out at once; with none idle, a command waits for one.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Coroutine, Generator
from typing import Any, cast

import pytest
import uvloop
from redis.asyncio import Redis
from redis.asyncio import connection as redis_connection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import DataError
from redis.exceptions import TimeoutError as RedisTimeoutError

from orquestra.redis_server import EmbeddedRedis
from shared.connections import connect
from shared.settings import Settings


def test_a_command_the_socket_takes_at_once_starts_no_task(own_redis: EmbeddedRedis) -> None:
    created: list[str] = []

    def counting_factory(
        loop: asyncio.AbstractEventLoop,
        coro: Coroutine[Any, Any, Any] | Generator[Any, None, Any],
        **options: Any,
    ) -> asyncio.Task[Any]:
        created.append(getattr(coro, "__qualname__", repr(coro)))
        return asyncio.Task(coro, loop=loop, **options)

    async def scenario() -> list[str]:
        client = connect(Settings(redis_url=own_redis.url))
        try:
            await client.set("k", "v")  # connects (the handshake may start tasks)
            asyncio.get_running_loop().set_task_factory(counting_factory)
            for _ in range(20):
                assert await client.get("k") == "v"
            async with client.pipeline(transaction=False) as pipe:
                pipe.get("k")
                pipe.get("k")
                assert await pipe.execute() == ["v", "v"]
            return list(created)
        finally:
            asyncio.get_running_loop().set_task_factory(None)
            await client.aclose()

    created_by_writes = [name for name in uvloop.run(scenario()) if "send" in name]
    assert created_by_writes == []  # redis-py's own: a task per write (_send_packed_command)


def test_a_write_redis_does_not_take_in_time_fails_and_the_next_command_reconnects(
    own_redis: EmbeddedRedis,
) -> None:
    """A stopped Redis reads nothing: a value larger than the sockets' buffers cannot be
    written. The write fails after ``socket_timeout``; once Redis runs again, the same client
    answers on a new connection, the spoiled one dropped."""
    assert own_redis.pid is not None
    pid = own_redis.pid

    async def scenario() -> tuple[object, object]:
        client = connect(
            Settings(redis_url=own_redis.url), socket_timeout=0.5, retry=Retry(NoBackoff(), 0)
        )
        try:
            await client.set("small", "before")
            os.kill(pid, signal.SIGSTOP)
            with pytest.raises(RedisTimeoutError, match="writing to socket"):
                await client.set("large", "x" * (64 << 20))
            os.kill(pid, signal.SIGCONT)
            return await client.get("small"), await client.get("large")
        finally:
            os.kill(pid, signal.SIGCONT)
            await client.aclose()

    assert uvloop.run(scenario()) == ("before", None)


def test_a_reply_read_starts_no_timer_of_its_own(
    own_redis: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py bounds each read with an ``asyncio.timeout`` of its own; the services' reads
    are bounded by the loop's ``ReadWatch`` instead, one timer for all of them."""
    timers: list[float | None] = []
    original = redis_connection.async_timeout

    def counting(delay: float | None) -> Any:
        timers.append(delay)
        return original(delay)

    async def scenario() -> None:
        client = connect(Settings(redis_url=own_redis.url))
        try:
            await client.set("k", "v")  # connects (the handshake has its own timeout)
            timers.clear()
            for _ in range(20):
                assert await client.get("k") == "v"
            async with client.pipeline(transaction=False) as pipe:
                pipe.get("k")
                pipe.get("k")
                assert await pipe.execute() == ["v", "v"]
        finally:
            await client.aclose()

    monkeypatch.setattr(redis_connection, "async_timeout", counting)
    uvloop.run(scenario())
    assert timers == []


def test_a_reply_redis_does_not_send_in_time_fails_and_the_next_command_reconnects(
    own_redis: EmbeddedRedis,
) -> None:
    """A stopped Redis answers nothing: the read fails after ``socket_timeout`` (and at most
    the watch's period more) as redis-py's does, and once Redis runs again the same client
    answers on a new connection."""
    assert own_redis.pid is not None
    pid = own_redis.pid

    async def scenario() -> tuple[object, int]:
        client = connect(
            Settings(redis_url=own_redis.url), socket_timeout=0.5, retry=Retry(NoBackoff(), 0)
        )
        try:
            await client.set("k", "v")
            os.kill(pid, signal.SIGSTOP)
            with pytest.raises(RedisTimeoutError, match="Timeout reading"):
                await client.get("k")
            os.kill(pid, signal.SIGCONT)
            value = await client.get("k")
            pool: Any = cast(Redis, client).connection_pool
            return value, len(pool._in_use_connections) + len(pool._available_connections)
        finally:
            os.kill(pid, signal.SIGCONT)
            await client.aclose()

    assert uvloop.run(scenario()) == ("v", 1)


def test_with_every_connection_in_use_a_command_waits_for_one(own_redis: EmbeddedRedis) -> None:
    """One connection, held by a read blocked in Redis: the next command waits for it (no
    error, no second connection) and runs once the read hands it back."""

    async def scenario() -> tuple[object, object, int]:
        client = connect(Settings(redis_url=own_redis.url, redis_max_connections=1))
        observer = Redis.from_url(own_redis.url, decode_responses=True)
        try:
            await client.set("k", "v")
            blocked = asyncio.ensure_future(client.blpop(["list"], timeout=0))
            while (await observer.info("clients"))["blocked_clients"] < 1:
                await asyncio.sleep(0.01)  # no event says that Redis holds the read
            second = asyncio.ensure_future(client.get("k"))
            await observer.rpush("list", "item")
            popped, value = await blocked, await second
            pool: Any = cast(Redis, client).connection_pool
            made = len(pool._in_use_connections) + len(pool._available_connections)
            return popped, value, made
        finally:
            await observer.aclose()
            await client.aclose()

    assert uvloop.run(scenario()) == (("list", "item"), "v", 1)


def test_commands_packed_by_hiredis_store_what_redis_py_would(own_redis: EmbeddedRedis) -> None:
    """Each value goes to Redis and back as redis-py's own packing sends it (text in UTF-8,
    bytes as they are, numbers as their ``repr``), a pipeline's too; a value Redis cannot take
    is a ``DataError`` before anything is sent, and the connection goes on."""
    values: list[Any] = ["ção 🎾", b"\x00\xff\r\n", 1.5, 0.1, 1796603974495.0, 2**70, -3, ""]

    async def scenario() -> tuple[list[Any], list[Any], type[BaseException] | None, object]:
        client = connect(Settings(redis_url=own_redis.url))
        raw = Redis.from_url(own_redis.url)
        try:
            for i, value in enumerate(values):
                await client.set(f"v{i}", value)
            async with client.pipeline(transaction=False) as pipe:
                for i, value in enumerate(values):
                    pipe.set(f"p{i}", value)
                await pipe.execute()
            stored = [await raw.get(f"v{i}") for i in range(len(values))]
            piped = [await raw.get(f"p{i}") for i in range(len(values))]
            refused: type[BaseException] | None = None
            try:
                await client.set("bad", cast(Any, True))
            except DataError as error:
                refused = type(error)
            return stored, piped, refused, await client.get("v0")
        finally:
            await raw.aclose()
            await client.aclose()

    stored, piped, refused, after = uvloop.run(scenario())
    expected = [
        v if isinstance(v, bytes) else (repr(v) if not isinstance(v, str) else v).encode()
        for v in values
    ]
    assert stored == expected and piped == expected
    assert refused is DataError and after == "ção 🎾"
