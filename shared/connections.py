"""Redis connections: one place for pool sizes and the reconnect policy.

Every client retries a command that failed on a broken connection (Redis restarted, a
failover, a network blip) with a short exponential backoff, so services reconnect on their
own. Commands are safe to resend: every write is a Lua script or command made idempotent by
its keys (dedupe claims, compare-and-set versions, per-turn outboxes).
"""

from __future__ import annotations

import asyncio
import builtins
import math
import os
import traceback
import weakref
from collections.abc import Awaitable
from typing import Any, TypeVar

from redis import Redis as SyncRedis
from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis, RedisCluster
from redis.asyncio.connection import (
    AbstractConnection,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.cluster import RedisCluster as SyncCluster
from redis.connection import HiredisRespSerializer
from redis.exceptions import (
    ClusterDownError,
    ConnectionError,
    SlotNotCoveredError,
    TimeoutError,
    TryAgainError,
)

from shared.logs import get_logger
from shared.settings import Settings

log = get_logger(__name__)

T = TypeVar("T")

RECONNECT_ATTEMPTS = 8

# Either client: their command methods (and ``pipeline``, ``register_script``) are the same;
# a cluster client routes each command to the node that holds its key.
AnyRedis = Redis | RedisCluster


def retry_options() -> dict[str, Any]:
    """redis-py options: retry connection errors and timeouts, backing off up to ~2 s."""
    return {
        "retry": Retry(ExponentialBackoff(cap=2.0, base=0.05), RECONNECT_ATTEMPTS),
        "retry_on_error": [ConnectionError, TimeoutError, ConnectionResetError],
    }


class PromptPool(BlockingConnectionPool):
    """A blocking pool that hands out an idle connection without waiting for one.

    ``BlockingConnectionPool.get_connection`` takes a condition, a timeout and a lock on
    every command, to wait in line for a connection when all are in use; when one is idle
    there is no line, and those cost about a fifth of a command's client CPU. Only the wait
    (and a pool in a maintenance window, which must hold its lock) goes through redis-py's
    path; the connection is checked before use as redis-py checks it.
    """

    async def get_connection(self, *args: Any, **options: Any) -> AbstractConnection:
        if args or options or not self._available_connections or self._in_maintenance:
            waited: AbstractConnection = await super().get_connection(*args, **options)  # type: ignore[no-untyped-call]
            return waited
        connection = self._available_connections.pop()
        self._in_use_connections.add(connection)
        try:
            await self.ensure_connection(connection)
        except BaseException:
            await self.release(connection)
            raise
        return connection


def connect(settings: Settings, **overrides: Any) -> AnyRedis:
    """A client whose pool waits for a free connection instead of failing under load.

    In cluster mode, a ``RedisCluster`` that discovers every node from the one in
    ``REDIS_URL``, with ``redis_max_connections`` per node; it follows MOVED/ASK redirections
    and refreshes its slot map after a failover.
    """
    if settings.redis_mode == "cluster":
        return connect_cluster(settings.redis_url, settings.redis_max_connections, **overrides)
    options: dict[str, Any] = {
        "max_connections": settings.redis_max_connections,
        "timeout": 10,
        "decode_responses": True,
        **retry_options(),
        **overrides,
    }
    return _client(PromptPool.from_url(settings.redis_url, **options))


def connect_bounded(url: str, max_connections: int, **options: Any) -> Redis:
    """A single-node client whose pool refuses a command when all its connections are in
    use (``MaxConnectionsError``) instead of waiting for one: for long-polls, where a wait
    for a connection would only queue behind other waits. Its connections are the services'
    own (``CLOSED_TRANSPORT_SAFE``)."""
    options = {"decode_responses": True, **retry_options(), **options}
    return _client(ConnectionPool.from_url(url, max_connections=max_connections, **options))


def _client(pool: ConnectionPool) -> Redis:
    """A client on ``pool`` whose connections are the services' own: the URL's scheme chose
    their class (TCP, TLS or a Unix socket); keep it, add the checks (``CLOSED_TRANSPORT_SAFE``)."""
    pool.connection_class = CLOSED_TRANSPORT_SAFE.get(pool.connection_class, pool.connection_class)
    return Redis(connection_pool=pool)


def closed_transport(error: RuntimeError) -> bool:
    """uvloop's answer to a write on a connection the peer already closed (Redis restarted, a
    cluster node died).

    asyncio's own transports drop such a write and let the read fail, which redis-py turns
    into a ``ConnectionError`` and retries; uvloop raises ``RuntimeError("unable to perform
    operation on <TCPTransport closed=True ...>; the handler is closed")`` from the write
    itself (MagicStack/uvloop#506), which redis-py neither translates nor retries. redis-py
    has already dropped the connection by then, so the command can be sent again on a new
    one like after any connection error.
    """
    return "the handler is closed" in str(error)


def dropped_mid_command(error: BaseException) -> bool:
    """redis-py's answer to a command sent on a connection another task just disconnected
    (a cluster client dropping a dead node's connections during a failover): an
    ``AttributeError`` on the connection's stream, which is ``None`` by then
    (``'NoneType' object has no attribute 'writelines'``), raised from inside redis-py. Any
    other ``AttributeError`` is a bug and stays one."""
    if not isinstance(error, AttributeError) or "'NoneType' object" not in str(error):
        return False
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and f"{os.sep}redis{os.sep}" in frames[-1].filename


async def retryable(call: Awaitable[T]) -> T:
    """Await ``call``, a closed transport's ``RuntimeError`` (and a connection dropped under a
    command, ``dropped_mid_command``) raised as the ``ConnectionError`` the clients retry on a
    new connection (anything else as it is)."""
    try:
        return await call
    except RuntimeError as error:
        if not closed_transport(error):
            raise
        raise ConnectionError(f"connection lost while writing: {error}") from error
    except AttributeError as error:
        if not dropped_mid_command(error):
            raise
        raise ConnectionError(f"connection dropped under a command: {error}") from error


class ReadWatch:
    """Bounds the reads of one event loop's Redis connections by their ``socket_timeout``,
    with one timer for all of them.

    redis-py bounds every read by ``socket_timeout`` with an ``asyncio.timeout`` of its own,
    a timer started and cancelled per reply: about 22 µs of the 58 a ``GET`` cost its client
    (uvloop, the embedded Redis, ``process_time`` over 25,000 commands), and a turn reads some
    twenty replies. Here a read is entered in a table with its deadline, and a check every
    ``PERIOD_S`` while any read is pending aborts the connection of one past its deadline:
    the read then fails as redis-py's would (``TimeoutError``, the connection dropped), up to
    ``PERIOD_S`` later than the timeout."""

    PERIOD_S = 0.25

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.reading: dict[AbstractConnection, float] = {}
        self.expired: set[AbstractConnection] = set()
        self.armed = False

    def start(self, connection: AbstractConnection, timeout_s: float) -> None:
        self.reading[connection] = self.loop.time() + timeout_s
        if not self.armed:
            self.armed = True
            self.loop.call_later(self.PERIOD_S, self.check)

    def stop(self, connection: AbstractConnection) -> bool:
        """End ``connection``'s read; whether the watch cut it short."""
        self.reading.pop(connection, None)
        if not self.expired:
            return False
        cut = connection in self.expired
        self.expired.discard(connection)
        return cut

    def check(self) -> None:
        now = self.loop.time()
        for connection, deadline in list(self.reading.items()):
            if deadline <= now:
                del self.reading[connection]
                self.expired.add(connection)
                writer = connection._writer
                if writer is not None:
                    writer.transport.abort()  # the pending read sees the connection closed
        self.armed = bool(self.reading)
        if self.armed:
            self.loop.call_later(self.PERIOD_S, self.check)


_WATCHES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ReadWatch] = (
    weakref.WeakKeyDictionary()
)


_last: list[ReadWatch] = []  # the watch last asked for: a process runs one loop


def read_watch() -> ReadWatch:
    """The running loop's ``ReadWatch``."""
    loop = asyncio.get_running_loop()
    if _last and _last[0].loop is loop:
        return _last[0]
    watch = _WATCHES.get(loop)
    if watch is None:
        watch = _WATCHES[loop] = ReadWatch(loop)
    _last[:] = [watch]
    return watch


class ClosedTransportIsConnectionError(AbstractConnection):
    """A connection whose write on a closed transport is a ``ConnectionError``, retried, and
    whose write costs no task when the socket takes the command at once; its commands are
    packed by hiredis, and its reads bounded by the loop's ``ReadWatch``.

    redis-py bounds every write by ``socket_timeout`` with ``asyncio.wait_for``, which on
    Python 3.11 wraps the write in a new task: a third of a command's client CPU (about
    30 µs of 100 on our machine), for a write that almost always lands in the socket buffer
    before the call returns, where there is nothing to wait for. Here the command is written
    first; only what the socket did not take is waited for (``drain``), bounded by the same
    timeout and failing as redis-py's write does.

    redis-py's asyncio connection packs a command in Python, joining bytes once per
    argument; a commit's forty arguments cost about 33 µs there and 9 in hiredis, which
    redis-py's own synchronous client uses for the same job (``HiredisRespSerializer``: the
    same bytes, the same ``DataError`` for an argument Redis cannot take). Only for the
    default encoding, which hiredis assumes.
    """

    async def read_response(
        self,
        disable_decoding: bool = False,
        timeout: float | None = None,
        *,
        disconnect_on_error: bool = True,
        push_request: bool | None = False,
    ) -> Any:
        """redis-py's read, bounded by ``socket_timeout`` through the ``ReadWatch`` instead
        of a timer of its own (a caller's own ``timeout`` keeps redis-py's)."""
        bound = self.socket_timeout
        if timeout is not None or not bound:
            return await super().read_response(
                disable_decoding,
                timeout,
                disconnect_on_error=disconnect_on_error,
                push_request=push_request,
            )
        watch = read_watch()
        watch.start(self, bound)
        cut = False
        try:
            return await super().read_response(
                disable_decoding,
                math.inf,
                disconnect_on_error=disconnect_on_error,
                push_request=push_request,
            )
        except (ConnectionError, OSError) as error:
            cut = watch.stop(self)
            if cut:
                raise TimeoutError(f"Timeout reading from {self._host_error()}") from error
            raise
        finally:
            if not cut:
                watch.stop(self)

    def pack_command(self, *args: Any) -> list[bytes]:
        if self.encoder.encoding != "utf-8" or self.encoder.encoding_errors != "strict":
            return super().pack_command(*args)
        packed: list[bytes] = _HIREDIS.pack(*args)
        return packed

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        writer = self._writer
        if (
            writer is None
            or not isinstance(command, list)
            or not self.socket_timeout
            or self.health_check_interval  # redis-py's own path pings first when one is due
            or writer.transport.is_closing()
            or writer.transport.get_write_buffer_size()
        ):
            await retryable(super().send_packed_command(command, check_health))
            return
        try:
            writer.writelines(command)
            if writer.transport.get_write_buffer_size():
                async with asyncio.timeout(self.socket_timeout):
                    await writer.drain()
        except builtins.TimeoutError:  # the name TimeoutError is redis-py's here
            await self.disconnect(nowait=True)
            raise TimeoutError("Timeout writing to socket") from None
        except (OSError, RuntimeError) as error:
            await self.disconnect(nowait=True)
            if isinstance(error, RuntimeError) and not closed_transport(error):
                raise
            raise ConnectionError(f"connection lost while writing: {error}") from error
        except BaseException:
            await self.disconnect(nowait=True)  # a half-written command spoils the connection
            raise


_HIREDIS = HiredisRespSerializer()


class SafeConnection(ClosedTransportIsConnectionError, Connection):
    pass


class SafeSSLConnection(ClosedTransportIsConnectionError, SSLConnection):
    pass


class SafeUnixConnection(ClosedTransportIsConnectionError, UnixDomainSocketConnection):
    pass


CLOSED_TRANSPORT_SAFE: dict[type[AbstractConnection], type[AbstractConnection]] = {
    Connection: SafeConnection,
    SSLConnection: SafeSSLConnection,
    UnixDomainSocketConnection: SafeUnixConnection,
}


# What a cluster answers while a replica takes over from a dead master.
FAILOVER_ERRORS = (ConnectionError, TimeoutError, ClusterDownError, SlotNotCoveredError,
                   TryAgainError, ConnectionResetError)  # fmt: skip


class FailoverPatientCluster(RedisCluster):
    """A cluster client that waits out a failover instead of failing the command.

    ``RedisCluster`` retries a command refused by a dead node right away, refreshing its slot
    map each time, so its retries are spent in milliseconds while the dead master still owns
    its slots (until ``cluster-node-timeout`` passes and its replica is elected). This client
    retries the whole command with the same backoff as the single-node client (~9 s in all).
    Commands are safe to resend (module docstring).
    """

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        # Retry catches any exception type; its stubs accept only RedisError subclasses.
        backoff = Retry(ExponentialBackoff(cap=2.0, base=0.05), RECONNECT_ATTEMPTS, FAILOVER_ERRORS)  # type: ignore[arg-type]
        call = super().execute_command
        # A cluster's node connections are redis-py's own class (RedisCluster fixes it), so
        # the closed-transport check wraps the command here.
        return await backoff.call_with_retry(lambda: retryable(call(*args, **kwargs)), _note)

    async def _determine_slot(self, command: str, *args: Any) -> int:
        """The slot of a stream read from its own arguments. redis-py asks the server
        (``COMMAND GETKEYS``, one more round trip) for every command whose keys move, which
        XREAD and XREADGROUP are: the streams follow ``STREAMS``, then as many ids."""
        if str(command).upper() in ("XREAD", "XREADGROUP"):
            streams = stream_keys(args)
            slots = {self.keyslot(stream) for stream in streams}
            if len(slots) == 1:
                return slots.pop()
        return await super()._determine_slot(command, *args)


def stream_keys(args: tuple[Any, ...]) -> list[Any]:
    """The streams of an XREAD or XREADGROUP (its arguments after the command name)."""
    words = [(arg.decode() if isinstance(arg, bytes) else str(arg)).upper() for arg in args]
    if "STREAMS" not in words:
        return []
    rest = list(args[words.index("STREAMS") + 1 :])
    return rest[: len(rest) // 2]


async def _note(error: Exception) -> None:
    """Nothing to undo between attempts (the cluster client refreshes its slot map itself):
    say that a command waits for the cluster."""
    log.warning("redis cluster command failed, retrying", error=f"{type(error).__name__}: {error}")


def connect_cluster(url: str, max_connections: int, **overrides: Any) -> RedisCluster:
    """A cluster client; ``overrides`` are per-connection options (e.g. ``socket_timeout``)."""
    options: dict[str, Any] = {
        "max_connections": max_connections,
        "decode_responses": True,
        **retry_options(),
        **overrides,
    }
    return FailoverPatientCluster.from_url(url, **options)


def connect_sync(settings: Settings, **options: Any) -> SyncRedis | SyncCluster:
    """A blocking client for the command-line tools and the metrics scrape."""
    if settings.redis_mode == "cluster":
        return SyncCluster.from_url(settings.redis_url, **options)
    return SyncRedis.from_url(settings.redis_url, **options)
