"""Replica acknowledgement on a Redis with no replica, and across a cluster failover: what
waits, what is refused."""

from __future__ import annotations

import asyncio
import signal

import pytest
from redis.asyncio import Redis

from orquestra.redis_cluster import ClusterNode, LocalCluster
from shared.connections import connect_cluster
from shared.durability import NotReplicated, ReplicaAck, replicas_of


async def promise(redis: Redis, ack: ReplicaAck, key: str) -> list[str]:
    """One promised write the way the gateway makes it: the write, then its WAITs."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.set(key, "1", ex=60)
        waits = ack.queue(pipe, redis, key)
        done = await pipe.execute()
    await ack.check(redis, waits, done[1:], f"write of {key}")
    return waits


async def test_a_master_without_replicas_is_written_to_without_waiting_unless_strict(
    redis: Redis, unique_prefix: str
) -> None:
    if await replicas_of(redis):
        pytest.skip("this test's Redis has a replica")
    lenient = ReplicaAck(1, timeout_ms=50)
    assert await promise(redis, lenient, f"{unique_prefix}a") != []  # waited, found nobody
    assert await promise(redis, lenient, f"{unique_prefix}b") == []  # not asked again for now

    strict = ReplicaAck(1, timeout_ms=50, strict=True)
    with pytest.raises(NotReplicated):
        await promise(redis, strict, f"{unique_prefix}c")
    assert await promise(redis, ReplicaAck(0), f"{unique_prefix}d") == []  # off: no WAIT


@pytest.mark.cluster
async def test_a_write_its_dead_master_never_replicated_is_refused_after_the_failover(
    fresh_cluster: LocalCluster,
) -> None:
    """The write goes to a master whose replica does not acknowledge (stopped), the master
    dies, the replica is promoted. Whether the promoted replica has the write, the gateway
    cannot tell (here it does: a stopped replica reads what its socket buffered once it runs
    again; a link dropped before the write would have lost it). The promoted replica has no
    replica of its own: asked about the slot now, it would look like a master with nobody to
    wait for, and the write would be accepted unconfirmed. It is refused: the slot's master
    changed since the write."""
    seed = fresh_cluster.nodes[0]  # the client's URL stays up
    key = next(
        name
        for name in (f"orq-test-{{failover-{i}}}:ingest" for i in range(100))
        if fresh_cluster.node_of(name) is not seed
    )
    master = fresh_cluster.node_of(key)
    replica = fresh_cluster.replica_of(master)
    assert replica.process is not None
    client = connect_cluster(fresh_cluster.url, 4)
    ack = ReplicaAck(1, timeout_ms=100)
    try:
        replica.process.send_signal(signal.SIGSTOP)
        async with client.pipeline(transaction=False) as pipe:
            pipe.set(key, "accepted?")
            waits = ack.queue(pipe, client, key)
            done = await ack.execute(pipe)
        assert int(done[1]) == 0
        fresh_cluster.kill(master)
        replica.process.send_signal(signal.SIGCONT)
        await asyncio.to_thread(fresh_cluster.await_takeover, master)
        await client.nodes_manager.initialize()  # the slot map a retried command would find
        with pytest.raises(NotReplicated, match="slot"):
            await ack.check(client, waits, done[1:], f"write of {key}")
    finally:
        replica.process.send_signal(signal.SIGCONT)
        await client.aclose()


def replica_marked_failed(cluster: LocalCluster, master_id: str, stopped: ClusterNode) -> bool:
    """Whether every other node's view has the replica of ``master_id`` as ``fail``."""
    for node in cluster.nodes:
        if node is stopped:
            continue
        lines = node.client().execute_command("CLUSTER", "NODES").decode()
        views = [line.split(" ") for line in lines.splitlines() if line]
        if not any(v[3] == master_id and "fail" in v[2].split(",") for v in views):
            return False
    return True


@pytest.mark.cluster
async def test_a_master_whose_replica_dropped_its_link_refuses_until_the_cluster_gives_it_up(
    fresh_cluster: LocalCluster,
) -> None:
    """The replica stops and its link drops: the master has no replica *connected*, but the
    cluster would still promote that replica (with none of the master's writes since) if the
    master died now. Writes are refused until the cluster marks the replica failed; then the
    master is alone and its writes are taken without waiting."""
    key = "orq-test-{dropped-link}:ingest"
    master = fresh_cluster.node_of(key)
    replica = fresh_cluster.replica_of(master)
    assert replica.process is not None
    client = connect_cluster(fresh_cluster.url, 4)
    ack = ReplicaAck(1, timeout_ms=100)
    try:
        replica.process.send_signal(signal.SIGSTOP)
        master.client().execute_command("CLIENT", "KILL", "TYPE", "replica")
        with pytest.raises(NotReplicated, match="could still promote 1"):
            await promise(client, ack, key)
        master_id = master.client().execute_command("CLUSTER", "MYID").decode()
        deadline = asyncio.get_running_loop().time() + 30
        while not replica_marked_failed(fresh_cluster, master_id, replica):
            assert asyncio.get_running_loop().time() < deadline, "replica never marked failed"
            await asyncio.sleep(0.1)
        assert await promise(client, ack, key) != []  # waited, then found alone: accepted
        assert await promise(client, ack, key) == []  # not asked again for a while
    finally:
        replica.process.send_signal(signal.SIGCONT)
        await client.aclose()
