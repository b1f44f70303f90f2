"""The services' Redis clients against a real cluster (and a single Redis), on uvloop as the
services run.

A node that dies leaves redis-py holding connections whose transports are closed. On uvloop a
write to one raises ``RuntimeError`` (asyncio's own loop drops it and lets the read fail),
which redis-py does not treat as a connection error: the client must, so that a long-poll or
a handler during a failover is retried on a new connection instead of failing with a 500.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
import uvloop
from redis.asyncio.cluster import RedisCluster

from orquestra.redis_cluster import LocalCluster
from services.gateway.turns import TurnKeeper
from shared.connections import AnyRedis, connect, connect_cluster, stream_keys
from shared.contracts import InboundMessage, Turn, new_id
from shared.keys import Keys
from shared.logs import get_logger
from shared.lua import register
from shared.settings import Settings
from shared.state import StateStore


def close_every_transport(client: AnyRedis) -> int:
    """Close the sockets of every idle connection, as a dead peer does, while redis-py still
    takes them for connected. Returns how many were closed."""
    if isinstance(client, RedisCluster):
        idle = [c for node in client.get_nodes() for c in node._free]
    else:
        idle = list(client.connection_pool._available_connections)  # type: ignore[attr-defined]
    for connection in idle:
        connection._writer.transport.abort()
    return len(idle)


async def read_back(client: AnyRedis, key: str) -> str | None:
    """Write ``key``, close every idle connection under the client, read ``key`` back."""
    try:
        await client.set(key, "kept")
        assert close_every_transport(client) > 0
        value: str | None = await client.get(key)
        return value
    finally:
        await client.delete(key)
        await client.aclose()


@pytest.mark.cluster
def test_a_command_on_a_closed_transport_is_retried_on_a_new_connection(
    redis_cluster: LocalCluster,
) -> None:
    client = connect_cluster(redis_cluster.url, 4)
    assert uvloop.run(read_back(client, "orq-test-closed-transport")) == "kept"


def test_the_single_node_client_too(redis_url: str, unique_prefix: str) -> None:
    """The same after a single Redis restarted: the pool's connections are all stale."""
    client = connect(Settings(redis_url=redis_url))
    assert uvloop.run(read_back(client, f"{unique_prefix}closed-transport")) == "kept"


def command_calls(cluster: LocalCluster) -> int:
    """``COMMAND`` calls (``COMMAND GETKEYS`` included) run so far on every node."""
    total = 0
    for node in cluster.nodes:
        client = node.client()
        try:
            stats = client.info("commandstats")
        finally:
            client.close()
        total += int(stats.get("cmdstat_command", {}).get("calls", 0))
    return total


@pytest.mark.cluster
def test_a_stream_read_finds_its_node_without_asking_the_server(
    redis_cluster: LocalCluster,
) -> None:
    """XREAD names its streams after STREAMS: the client finds their slot itself, with no
    ``COMMAND GETKEYS`` round trip per read (the replies long-poll is one per request)."""
    stream = "orq-test-{conv-1}:replies"

    async def scenario() -> list[Any]:
        client = connect_cluster(redis_cluster.url, 4)
        try:
            await client.xadd(stream, {"reply": "{}"})
            await client.xread({stream: "0-0"}, count=10)  # the first read sets the client up
            before = command_calls(redis_cluster)
            for _ in range(5):
                found = await client.xread({stream: "0-0"}, count=10, block=10)
            after = command_calls(redis_cluster)
            assert after == before
            return list(found)
        finally:
            await client.delete(stream)
            await client.aclose()

    [(name, entries)] = uvloop.run(scenario())
    assert name == stream and len(entries) == 1


def test_the_streams_of_a_group_read_are_the_first_half_after_streams() -> None:
    args = (b"GROUP", "g", "c-1", b"COUNT", "8", b"BLOCK", "1000", b"STREAMS", "a", "b", ">", ">")
    assert stream_keys(args) == ["a", "b"]
    assert stream_keys(("COUNT", "1")) == []


def close_transports_of(client: RedisCluster, key: str) -> int:
    """Close the sockets of the idle connections to the node that holds ``key`` (as
    ``close_every_transport`` does for every node). Returns how many were closed."""
    node = client.get_node_from_key(key)
    assert node is not None
    idle = list(node._free)
    for connection in idle:
        connection._writer.transport.abort()
    return len(idle)


@pytest.mark.cluster
def test_a_turn_start_whose_journal_write_meets_a_closed_transport_is_journaled_and_published(
    redis_cluster: LocalCluster,
) -> None:
    """A turn started, then its ``turn.started`` entry is written on a connection whose peer
    closed it (uvloop's ``RuntimeError``, not a connection error to redis-py, and a cluster
    pipeline does not retry it). The entry is written again on a new connection, before the
    turn goes out: a published turn always has its start in the journal."""
    prefix = f"orqtest-{uuid.uuid4().hex[:8]}:"
    settings = Settings(prefix=prefix, redis_mode="cluster", burst_window_ms=600_000)
    keys = Keys(prefix)
    conversation = "closed-start"
    at = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    message = InboundMessage(
        channel="http",
        conversation_id=conversation,
        message_id="m-1",
        text="quanto custa a aula?",
        sent_at=at,
        received_at=at,
        contact=conversation,
    )
    published: list[Turn] = []

    async def publish(
        stream: str, payload: Any, *, pipeline: object = None, taking: object = None
    ) -> None:
        published.append(Turn.model_validate_json(payload))

    async def scenario() -> list[dict[str, Any]]:
        client = connect_cluster(redis_cluster.url, 4)
        scripts = register(client)  # type: ignore[arg-type]
        store = StateStore(
            client,  # type: ignore[arg-type]
            scripts,
            keys,
            journal_max=50,
            state_ttl_s=3600,
            outbox_ttl_s=60,
        )
        keeper = TurnKeeper(
            client,  # type: ignore[arg-type]
            scripts,
            keys,
            settings,
            store,
            publish,
            get_logger("test"),
        )
        try:
            assert await keeper.ingest(message)
            turn_id = new_id()
            started = await scripts.try_start(
                keys=keeper._start_keys(conversation),
                args=[turn_id, settings.lease_ttl_ms, keeper._keep_s, keeper._max_ts_ms],
            )
            assert started[0] == "started"
            assert close_transports_of(client, keys.journal(conversation)) > 0
            await keeper._after_start(conversation, turn_id, started, None)
            return await store.journal(conversation)
        finally:
            keeper.cancel_timers()
            await client.aclose()

    journal = uvloop.run(scenario())
    [turn] = published
    starts = [e for e in journal if e["event"] == "turn.started"]
    assert {e["turn_id"] for e in starts} == {turn.turn_id}
    assert starts[0]["message_ids"] == ["m-1"]
