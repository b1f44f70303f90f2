"""`docker compose -f docker-compose.cluster.yml up`, run for real (issue 30): the Redis Cluster
deployment keeps its data across `down` (volumes kept) and `up`, and answers again.

Not part of the default run (see test_compose.py): ``ORQ_COMPOSE=1``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from orquestra.client import Client
from tests.compose.deployment import START, TOKEN, Deployment, engine_problem, free_net, say

problem = engine_problem()
# Builds, starts and restarts whole deployments: minutes on a 2-core host.
pytestmark = [
    pytest.mark.skipif(problem is not None, reason=problem or ""),
    pytest.mark.timeout(1500),
]


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
