"""The local Redis Cluster (``orquestra.redis_cluster``) is ready only once its nodes agree on
who replicates whom: a master that does not yet know its replica would not count it among the
nodes that could take over from it (``shared.durability.promotable_replicas``)."""

from __future__ import annotations

import pytest

from orquestra.redis_cluster import LocalCluster, cluster_roles


def test_a_cluster_nodes_answer_gives_each_node_its_master_and_who_answered() -> None:
    answer = (
        b"a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n"
        b"b2 127.0.0.1:7001@17001 slave a1 0 1700000000000 1 connected\n"
        b"c3 127.0.0.1:7002@17002 master,fail? - 0 0 2 connected 5461-10922\n"
    )
    assert cluster_roles(answer) == {"a1": ("-", True), "b2": ("a1", False), "c3": ("-", False)}


@pytest.mark.cluster
def test_a_started_cluster_agrees_on_who_replicates_whom(fresh_cluster: LocalCluster) -> None:
    views = [
        cluster_roles(node.client().execute_command("CLUSTER", "NODES"))
        for node in fresh_cluster.nodes
    ]
    masters = {node_id for node_id, (master, _) in views[0].items() if master == "-"}
    for view in views:
        replicas = {node_id: master for node_id, (master, _) in view.items() if master != "-"}
        assert sorted(replicas.values()) == sorted(masters)  # one replica each, known to all
        assert replicas == {n: m for n, (m, _) in views[0].items() if m != "-"}
