"""The Redis Cluster of the tests marked ``cluster``: three masters and three replicas started
once per session from the shipped ``redis-server`` (``orquestra.redis_cluster``), torn down at
the end. Tests that kill a node get a cluster of their own (``fresh_cluster``)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from orquestra.redis_cluster import LocalCluster


@contextmanager
def local_cluster() -> Iterator[LocalCluster]:
    folder = Path(tempfile.mkdtemp(prefix="orq-test-cluster-"))
    cluster = LocalCluster(folder, node_timeout_ms=1000, persist=True).start()
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    with local_cluster() as cluster:
        yield cluster


@pytest.fixture
def fresh_cluster() -> Iterator[LocalCluster]:
    """A cluster for one test that breaks it (kills a master)."""
    with local_cluster() as cluster:
        yield cluster
