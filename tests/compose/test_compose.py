"""`docker compose up`, run for real (issue 30): docker-compose.yml on a Docker engine, through
the gateway's HTTP API as a client sees it (docker-compose.cluster.yml: test_compose_cluster.py).

Not part of the default run: it builds the image and starts a dozen containers. Run it with
``ORQ_COMPOSE=1 uv run --frozen pytest tests/compose -v`` (docs/operations/compose.md); it is
skipped when no Docker engine answers.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from orquestra.client import Client
from tests.compose.deployment import ROOT, START, TOKEN, Deployment, engine_problem, say

problem = engine_problem()
# Builds, starts and restarts whole deployments: minutes on a 2-core host.
pytestmark = [
    pytest.mark.skipif(problem is not None, reason=problem or ""),
    pytest.mark.timeout(1500),
]


def answered_once(url: str, conversation: str) -> list[str]:
    """Every reply of the conversation's single turn: the first, then whatever comes after it
    while a reply could still be resent (the long-poll's 60 s outlasts every redelivery
    delay: reclaim after 15 s, republish after 10 s, merge deadline 8 s)."""
    with Client(url, TOKEN) as client:
        first, cursor = client.replies(conversation, wait_s=60)
        assert first, f"{conversation}: no reply"
        more, _ = client.replies(conversation, after=cursor, wait_s=60)
        return [r["turn_id"] for r in first + more]


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """The deployment, its pack read from the mounted config folder (a copy of ctsmash under
    another path): a service that could not read it would not start."""
    config = tmp_path_factory.mktemp("config")
    shutil.copytree(ROOT / "packs" / "ctsmash", config / "packs" / "smoke")
    for folder in (config, *config.rglob("*")):
        folder.chmod(0o755 if folder.is_dir() else 0o644)  # the services' user reads it
    deployment = Deployment(
        "docker-compose.yml",
        extra_env={"ORQ_CONFIG_DIR": str(config), "ORQ_PACK": "/config/packs/smoke"},
    )
    deployment.compose("build", timeout=1800)
    try:
        deployment.up()
        yield deployment
    finally:
        deployment.down("-v")


def test_every_service_is_healthy_without_zombies_and_a_message_gets_its_reply(
    single: Deployment,
) -> None:
    states = {(c["Service"], c["State"], c["Health"]) for c in single.containers()}
    assert {health for _, _, health in states} == {"healthy"}, states
    with Client(single.url, TOKEN) as client:
        reply = say(client, "smoke-hello", "oi, quero marcar uma aula experimental", START)
        assert reply["author"] == "bot" and reply["text"]
        health = client.health()
    assert health is not None and health[0] == 200 and health[1]["missing"] == []
    assert single.zombies() == {}


def test_a_trial_replica_killed_mid_load_leaves_every_turn_answered_once(
    single: Deployment,
) -> None:
    single.up("--scale", "trial=3")
    replicas = single.of("trial")
    assert len(replicas) == 3
    conversations = [f"smoke-load-{uuid.uuid4().hex[:8]}" for _ in range(24)]
    with Client(single.url, TOKEN) as client:
        for conversation in conversations:
            client.post(
                conversation,
                "quero agendar uma aula experimental, sou a Ana, 30 anos, iniciante",
                sent_at=START,
            )
    subprocess.run(["docker", "kill", replicas[0]], check=True, capture_output=True)
    with ThreadPoolExecutor(len(conversations)) as pool:
        turns = list(pool.map(lambda c: answered_once(single.url, c), conversations))
    assert all(len(replies) == 1 for replies in turns), turns
