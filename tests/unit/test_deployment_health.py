"""The containers' health check (``python -m orquestra.health``) against a real Redis and a real
Redis Cluster: it reads the heartbeats as ``orquestra health`` does, with its settings from the
environment as ``shared.settings`` reads them, and without the heavy imports that made every
worker unhealthy on a 2-core host."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis as redis_sync

from orquestra.health import Target, main
from orquestra.redis_cluster import LocalCluster
from shared.keys import Keys
from shared.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def beat(url: str, keys: Keys, member: str, at: float, cluster: bool = False) -> None:
    """Write one heartbeat as ``shared.process.heartbeat`` does."""
    client: redis_sync.Redis | redis_sync.RedisCluster = (
        redis_sync.RedisCluster.from_url(url) if cluster else redis_sync.Redis.from_url(url)
    )
    client.zadd(keys.heartbeats(member), {member: at})
    client.close()


def fresh() -> float:
    """A heartbeat's time that stays fresh however slowly a loaded machine runs the check."""
    return time.time() + 600


def on_this_host(service: str) -> str:
    return f"{service}|{service}-{socket.gethostname()}-4242-abcdef"


def test_settings_from_the_environment_match_shared_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cases: list[dict[str, str]] = [
        {},
        {"REDIS_URL": "redis://redis:6379/0", "ORQ_PREFIX": "x:", "ORQ_HEARTBEAT_S": "0.5"},
        {"orq_redis_url": "redis://a:1/2", "ORQ_REDIS_MODE": "cluster", "ORQ_PARTITIONS": "6"},
        {"REDIS_URL": "redis://first:1/0", "ORQ_REDIS_URL": "redis://second:1/0"},
    ]
    for environ in cases:
        for name in ("REDIS_URL", "ORQ_REDIS_URL", "ORQ_PREFIX", "ORQ_REDIS_MODE",
                     "ORQ_PARTITIONS", "ORQ_HEARTBEAT_S"):  # fmt: skip
            monkeypatch.delenv(name, raising=False)
        for name, value in environ.items():
            monkeypatch.setenv(name, value)
        settings = Settings(_env_file=None)  # type: ignore[call-arg]
        assert Target.from_environ(environ) == Target.from_settings(settings), environ


def test_live_only_with_a_fresh_heartbeat_of_this_host(
    redis_url: str, unique_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = Keys(unique_prefix)
    environ = {"REDIS_URL": redis_url, "ORQ_PREFIX": unique_prefix, "ORQ_SERVICE": "triage"}
    assert main([], environ) == 1
    assert "triage: no live consumer on this host" in capsys.readouterr().out

    beat(redis_url, keys, on_this_host("triage"), fresh())
    beat(redis_url, keys, "faq|faq-another-host-1-abcdef", fresh())
    beat(redis_url, keys, on_this_host("merger"), time.time() - 60)
    assert main([], environ) == 0
    assert "triage: live" in capsys.readouterr().out
    assert main(["faq"], environ) == 1  # live, but not in this container
    assert main(["merger"], environ) == 1  # this host's, but stale


def test_unreachable_or_misconfigured_redis_is_unhealthy_not_a_crash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    assert main(["triage"], {"REDIS_URL": f"redis://127.0.0.1:{port}/0"}) == 1
    assert "triage: cannot read the heartbeats: ConnectionRefusedError" in capsys.readouterr().out
    assert main(["triage"], {"REDIS_URL": "http://127.0.0.1/"}) == 1
    assert "expected a redis://" in capsys.readouterr().out


@pytest.mark.cluster
def test_cluster_heartbeats_in_every_partition_are_found_through_redirections(
    redis_cluster: LocalCluster, unique_prefix: str
) -> None:
    keys = Keys(unique_prefix, partitions=6)
    member = on_this_host("trial")
    beat(redis_cluster.url, keys, member, fresh(), cluster=True)
    # The six partitions' keys live on the three masters: whichever node the URL names, the
    # check is redirected (MOVED) to the others.
    masters = redis_cluster.masters_now()
    assert redis_cluster.node_of(keys.heartbeats(member)) in masters
    for node in masters:
        environ = {
            "REDIS_URL": f"redis://{node.address}/0",
            "ORQ_REDIS_MODE": "cluster",
            "ORQ_PARTITIONS": "6",
            "ORQ_PREFIX": unique_prefix,
        }
        assert main(["trial"], environ) == 0, node.address
        assert main(["faq"], environ) == 1


def test_the_container_check_imports_no_client_library_and_the_cli_still_checks(
    redis_url: str, unique_prefix: str
) -> None:
    """What made each check cost ~1 s of CPU: redis-py, pydantic-settings, every subcommand."""
    heavy = ("redis", "pydantic", "pydantic_settings", "structlog", "faststream", "orquestra.cli")
    probe = (
        "import sys, orquestra.health; "
        f"print(__import__('json').dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{heavy!r} or m in {heavy!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []

    keys = Keys(unique_prefix)
    beat(redis_url, keys, on_this_host("enrollment"), fresh())
    env = {**os.environ, "REDIS_URL": redis_url, "ORQ_PREFIX": unique_prefix}
    for command in (["-m", "orquestra.health", "enrollment"], ["-m", "orquestra.cli", "health",
                                                               "enrollment"]):  # fmt: skip
        done = subprocess.run(
            [sys.executable, *command], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert (done.returncode, done.stdout) == (0, "enrollment: live\n"), done.stderr
