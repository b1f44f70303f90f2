"""docker-compose.cluster.yml, checked without Docker (it does not run here): six Redis nodes
in cluster mode with AOF, one init step that makes them 3 masters and 3 replicas, and every
service in cluster mode after it."""

from __future__ import annotations

import importlib.util
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
        assert "healthcheck" in spec
        volumes.add(spec["volumes"][0].split(":")[0])
    assert len(volumes) == 6 and volumes <= set(compose()["volumes"])


def test_init_creates_three_masters_with_a_replica_each_from_every_node_once() -> None:
    init = compose()["services"]["redis-cluster-init"]
    [script] = init["command"]
    assert "cluster_state:ok ||" in script  # skipped when the cluster exists
    create = script.split("--cluster create", 1)[1]
    assert all(f"getent hosts {node} " in create for node in NODES)
    assert "--cluster-replicas 1" in create and "--cluster-yes" in create
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
        assert "healthcheck" in spec
