"""docker-compose.cluster.yml, checked without Docker (tests/compose/ runs it on a real engine):
six Redis nodes in cluster mode with AOF at fixed addresses, one init step that makes them 3
masters and 3 replicas once, and every service in cluster mode after it."""

from __future__ import annotations

import importlib.util
import ipaddress
import re
from pathlib import Path

import yaml

from services.registry import SERVICES
from shared.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
NODES = [f"redis-{n}" for n in range(1, 7)]


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.cluster.yml").read_text())


def option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def defaults(value: str) -> str:
    """``value`` as Compose reads it with no variable set (``${NAME:-default}``)."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


def test_six_cluster_nodes_with_aof_each_announcing_its_own_name() -> None:
    services = compose()["services"]
    assert set(services) == {*SERVICES, *NODES, "redis-cluster-init"}
    volumes = set()
    for node in NODES:
        spec = services[node]
        command = spec["command"]
        assert option(command, "--cluster-enabled") == "yes"
        assert option(command, "--appendonly") == "yes"
        assert option(command, "--cluster-announce-hostname") == node
        assert option(command, "--cluster-preferred-endpoint-type") == "hostname"
        assert "healthcheck" in spec and spec["init"] is True
        volumes.add(spec["volumes"][0].split(":")[0])
    assert len(volumes) == 6 and volumes <= set(compose()["volumes"])


def test_nodes_keep_their_addresses_across_down_and_up() -> None:
    """nodes.conf (on each node's volume) names the peers by address: after `down` then `up`,
    or a host restart, every node must come back where its peers look for it; the other
    containers get theirs from a range that holds none of the nodes'."""
    spec = compose()
    [pool] = spec["networks"]["default"]["ipam"]["config"]
    subnet = ipaddress.ip_network(defaults(pool["subnet"]))
    dynamic = ipaddress.ip_network(defaults(pool["ip_range"]))
    addresses = {
        ipaddress.ip_address(
            defaults(spec["services"][node]["networks"]["default"]["ipv4_address"])
        )
        for node in NODES
    }
    assert len(addresses) == 6
    assert all(address in subnet and address not in dynamic for address in addresses)
    assert dynamic.subnet_of(subnet)  # type: ignore[arg-type]


def test_init_creates_three_masters_with_a_replica_each_from_every_node_once() -> None:
    init = compose()["services"]["redis-cluster-init"]
    [script] = init["command"]
    assert f'nodes="{" ".join(NODES)}"' in script
    # Created only when the six nodes are empty (tests/compose/ runs the second `up`).
    assert 'if [ "$$empty" = 6 ]; then' in script
    create = script.split("--cluster create", 1)[1].splitlines()[0]
    assert 'getent hosts "$$node"' in create
    assert "--cluster-replicas 1" in create and "--cluster-yes" in create
    assert "cluster_state" in script.split("--cluster create", 1)[1]  # then waits for ok
    assert set(init["depends_on"]) == set(NODES)
    assert all(d["condition"] == "service_healthy" for d in init["depends_on"].values())


def test_every_service_runs_in_cluster_mode_after_the_init() -> None:
    services = compose()["services"]
    for name in SERVICES:
        spec = services[name]
        env = spec["environment"]
        settings = Settings.model_validate(
            {
                "REDIS_URL": env["REDIS_URL"],
                "redis_mode": env["ORQ_REDIS_MODE"],
                "partitions": env["ORQ_PARTITIONS"].split(":-")[1].rstrip("}"),
            }
        )
        assert settings.redis_mode == "cluster" and settings.partitions == 6
        assert env["REDIS_URL"].removeprefix("redis://").split(":")[0] in NODES
        assert spec["depends_on"]["redis-cluster-init"]["condition"] == (
            "service_completed_successfully"
        )
        assert spec["command"][:3] == ["python", "-m", f"services.{name}"]
        assert importlib.util.find_spec(f"services.{name}.__main__") is not None
        assert spec["healthcheck"]["test"] == ["CMD", "python", "-m", "orquestra.health"]
        assert spec["environment"]["ORQ_SERVICE"] == name
        assert spec["init"] is True and spec["pull_policy"] == "never"
