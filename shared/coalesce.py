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

Handlers a commit started together (``Siblings``: the turn read on write by triage and the mode
router, a completed turn's reply and its domain event) wait for each other at their first
script call: the mode router decides in microseconds and triage in a millisecond, so each
would otherwise make its own round trip. Held, they go in one pipeline as the last of them
calls or ends, and a bound (``SIBLINGS_WAIT_S``) sends the calls held so far if one of them
takes longer (an LLM call, a full subscription). Nothing is lost by the wait: the reply needs
every part of the turn, and triage's comes with its task for the specialist.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from shared import lua

T = TypeVar("T")


@dataclass
class _Call:
    script: AsyncScript
    keys: list[Any]
    args: list[Any]
    answer: asyncio.Future[Any] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


# How long the first call of a group of siblings waits for the others at most.
SIBLINGS_WAIT_S = 0.05


class Siblings:
    """Handlers started together (one ``Sibling`` each): the first script call of each is
    held until every one of them has called or ended, or ``SIBLINGS_WAIT_S`` passed since the
    first call, then all the calls held go at once."""

    def __init__(self, count: int) -> None:
        self.left = count  # siblings that have neither called nor ended
        self.held: list[tuple[Coalescer, Redis, _Call]] = []
        self.open = False
        self._timer: asyncio.TimerHandle | None = None

    def hold(self, coalescer: Coalescer, redis: Redis, call: _Call) -> None:
        self.held.append((coalescer, redis, call))
        self.left -= 1
        if self.left == 0:
            self.release()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(SIBLINGS_WAIT_S, self.release)

    def ended(self) -> None:
        self.left -= 1
        if self.left == 0 and self.held:
            self.release()

    def withdraw(self, call: _Call) -> None:
        """A held call whose caller was cancelled before it went."""
        self.held = [held for held in self.held if held[2] is not call]
        if self.left == 0 and self.held:
            self.release()

    def release(self) -> None:
        """Send every call held so far, one pipeline per Redis server."""
        if self._timer is not None:
            self._timer.cancel()
        self.open = True
        by_server: dict[tuple[Any, ...], tuple[Coalescer, Redis, list[_Call]]] = {}
        for coalescer, redis, call in self.held:
            server = _server(redis)
            by_server.setdefault((id(coalescer), *server), (coalescer, redis, []))[2].append(call)
        self.held = []
        for coalescer, redis, calls in by_server.values():
            coalescer.enqueue(redis, _server(redis), calls)


@dataclass
class Sibling:
    """One handler of a group of ``Siblings``: it counts once, at its first call or its end."""

    siblings: Siblings
    counted: bool = False

    def ended(self) -> None:
        if not self.counted:
            self.counted = True
            self.siblings.ended()


# The sibling the running handler is, when a commit started it with others.
sibling: ContextVar[Sibling | None] = ContextVar("sibling", default=None)


def start_handler(handler: Coroutine[Any, Any, T], siblings: Siblings | None) -> asyncio.Task[T]:
    """Run ``handler`` in a task of its own, as one of ``siblings`` (its ``Sibling`` in the
    task's context, ended when the task ends) or, with None, as no one's sibling (not even
    the one that started it)."""
    me = Sibling(siblings) if siblings is not None else None
    context = contextvars.copy_context()
    context.run(sibling.set, me)
    task = asyncio.get_running_loop().create_task(handler, context=context)
    if me is not None:
        task.add_done_callback(lambda _: me.ended())
    return task


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
        call = _Call(script, keys, args)
        me = sibling.get()
        if me is not None and not me.counted:
            me.counted = True
            if not me.siblings.open:
                return await self._held(me.siblings, redis, call)
        server = _server(redis)
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
                self.spawn(redis, server, others)
            raise
        calls = self._waiting.pop(server)
        if len(calls) == 1:
            return await self._alone(server, call)
        # The others wait on this send: it goes on if this caller is cancelled meanwhile.
        await asyncio.shield(self.spawn(redis, server, calls))
        return await call.answer

    def enqueue(self, redis: Redis, server: tuple[Any, ...], calls: list[_Call]) -> None:
        """Send ``calls`` as if they were made now: at once with none on their way, else with
        the calls of this pass of the event loop."""
        waiting = self._waiting.get(server)
        if waiting is not None:
            waiting.extend(calls)
        elif not self._in_flight.get(server):
            self.spawn(redis, server, calls)
        else:
            self._waiting[server] = list(calls)
            self._track(asyncio.ensure_future(self._after_this_pass(redis, server)))

    async def _after_this_pass(self, redis: Redis, server: tuple[Any, ...]) -> None:
        await asyncio.sleep(0)  # the tasks ready now run, and may add theirs
        self.spawn(redis, server, self._waiting.pop(server))

    async def _held(self, siblings: Siblings, redis: Redis, call: _Call) -> Any:
        siblings.hold(self, redis, call)
        try:
            return await call.answer
        except asyncio.CancelledError:
            siblings.withdraw(call)
            raise

    async def _alone(self, server: tuple[Any, ...], call: _Call) -> Any:
        with self._on_its_way(server):
            return await call.script(keys=call.keys, args=call.args)

    def spawn(
        self, redis: Redis, server: tuple[Any, ...], calls: list[_Call]
    ) -> asyncio.Task[None]:
        """Send ``calls`` in one pipeline, in a task of its own (its callers may be cancelled)."""
        return self._track(asyncio.ensure_future(self._send(redis, server, calls)))

    def _track(self, task: asyncio.Task[None]) -> asyncio.Task[None]:
        """Keep a task of this coalescer's own alive until it ends."""
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)
        return task

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
