"""Operations: the lag gauges, the Grafana dashboard's queries, the AsyncAPI document."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

import shared.metrics  # noqa: F401  (registers the services' metrics)
from orquestra.asyncapi import without_credentials
from orquestra.cli import main
from services.registry import SERVICES, SPECS, TOPOLOGY
from shared.keys import Keys
from shared.lag import ConsumerLagCollector, families, group_lags
from shared.settings import get_settings

ROOT = Path(__file__).resolve().parents[2]
XINFO = [
    {"name": "triage", "consumers": 2, "pending": 3, "entries-read": 10, "lag": 4},
    {"name": "merger", "consumers": 1, "pending": 0, "entries-read": 9, "lag": None},
    {"name": "someone-else", "consumers": 1, "pending": 7, "lag": 1},
]


def test_lag_rows_keep_the_topology_groups_and_drop_the_prefix() -> None:
    rows = group_lags("orq:turns", XINFO, {"triage", "merger"}, "orq:")
    assert [(r.stream, r.group, r.lag, r.pending, r.consumers) for r in rows] == [
        ("turns", "triage", 4, 3, 2),
        ("turns", "merger", None, 0, 1),
    ]


def test_lag_gauges_leave_out_an_unknown_lag() -> None:
    registry = CollectorRegistry()

    class Fixed:
        def collect(self):
            return families(group_lags("orq:turns", XINFO, {"triage", "merger"}, "orq:"), True)

    registry.register(Fixed())
    text = generate_latest(registry).decode()
    assert 'orq_consumer_group_lag{group="triage",stream="turns"} 4.0' in text
    assert 'orq_consumer_group_lag{group="merger"' not in text
    assert 'orq_consumer_group_pending{group="merger",stream="turns"} 0.0' in text
    assert "orq_lag_collector_up 1.0" in text


def test_an_unreachable_redis_reads_as_collector_down() -> None:
    collector = ConsumerLagCollector(
        "redis://127.0.0.1:1/0", Keys("orq:", topology=TOPOLOGY), timeout_s=0.2
    )
    registry = CollectorRegistry()
    registry.register(collector)
    assert "orq_lag_collector_up 0.0" in generate_latest(registry).decode()


def known_series() -> set[str]:
    names: set[str] = set()
    suffixes = {"counter": ["_total"], "histogram": ["_bucket", "_sum", "_count"], "gauge": [""]}
    for family in [*REGISTRY.collect(), *families([], True)]:
        names |= {family.name + suffix for suffix in suffixes.get(family.type, [""])}
    return names


def test_every_dashboard_query_uses_metrics_the_services_export() -> None:
    dashboard = json.loads((ROOT / "ops" / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    assert len(exprs) >= 10
    used = {name for expr in exprs for name in re.findall(r"\borq_\w+", expr)}
    assert used - known_series() == set()
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))


def test_asyncapi_describes_every_consumer_group_and_producer(tmp_path: Path) -> None:
    out = tmp_path / "docs" / "asyncapi.json"
    assert main(["asyncapi", "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["info"]["title"] == "orquestra bus"
    assert document["asyncapi"].startswith("3.")
    keys = Keys(get_settings().prefix)
    operations = document["operations"]
    receiving = {k for k, v in operations.items() if v["action"] == "receive"}
    expected = [
        (keys.turns, "triage"),
        (keys.turns, "mode_router"),
        (keys.merge, "merger"),
        (keys.tasks("trial"), "trial"),
        (keys.tasks("faq"), "faq"),
        (keys.outbound, "gateway"),
        (keys.commands("trial"), "trial"),
    ]
    for stream, group in expected:
        assert f"{stream}/{group}" in receiving
    # Producers come from the specs: every service that declares it publishes on a stream.
    merge = document["channels"][f"{keys.merge}.publish"]["description"]
    publishers = {s.name for s in SPECS if "merge" in s.publishes}
    assert publishers >= {"triage", "trial", "faq", "mode_router"}
    assert merge.endswith(f"Published by {', '.join(s for s in SERVICES if s in publishers)}.")
    schemas = document["components"]["schemas"]
    assert {"Turn", "SpecialistTask", "Part", "TurnPlan", "Reply", "DomainEvent"} <= set(schemas)
    assert "BookingCommand" in schemas
    assert "conversation_id" in schemas["Turn"]["properties"]


def test_asyncapi_describes_the_same_bus_with_a_pack_that_idles_services(tmp_path: Path) -> None:
    """With the staffing pack, trial, enrollment and the scheduler idle, but their groups are
    on the bus all the same: the document is the one CT Smash's pack gives. (A process each:
    the command builds every service, which registers process-wide metrics.)"""
    documents = []
    for pack in ("ctsmash", "staffing"):
        out = tmp_path / f"{pack}.json"
        command = [sys.executable, "-m", "orquestra.cli", "asyncapi", "--out", str(out)]
        done = subprocess.run(
            command, env={**os.environ, "ORQ_PACK": pack}, capture_output=True, timeout=120
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        documents.append(json.loads(out.read_text()))
    assert documents[0]["operations"] == documents[1]["operations"]


def test_asyncapi_never_shows_redis_credentials() -> None:
    assert without_credentials("rediss://user:secret@redis.example:6380/1") == (
        "rediss://redis.example:6380/1"
    )
    assert without_credentials("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
