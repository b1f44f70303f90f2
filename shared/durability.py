"""Replica acknowledgement: what the gateway promises outside Redis is on a replica first.

Redis replicates asynchronously: a master that dies right after a write takes the write with
it, and the replica promoted in its place never saw it. Most writes can be lost that way and
redone (a turn is restarted, a handler runs again), but two are promises made to someone
outside: the ingest of an inbound message, answered 202 (or 200 to a webhook whose sender never
sends it again), and the claim that a reply goes out, after which the reply is sent. Only those
two wait for a replica (``WAIT numreplicas timeout``), as Kafka's ``acks=all`` does for a
produce; every other write stays asynchronous and costs no round trip to a replica.

``WAIT`` counts the replicas that acknowledged the writes of *its own connection*, so it is
queued on the same pipeline as the write; on a cluster it is sent to the node that holds the
written key (``target_nodes``), and the cluster pipeline sends each node's commands on one
connection. A write a replica did not confirm in time stays on the master, so it is not undone:
the caller answers "retry" (``NotReplicated`` is a 503 with Retry-After), and the retry, deduped
by its id, waits again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redis.asyncio import RedisCluster

from shared.connections import AnyRedis
from shared.logs import get_logger
from shared.settings import Settings

log = get_logger(__name__)


class NotReplicated(Exception):
    """A write no replica confirmed in time: it may be lost in a failover; retry later."""


@dataclass(frozen=True)
class ReplicaAck:
    """How many replicas must confirm a promised write, and how long to wait for them."""

    replicas: int = 0
    timeout_ms: int = 1_000

    @property
    def on(self) -> bool:
        return self.replicas > 0

    def queue(self, pipe: Any, redis: AnyRedis, key: str) -> None:
        """Queue ``WAIT`` on ``pipe`` after the write of ``key`` (nothing when off)."""
        if not self.on:
            return
        if isinstance(redis, RedisCluster):
            node = redis.get_node_from_key(key)
            pipe.execute_command("WAIT", self.replicas, self.timeout_ms, target_nodes=node)
        else:
            pipe.execute_command("WAIT", self.replicas, self.timeout_ms)

    def check(self, acknowledged: Any, what: str) -> None:
        """Raise ``NotReplicated`` unless ``WAIT`` answered enough replicas."""
        if int(acknowledged) < self.replicas:
            raise NotReplicated(
                f"{what}: {acknowledged} of {self.replicas} replica(s) confirmed in "
                f"{self.timeout_ms} ms"
            )


async def replicas_of(redis: AnyRedis) -> int:
    """The fewest connected replicas of any master (of the one Redis, or of every master of a
    cluster)."""
    if isinstance(redis, RedisCluster):
        infos = await redis.info("replication", target_nodes=RedisCluster.PRIMARIES)
        counts = [int(info.get("connected_slaves", 0)) for info in infos.values()]
        return min(counts, default=0)
    info = await redis.info("replication")
    return int(info.get("connected_slaves", 0))


async def replica_ack(redis: AnyRedis, settings: Settings, service: str) -> ReplicaAck:
    """The acknowledgement this process uses: ``ORQ_ACK_REPLICAS`` when set, else 1 when every
    master has a replica and 0 when not. Said once at start, either way."""
    found = await replicas_of(redis)
    wanted = settings.ack_replicas if settings.ack_replicas is not None else min(found, 1)
    ack = ReplicaAck(wanted, settings.ack_timeout_ms)
    if ack.on:
        log.info(
            "writes promised outside Redis wait for replicas",
            service=service,
            replicas=ack.replicas,
            timeout_ms=ack.timeout_ms,
            connected=found,
        )
    else:
        log.info(
            "writes promised outside Redis do not wait for a replica",
            service=service,
            reason="ORQ_ACK_REPLICAS=0" if settings.ack_replicas == 0 else "no replica connected",
        )
    if wanted > found:
        log.warning(
            "fewer replicas connected than ORQ_ACK_REPLICAS asks: acknowledged writes will be "
            "answered 503 until they connect",
            service=service,
            wanted=wanted,
            connected=found,
        )
    return ack
