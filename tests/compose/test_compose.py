"""`docker compose up`, run for real (issue 30): both compose files on a Docker engine, through
the gateway's HTTP API as a client sees it.

Not part of the default run: it builds the image and starts a dozen containers. Run it with
``ORQ_COMPOSE=1 uv run --frozen pytest tests/compose -v`` (docs/operations/compose.md); it is
skipped when no Docker engine answers.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

import pytest

from orquestra.client import Client
from tests.compose.deployment import TOKEN, Deployment, engine_problem, free_net

problem = engine_problem()
pytestmark = pytest.mark.skipif(problem is not None, reason=problem or "")

START = datetime.fromisoformat("2026-06-01T10:00:00-03:00")


def say(client: Client, conversation: str, text: str, at: datetime) -> dict[str, Any]:
    """Post one message and return the turn's reply (long-polling for it)."""
    _, cursor = client.replies(conversation)
    client.post(conversation, text, sent_at=at)
    replies, _ = client.replies(conversation, after=cursor, wait_s=60)
    assert replies, f"{conversation}: no reply to {text!r}"
    return replies[0]


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
def single() -> Iterator[Deployment]:
    deployment = Deployment("docker-compose.yml")
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


@pytest.fixture
def cluster() -> Iterator[Deployment]:
    deployment = Deployment("docker-compose.cluster.yml", extra_env={"CLUSTER_NET": free_net()})
    deployment.compose("build", timeout=1800)
    try:
        deployment.up()
        yield deployment
    finally:
        deployment.down("-v")


def test_the_cluster_keeps_its_bookings_across_down_and_up(cluster: Deployment) -> None:
    week = ("2026-06-08", "2026-06-14")
    with Client(cluster.url, TOKEN) as client:
        say(
            client,
            "smoke-booking",
            "quero agendar uma aula experimental: sou o Caio, 35 anos, intermediário, 09/06 às 18h",
            START,
        )
        say(client, "smoke-booking", "sim", START + timedelta(minutes=1))
        before = [b for c in client.bookings(*week) for b in c["bookings"]]
    assert len(before) == 1

    cluster.down()  # the volumes stay
    cluster.up()

    with Client(cluster.url, TOKEN) as client:
        after = [b for c in client.bookings(*week) for b in c["bookings"]]
        reply = say(client, "smoke-after", "onde fica a CT?", START)
    assert [b["booking_id"] for b in after] == [b["booking_id"] for b in before]
    assert reply["text"]
    assert cluster.zombies() == {}
