"""The reload watcher's blocking read ends before its client's socket timeout: a read that
outlasts it is timed out by redis-py, which drops the connection and retries on a new one."""

from __future__ import annotations

from redis._defaults import DEFAULT_SOCKET_TIMEOUT

from shared.connections import connect
from shared.process import RELOAD_BLOCK_MS
from shared.settings import Settings


async def test_the_reload_watch_blocks_less_than_its_clients_socket_timeout() -> None:
    client = connect(Settings(redis_url="redis://127.0.0.1:1/0"))
    try:
        timeout = client.connection_pool.connection_kwargs.get("socket_timeout")
        effective_s = DEFAULT_SOCKET_TIMEOUT if timeout is None else timeout
        assert effective_s > RELOAD_BLOCK_MS / 1000
    finally:
        await client.aclose()
