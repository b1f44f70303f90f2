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

import time
from typing import Any, NamedTuple

from redis.asyncio import RedisCluster
from redis.asyncio.cluster import ClusterNode
from redis.exceptions import ConnectionError, ResponseError, SlotNotCoveredError, TimeoutError

from shared import lua
from shared.connections import AnyRedis
from shared.logs import get_logger
from shared.settings import Settings

log = get_logger(__name__)


class NotReplicated(Exception):
    """A write no replica confirmed in time: it may be lost in a failover; retry later."""


class Waited(NamedTuple):
    """One ``WAIT`` queued: a key written on the master it went to, and that master's name
    (``host:port``; '' on a single Redis). ``check`` asks *that* node about its replicas,
    never whoever serves the slot by then (see ``ReplicaAck._short``)."""

    key: str
    node: str


# How long a master found without any replica is written to without waiting, before WAIT is
# tried on it again.
ALONE_S = 5.0


class ReplicaAck:
    """How many replicas must confirm a promised write, and how long to wait for them.

    A master with no replica at all (its replica died and the cluster gave it up, or it was
    promoted and the old master is not back yet) has nobody to wait for: a write there is as
    safe as it can be, and refusing it would stop every conversation in its slots until an
    operator adds a replica. So, unless ``strict``, a ``WAIT`` that falls short asks the node
    how many replicas it has; with none connected, and on a cluster none it could still be
    replaced by (``promotable_replicas``), the write is accepted, and the node is written to
    without ``WAIT`` for ``ALONE_S`` before it is asked again. With a replica that did not
    confirm (lagging, stopped, its link dropped but not yet given up), the write is refused:
    that is the window in which a failover would lose it. ``strict`` (the operator set
    ``ORQ_ACK_REPLICAS``) refuses every write its replicas did not confirm, like Kafka's
    ``min.insync.replicas``: consistency over availability.
    """

    def __init__(self, replicas: int = 0, timeout_ms: int = 1_000, strict: bool = False) -> None:
        self.replicas = replicas
        self.timeout_ms = timeout_ms
        self.strict = strict
        self._alone_until: dict[str, float] = {}

    @property
    def on(self) -> bool:
        return self.replicas > 0

    def queue(self, pipe: Any, redis: AnyRedis, *keys: str) -> list[Waited]:
        """Queue one ``WAIT`` on ``pipe`` for each master that holds one of ``keys`` (after
        the pipeline's writes, last); what it waits for, one per master (none when off, or
        for a master just found without a replica). Give them to ``check`` with the ``WAIT``
        answers, the pipeline's last results."""
        if not self.on:
            return []
        waited: list[Waited] = []
        if isinstance(redis, RedisCluster):
            seen: set[str] = set()
            for key in keys:
                node = master_of(redis, key)
                if node.name in seen or self._alone(node.name):
                    continue
                seen.add(node.name)
                pipe.execute_command("WAIT", self.replicas, self.timeout_ms, target_nodes=node)
                waited.append(Waited(key, node.name))
        elif keys and not self._alone(""):
            pipe.execute_command("WAIT", self.replicas, self.timeout_ms)
            waited.append(Waited(keys[0], ""))
        return waited

    async def execute(self, pipe: Any) -> list[Any]:
        """Run ``pipe``; its results. A ``WAIT`` sent to a master that a failover demoted under
        the client's slot map (the write itself was redirected to the new master) confirmed
        nothing: its answer is 0, and ``check`` refuses the write (the slot's master changed),
        so the sender's retry waits on the new master. Any other error is raised as the
        pipeline would. Script calls go as ``lua.execute`` sends them."""
        if not self.on:
            return await lua.execute(pipe)
        results = await lua.execute(pipe, raise_on_error=False)
        for index, result in enumerate(results):
            if isinstance(result, ResponseError) and "WAIT cannot be used with replica" in str(
                result
            ):
                results[index] = 0
            elif isinstance(result, Exception):
                raise result
        return results

    async def check(
        self, redis: AnyRedis, waited: list[Waited], answers: list[Any], what: str
    ) -> None:
        """Raise ``NotReplicated`` unless each ``WAIT`` answered enough replicas or the master
        that took the write has none connected."""
        for wait, acknowledged in zip(waited, answers, strict=True):
            if int(acknowledged) < self.replicas:
                await self._short(redis, wait, acknowledged, what)

    async def _short(self, redis: AnyRedis, wait: Waited, acknowledged: Any, what: str) -> None:
        """A ``WAIT`` fell short: accept the write only if the master that took it has no
        replica at all (unless strict).

        On a cluster the node asked is the one the write and its ``WAIT`` went to. After a
        failover the slot's new master is a promoted replica with no replica of its own
        (its old master is dead): asking it would accept a write that went to the dead
        master and that the promoted replica never received, the loss this class exists to
        prevent. So a slot whose master changed since the write, or a master that no longer
        answers, is a refusal: the sender's retry lands on the new master and waits there."""
        name = wait.node
        if isinstance(redis, RedisCluster):
            now = master_of(redis, wait.key)
            if now.name != name:
                raise NotReplicated(
                    f"{what}: written on {name}, whose slot {now.name} serves now; "
                    "the write may be lost with the old master"
                )
            try:
                info = await redis.info("replication", target_nodes=now)
            except (ConnectionError, TimeoutError) as error:
                raise NotReplicated(
                    f"{what}: {acknowledged} of {self.replicas} replica(s) confirmed and "
                    f"{name} no longer answers ({error})"
                ) from error
            if not self.strict and int(info.get("connected_slaves", 0)) == 0:
                standby = await promotable_replicas(redis, now)
                if standby:
                    raise NotReplicated(
                        f"{what}: {name} has no replica connected, but the cluster could "
                        f"still promote {standby} in its place, without this write"
                    )
        else:
            info = await redis.info("replication")
        if not self.strict and int(info.get("connected_slaves", 0)) == 0:
            self._alone_until[name] = time.monotonic() + ALONE_S
            log.warning(
                "a master has no replica connected: its writes are not waited for",
                node=name or "redis",
                recheck_s=ALONE_S,
            )
            return
        raise NotReplicated(
            f"{what}: {acknowledged} of {self.replicas} replica(s) confirmed in "
            f"{self.timeout_ms} ms"
        )

    def _alone(self, name: str) -> bool:
        until = self._alone_until.get(name)
        if until is None:
            return False
        if time.monotonic() < until:
            return True
        del self._alone_until[name]
        return False


async def promotable_replicas(redis: RedisCluster, node: ClusterNode) -> int:
    """Replicas of ``node`` that the cluster could still promote in its place: each one its
    own view of the cluster lists as its replica, not yet marked ``fail`` by the majority.

    A master whose replica's link dropped (a network cut, a replica stopped or restarting) has
    no replica *connected*, yet that replica may be promoted if the master dies now, without
    what the master took since: a write there is not safe. Only once the cluster has given the
    replica up (``fail``; ``fail?`` is one node's suspicion) can it no longer take over, and
    the master is alone: its writes are as safe as they can be. The promoted replica of a
    failover, whose old master is dead, lists no replica of its own."""
    try:
        nodes = await redis.execute_command("CLUSTER NODES", target_nodes=node)
    except (ConnectionError, TimeoutError) as error:
        raise NotReplicated(f"{node.name} no longer answers ({error})") from error
    views = list(nodes.values()) if isinstance(nodes, dict) else []
    me = next((view for view in views if "myself" in view["flags"].split(",")), None)
    if me is None:
        raise NotReplicated(f"{node.name} does not say which node it is in CLUSTER NODES")
    return sum(
        1
        for view in views
        if view["master_id"] == me["node_id"] and "fail" not in view["flags"].split(",")
    )


def master_of(redis: RedisCluster, key: str) -> ClusterNode:
    """The master that serves ``key``'s slot, as the client's slot map says."""
    node = redis.get_node_from_key(key)
    if node is None:
        raise SlotNotCoveredError(f"no master serves the slot of {key!r}")
    return node


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
    ack = ReplicaAck(wanted, settings.ack_timeout_ms, strict=settings.ack_replicas is not None)
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
