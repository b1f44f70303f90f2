"""Script calls made at the same moment in one process, sent to Redis together.

Every call to Redis costs a round trip: a write and a read on each side, about 80 µs of CPU
between the client and Redis on our machine, whatever the command does. Under load many
handlers of a process reach their commits at the same moment: the services of a turn that run
together take its message at once (triage and the mode router both read the turn), and many
turns end their handlers in the same pass of the event loop.

The batch adapts to the load, as Nagle's algorithm does for a socket: a call made while none
of the process's calls to that Redis is on its way is sent at once (one conversation alone is
not delayed, and Redis runs it while the process goes on). A call made while one is on its
way lets the other tasks that are ready run once (``asyncio.sleep(0)``); every script call
made meanwhile, by any service of the process on the same Redis, goes in the same pipeline:
one write, one read in Redis, one reply.

Each call stays its own script, atomic on its own and answered on its own: the pipeline is not
a transaction, and one call's error is only that call's. A script Redis does not know (a
restart or a failover emptied its cache: ``NOSCRIPT``) did not run; that call goes again by
its text, as every pipeline's does (``lua.execute``). On a cluster each call goes alone (the calls
of a pipeline would be split by node anyway).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from shared import lua


@dataclass
class _Call:
    script: AsyncScript
    keys: list[Any]
    args: list[Any]
    answer: asyncio.Future[Any] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


def _server(redis: Redis) -> tuple[Any, ...]:
    """Which Redis a client talks to: calls on two clients of one server may share a pipeline."""
    options = redis.connection_pool.connection_kwargs
    return tuple(options.get(name) for name in ("host", "port", "path", "db", "username"))


class Coalescer:
    """The script calls of one pass of the event loop, per Redis server (one per process)."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[Any, ...], list[_Call]] = {}
        self._sending: set[asyncio.Task[None]] = set()
        # Calls sent and not answered yet, per server: none, and a call goes at once.
        self._in_flight: dict[tuple[Any, ...], int] = {}

    async def call(
        self, redis: Redis, script: AsyncScript, keys: list[Any], args: list[Any]
    ) -> Any:
        if not isinstance(redis, Redis):
            return await script(keys=keys, args=args)
        server = _server(redis)
        call = _Call(script, keys, args)
        waiting = self._waiting.get(server)
        if waiting is not None:
            waiting.append(call)
            return await call.answer
        if not self._in_flight.get(server):
            return await self._alone(server, call)
        self._waiting[server] = [call]
        try:
            await asyncio.sleep(0)  # the tasks ready now run, and may queue theirs
        except asyncio.CancelledError:
            if others := self._waiting.pop(server)[1:]:
                self._spawn(redis, server, others)
            raise
        calls = self._waiting.pop(server)
        if len(calls) == 1:
            return await self._alone(server, call)
        # The others wait on this send: it goes on if this caller is cancelled meanwhile.
        await asyncio.shield(self._spawn(redis, server, calls))
        return await call.answer

    async def _alone(self, server: tuple[Any, ...], call: _Call) -> Any:
        with self._on_its_way(server):
            return await call.script(keys=call.keys, args=call.args)

    def _spawn(
        self, redis: Redis, server: tuple[Any, ...], calls: list[_Call]
    ) -> asyncio.Task[None]:
        sending = asyncio.ensure_future(self._send(redis, server, calls))
        self._sending.add(sending)
        sending.add_done_callback(self._sending.discard)
        return sending

    @contextmanager
    def _on_its_way(self, server: tuple[Any, ...]) -> Iterator[None]:
        """Counts a send to ``server`` while it is on its way."""
        self._in_flight[server] = self._in_flight.get(server, 0) + 1
        try:
            yield
        finally:
            self._in_flight[server] -= 1

    async def _send(self, redis: Redis, server: tuple[Any, ...], calls: list[_Call]) -> None:
        """One pipeline for ``calls``; each answered with its own result or error."""
        try:
            with self._on_its_way(server):
                async with redis.pipeline(transaction=False) as pipe:
                    for c in calls:
                        lua.queue(pipe, c.script, keys=c.keys, args=c.args)
                    results = await lua.execute(pipe, raise_on_error=False)
        except Exception as error:
            results = [error] * len(calls)
        for c, result in zip(calls, results, strict=True):
            if c.answer.done():  # its caller was cancelled
                continue
            if isinstance(result, Exception):
                c.answer.set_exception(result)
            else:
                c.answer.set_result(result)


coalescer = Coalescer()
