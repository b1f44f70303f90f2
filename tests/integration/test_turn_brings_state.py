"""A turn brings the conversation's state as it started: the script that starts the turn reads
the state hash after writing the turn into it, the gateway sends it along, and the turn's first
handlers decide on it instead of reading it again. Their commits still compare versions, so a
state that changed since costs a reload, and a turn decided before is not committed twice."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import timedelta

from redis.asyncio import Redis

from services.registry import BY_NAME, TOPOLOGY
from shared.contracts import Part
from shared.keys import Keys
from shared.service import Decision, handle_once, make_runtime
from shared.settings import Settings
from shared.state import Outbox, Snapshot, journal_entry
from tests.integration.test_turns_and_state import T0, message, start_now
from tests.system import decode_entry


async def test_the_started_turn_brings_the_state_the_start_wrote(keeper) -> None:
    turns, published, store = keeper
    await store.commit(
        "s1", "t0", "faq", snapshot=None, writes={"faq": {"topic": "preco"}},
        outbox=Outbox([]), journal=[],
    )  # fmt: skip
    await turns.ingest(message("s1", "m1", "quero agendar", T0))
    await start_now(turns, "s1")
    [turn] = published
    assert turn.state is not None
    meta = json.loads(turn.state["meta"])
    assert meta["turn_id"] == turn.turn_id and meta["turn_seq"] == turn.seq == 1
    assert json.loads(turn.state["faq"]) == {"topic": "preco", "_v": 1}
    # The next turn, started by the release, brings the state as it is then.
    await turns.ingest(message("s1", "m2", "pra terça", T0 + timedelta(seconds=5)))
    await turns.release("s1", turn.turn_id)
    second = published[1]
    assert second.state is not None
    assert json.loads(second.state["meta"])["turn_id"] == second.turn_id
    # The merger's record of the turn holds it without the state.
    record = await turns.redis.hget(turns.keys.merge_turn(second.turn_id), "turn")
    assert "state" not in json.loads(record) or json.loads(record)["state"] is None


async def test_a_handler_decides_on_the_state_brought_and_reads_it_again_when_it_moved(
    redis_url: str, redis: Redis, unique_prefix: str
) -> None:
    settings = Settings(prefix=unique_prefix, redis_url=redis_url)
    rt = make_runtime(BY_NAME["faq"], settings, topology=TOPOLOGY)
    keys = Keys(unique_prefix)
    out = keys.events
    seen: list[int] = []

    def decider(turn_id: str) -> Callable[[Snapshot], Awaitable[Decision]]:
        async def decide(snapshot: Snapshot) -> Decision:
            seen.append(snapshot.version("faq"))
            decision = Decision()
            decision.writes["faq"] = {"answered": turn_id}
            decision.outbox.add(
                out, Part(turn_id=turn_id, conversation_id="c1", source="faq", text=turn_id)
            )
            decision.journal.append(journal_entry("faq", turn_id, "faq.answered"))
            return decision

        return decide

    await rt.bus.broker.connect()
    try:
        # Brought and current: decided once, on what was brought.
        await handle_once(rt, "c1", "t1", decider("t1"), snapshot=Snapshot({"faq": None}))
        assert seen == [0]
        # Brought but stale (the slice moved since): the commit refuses, the handler reads the
        # state and decides again on it.
        seen.clear()
        await handle_once(rt, "c1", "t2", decider("t2"), snapshot=Snapshot({"faq": None}))
        assert seen == [0, 1]
        assert (await rt.store.load("c1")).version("faq") == 2
        # The same turn again: decided on what it brought, found committed, its stored
        # outbox republished, nothing written twice.
        seen.clear()
        await handle_once(rt, "c1", "t2", decider("t2"), snapshot=Snapshot({"faq": None}))
        assert seen == [0]
        assert (await rt.store.load("c1")).version("faq") == 2
        raw = Redis.from_url(redis_url)
        entries = await raw.xrange(out)
        await raw.aclose()
        texts = [Part.model_validate_json(decode_entry(f)).text for _, f in entries]
        assert texts == ["t1", "t2", "t2"]
        events = [e["event"] for e in await rt.store.journal("c1")]
        assert events == ["faq.answered", "faq.answered"]
    finally:
        await rt.bus.broker.stop()
        await rt.redis.aclose()
