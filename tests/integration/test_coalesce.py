"""Script calls made at the same moment in one process go to Redis in one pipeline
(``shared.coalesce``), against a ``redis-server`` of the test's own (a test empties its script
cache), on uvloop as the services run: with none on its way a call goes at once, else one
write for the calls of one pass of the event loop, each call answered with its own result or
error, a script Redis forgot loaded and run, and a call whose sender was cancelled still sent
for the others. Handlers started together (siblings) send their first calls in one write."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import uvloop
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from orquestra.redis_server import EmbeddedRedis
from shared import coalesce, connections
from shared.coalesce import Coalescer, Siblings, start_handler
from shared.connections import connect
from shared.settings import Settings

# Fails with an argument-named error for a call it cannot take, as the real scripts do.
INCR = """
if ARGV[1] == 'bad' then error('ERR bad argument: n', 0) end
return redis.call('INCRBY', KEYS[1], ARGV[1])
"""


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per command or pipeline carrying a script call that a service connection
    writes. A connection the pool opens mid-test writes its own set-up commands (CLIENT
    SETINFO...): whether one is opened depends on when a reply comes back, so they are not
    counted."""
    sent: list[int] = []
    original = connections.ClosedTransportIsConnectionError.send_packed_command

    async def counted(self: Any, command: Any, check_health: bool = True) -> None:
        packed = b"".join(command) if isinstance(command, list) else bytes(command)
        if b"EVAL" in packed.upper():
            sent.append(1)
        await original(self, command, check_health)

    monkeypatch.setattr(
        connections.ClosedTransportIsConnectionError, "send_packed_command", counted
    )
    return sent


def run(url: str, scenario: Any) -> Any:
    async def main() -> Any:
        redis = connect(Settings(redis_url=url))
        try:
            script = redis.register_script(INCR)
            await script(keys=["warm"], args=[1])  # loaded, and the connection made
            return await scenario(redis, script, Coalescer())
        finally:
            await redis.aclose()

    return uvloop.run(main())


def test_calls_of_one_moment_go_in_one_write_each_with_its_own_answer(
    own_redis: EmbeddedRedis, writes: list[int]
) -> None:
    """While a call is on its way, the calls of one moment share a write; with none on its way,
    each goes alone."""

    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        writes.clear()
        on_its_way = asyncio.ensure_future(coalescer.call(redis, script, ["w"], [1]))
        await asyncio.sleep(0)
        calls = [coalescer.call(redis, script, [f"k{i}"], [i + 1]) for i in range(3)]
        together = await asyncio.gather(*calls, return_exceptions=True)
        await on_its_way
        after_together = len(writes)
        alone = [await coalescer.call(redis, script, ["k0"], [10]) for _ in range(2)]
        return together, after_together, alone, len(writes)

    together, after_together, alone, total = run(own_redis.url, scenario)
    assert together == [1, 2, 3] and after_together == 2
    assert alone == [11, 21] and total == 4


def test_one_calls_error_is_its_own(own_redis: EmbeddedRedis) -> None:
    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        return await asyncio.gather(
            coalescer.call(redis, script, ["a"], [1]),
            coalescer.call(redis, script, ["b"], ["bad"]),
            coalescer.call(redis, script, ["a"], [2]),
            return_exceptions=True,
        )

    first, error, third = run(own_redis.url, scenario)
    assert (first, third) == (1, 3)
    assert isinstance(error, ResponseError) and "bad argument: n" in str(error)


def test_a_script_redis_forgot_is_loaded_and_every_call_runs_once(
    own_redis: EmbeddedRedis,
) -> None:
    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        await redis.script_flush()
        answers = await asyncio.gather(
            *(coalescer.call(redis, script, ["n"], [1]) for _ in range(3))
        )
        return sorted(answers), await redis.get("n")

    assert run(own_redis.url, scenario) == ([1, 2, 3], "3")


def test_a_call_whose_sender_is_cancelled_still_goes_for_the_others(
    own_redis: EmbeddedRedis,
) -> None:
    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        on_its_way = asyncio.ensure_future(coalescer.call(redis, script, ["w"], [1]))
        await asyncio.sleep(0)  # so the next call waits for company
        first = asyncio.ensure_future(coalescer.call(redis, script, ["x"], [1]))

        async def second_call() -> Any:
            # Runs while the first call waits for company: joins it, then its sender is gone.
            first.cancel()
            return await coalescer.call(redis, script, ["y"], [5])

        second = asyncio.ensure_future(second_call())
        answer = await asyncio.wait_for(second, 30)  # a guard: unanswered, it would hang
        await on_its_way
        return first.cancelled(), answer, await redis.get("x")

    cancelled, answer, x = run(own_redis.url, scenario)
    assert cancelled and answer == 5 and x is None


def test_a_call_with_none_on_its_way_is_sent_before_other_tasks_run(
    own_redis: EmbeddedRedis, writes: list[int]
) -> None:
    """One conversation alone is not delayed: its call is written before the tasks that are
    ready run; a call made while that one is on its way waits for them, and goes with theirs."""
    order: list[str] = []

    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        writes.clear()

        async def other(name: str, key: str) -> Any:
            order.append(name)
            return await coalescer.call(redis, script, [key], [1])

        first = asyncio.ensure_future(coalescer.call(redis, script, ["a"], [1]))
        await asyncio.sleep(0)  # the first call is written, and on its way
        order.append(f"written {len(writes)}")
        later = [asyncio.ensure_future(other(f"t{i}", f"k{i}")) for i in range(3)]
        answers = await asyncio.gather(first, *later)
        return answers, len(writes)

    answers, total = run(own_redis.url, scenario)
    assert order[0] == "written 1" and answers == [1, 1, 1, 1]
    assert total == 2  # the first alone, the three made while it was on its way together


def start_siblings(*handlers: Callable[[], Awaitable[Any]]) -> list[asyncio.Task[Any]]:
    """Start ``handlers`` as siblings, the way ``shared.bus.run_taken`` starts the messages one
    commit took."""
    siblings = Siblings(len(handlers))
    return [start_handler(_awaited(handler), siblings) for handler in handlers]


async def _awaited(handler: Callable[[], Awaitable[Any]]) -> Any:
    return await handler()


def test_siblings_first_calls_go_in_one_write_as_the_last_one_calls(
    own_redis: EmbeddedRedis, writes: list[int]
) -> None:
    """A quick sibling's call waits for a slower one's (several passes of the event loop
    later), and both go in one write; a sibling's second call goes as any other."""

    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        writes.clear()
        slow_started = asyncio.Event()

        async def quick() -> Any:
            return await coalescer.call(redis, script, ["q"], [1])

        async def slow() -> Any:
            slow_started.set()
            for _ in range(5):
                await asyncio.sleep(0)
            first = await coalescer.call(redis, script, ["s"], [2])
            return first, await coalescer.call(redis, script, ["s"], [3])

        tasks = start_siblings(quick, slow)
        await slow_started.wait()
        held = len(writes)
        answers = await asyncio.gather(*tasks)
        return held, answers, len(writes)

    held, answers, total = run(own_redis.url, scenario)
    assert held == 0  # the quick one's call waited for its sibling
    assert answers == [1, (2, 5)]
    assert total == 2  # the two first calls together, then the second call alone


def test_a_sibling_that_ends_without_a_call_lets_the_held_one_go(
    own_redis: EmbeddedRedis, writes: list[int]
) -> None:
    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        writes.clear()

        async def caller() -> Any:
            return await coalescer.call(redis, script, ["c"], [4])

        async def silent() -> None:
            for _ in range(3):
                await asyncio.sleep(0)

        async def failing() -> None:
            await asyncio.sleep(0)
            raise RuntimeError("a handler that fails ends too")

        tasks = start_siblings(caller, silent, failing)
        answers = await asyncio.gather(*tasks, return_exceptions=True)
        return answers[0], isinstance(answers[2], RuntimeError), len(writes)

    assert run(own_redis.url, scenario) == (4, True, 1)


def test_a_held_call_goes_after_the_bound_when_a_sibling_takes_longer(
    own_redis: EmbeddedRedis, writes: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sibling that waits on something else (an LLM call) does not hold the other's call
    beyond ``SIBLINGS_WAIT_S``."""
    monkeypatch.setattr(coalesce, "SIBLINGS_WAIT_S", 0.01)

    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        writes.clear()
        quick_done = asyncio.Event()
        release_slow = asyncio.Event()

        async def quick() -> Any:
            answer = await coalescer.call(redis, script, ["q"], [1])
            quick_done.set()
            return answer

        async def slow() -> Any:
            await release_slow.wait()
            return await coalescer.call(redis, script, ["s"], [2])

        tasks = start_siblings(quick, slow)
        await asyncio.wait_for(quick_done.wait(), 30)  # a guard: held for ever, it would hang
        release_slow.set()
        return await asyncio.gather(*tasks), len(writes)

    assert run(own_redis.url, scenario) == ([1, 2], 2)


def test_a_held_call_whose_sender_is_cancelled_does_not_go(
    own_redis: EmbeddedRedis, writes: list[int]
) -> None:
    async def scenario(redis: Redis, script: Any, coalescer: Coalescer) -> Any:
        writes.clear()
        held = asyncio.Event()

        async def cancelled() -> Any:
            held.set()
            return await coalescer.call(redis, script, ["x"], [1])

        async def other() -> Any:
            await held.wait()
            await asyncio.sleep(0)
            tasks[0].cancel()
            await asyncio.sleep(0)
            return await coalescer.call(redis, script, ["y"], [7])

        tasks = start_siblings(cancelled, other)
        answers = await asyncio.gather(*tasks, return_exceptions=True)
        return isinstance(answers[0], asyncio.CancelledError), answers[1], await redis.get("x")

    assert run(own_redis.url, scenario) == (True, 7, None)
