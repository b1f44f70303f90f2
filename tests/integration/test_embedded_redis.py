"""The embedded ``redis-server`` on a Unix socket (``orquestra/redis_server.py``): what
``orquestra up`` and the benchmark start when no Redis answers. The services reach it through
the socket its URL names; the TCP port still answers; a folder too deep for a socket's path
keeps it on TCP alone."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from orquestra.redis_server import SOCKET_PATH_MAX, EmbeddedRedis
from shared.connections import connect
from shared.settings import Settings


@pytest.fixture
def short_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="orq-sock-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_services_client_reaches_it_through_its_socket(short_folder: Path) -> None:
    server = EmbeddedRedis(short_folder / "redis", persist=False, unix_socket=True).start()
    try:
        socket_path = short_folder.resolve() / "redis" / "redis.sock"
        assert server.url == f"unix://{socket_path}?db=0"

        async def client_address() -> str:
            client = connect(Settings(redis_url=server.url))
            try:
                await client.set("orq-sock-test", "1")
                info = await client.execute_command("CLIENT", "INFO")
                return str(info)
            finally:
                await client.aclose()

        info = asyncio.run(client_address())
        assert f"addr={socket_path}" in info, info
        over_tcp = redis.Redis(host="127.0.0.1", port=server.port, decode_responses=True)
        assert over_tcp.get("orq-sock-test") == "1"
        over_tcp.close()
    finally:
        server.stop()


def test_a_folder_too_deep_for_a_socket_keeps_it_on_tcp(short_folder: Path) -> None:
    deep = short_folder / ("d" * SOCKET_PATH_MAX) / "redis"
    server = EmbeddedRedis(deep, persist=False, unix_socket=True).start()
    try:
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
        assert redis.Redis.from_url(server.url).ping()
        assert not (deep / "redis.sock").exists()
    finally:
        server.stop()
