"""Script calls on a pipeline go by their SHA1 (``lua.queue``), and a call Redis no longer
knows is sent again by its text after the rest (``lua.execute``), against a ``redis-server``
of the test's own (a test empties its script cache): the call runs once, the pipeline's other
commands once, and a ``WAIT`` of the pipeline covers the call sent again."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from orquestra.redis_server import EmbeddedRedis
from shared import lua
from shared.connections import connect
from shared.settings import Settings
from tests.integration.test_turns_and_state import T0, message, publishing_keeper

INCR = """
if ARGV[1] == 'bad' then error('ERR bad argument: n', 0) end
return redis.call('INCRBY', KEYS[1], ARGV[1])
"""


def run(url: str, scenario: Any) -> Any:
    async def main() -> Any:
        redis = connect(Settings(redis_url=url))
        try:
            return await scenario(redis)
        finally:
            await redis.aclose()

    return asyncio.run(main())


async def calls(redis: Redis) -> dict[str, int]:
    stats = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


async def mixed(redis: Redis, script: Any) -> list[Any]:
    """Two script calls around a command that must not run twice, and a ``WAIT``."""
    async with redis.pipeline(transaction=False) as pipe:
        lua.queue(pipe, script, keys=["a"], args=[1])
        pipe.rpush("log", "x")
        lua.queue(pipe, script, keys=["b"], args=[2])
        pipe.execute_command("WAIT", 0, 0)
        return await lua.execute(pipe)


def test_a_known_script_goes_by_its_sha1(own_redis: EmbeddedRedis) -> None:
    async def scenario(redis: Redis) -> Any:
        script = redis.register_script(INCR)
        await script(keys=["warm"], args=[1])
        before = await calls(redis)
        answers = await mixed(redis, script)
        after = await calls(redis)
        return answers, {n: after.get(n, 0) - before.get(n, 0) for n in ("evalsha", "eval")}

    answers, sent = run(own_redis.url, scenario)
    assert answers == [1, 1, 2, 0]
    assert sent == {"evalsha": 2, "eval": 0}


def test_a_script_redis_lost_runs_once_and_the_rest_once(own_redis: EmbeddedRedis) -> None:
    async def scenario(redis: Redis) -> Any:
        script = redis.register_script(INCR)
        await script(keys=["warm"], args=[1])
        await redis.script_flush()
        before = await calls(redis)
        answers = await mixed(redis, script)
        after = await calls(redis)
        delta = {n: after.get(n, 0) - before.get(n, 0) for n in ("eval", "rpush", "wait")}
        stored = await redis.mget("a", "b"), await redis.lrange("log", 0, -1)
        return answers, delta, stored

    answers, delta, stored = run(own_redis.url, scenario)
    assert answers == [1, 1, 2, 0]
    assert delta == {"eval": 2, "rpush": 1, "wait": 2}  # the WAIT again, after the calls
    assert stored == (["1", "2"], ["x"])


def test_a_scripts_error_is_raised_or_returned_in_its_place(own_redis: EmbeddedRedis) -> None:
    async def scenario(redis: Redis) -> Any:
        script = redis.register_script(INCR)
        await redis.script_flush()  # the error comes from the call sent again, too
        answers = []
        for raise_on_error in (False, True):
            async with redis.pipeline(transaction=False) as pipe:
                lua.queue(pipe, script, keys=["a"], args=["bad"])
                pipe.incr("c")
                try:
                    answers.append(await lua.execute(pipe, raise_on_error=raise_on_error))
                except ResponseError as error:
                    answers.append(error)
        return answers, await redis.get("c")

    (returned, raised), counted = run(own_redis.url, scenario)
    assert isinstance(returned[0], ResponseError) and returned[1] == 1
    assert isinstance(raised, ResponseError) and "bad argument: n" in str(raised)
    assert counted == "2"


@pytest.mark.parametrize("flushed", [False, True])
def test_a_message_is_stored_once_and_its_turn_scored_by_the_lease(
    own_redis: EmbeddedRedis, flushed: bool
) -> None:
    """The ingest's script scores the pending start of a turn it starts (one Redis): with its
    script known (the first message of the process sent it by its text) and with a cache Redis
    lost since."""

    async def scenario(redis: Redis) -> Any:
        settings = Settings(prefix="t:ingest", burst_window_ms=0, burst_fragment_ms=0)
        turns, published = publishing_keeper(redis, settings)
        keys = turns.keys
        assert await turns.ingest(message("c0", "m0", "oi", T0))
        await asyncio.wait_for(published.get(), 10)
        if flushed:
            await redis.script_flush()
        before_ms = int(datetime.now(UTC).timestamp() * 1000)
        fresh = await turns.ingest(message("c1", "m1", "quero agendar", T0))
        again = await turns.ingest(message("c1", "m1", "quero agendar", T0))
        turn = await asyncio.wait_for(published.get(), 10)
        score = await redis.zscore(keys.pending_starts("c1"), "c1")
        history = await redis.xlen(keys.history("c1"))
        turns.cancel_timers()
        return fresh, again, turn.text, score - before_ms, history, settings.lease_ttl_ms

    fresh, again, text, due_in, history, lease_ms = run(own_redis.url, scenario)
    assert (fresh, again, text, history) == (True, False, "quero agendar", 1)
    assert due_in >= lease_ms
