"""``orquestra health SERVICE``: exit 0 when this host runs a live consumer of SERVICE.

Also ``python -m orquestra.health [SERVICE]``, the container health check of every service in
the compose files: Docker runs it every few seconds in every container, so it must cost
milliseconds. It imports nothing but the standard library and ``shared.keys`` (no redis-py,
pydantic or CLI: those cost about a second of CPU per check on our machines), reads its
settings from the environment (compose passes ``.env`` in as environment variables; SERVICE
defaults to ``$ORQ_SERVICE``), and asks Redis for the heartbeats itself in RESP2, following
a cluster's MOVED and ASK redirections. It understands ``redis://``, ``rediss://`` and
``unix://`` URLs with a user, a password and a database number.

``orquestra health`` takes its settings from ``shared.settings`` (the environment and
``.env``), as every command does, and asks the same way.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

from shared.keys import Keys

DEFAULT_URL = "redis://127.0.0.1:6379/0"  # shared.settings.Settings.redis_url's default
TIMEOUT_S = 3.0
MAX_REDIRECTS = 5


class ReplyError(Exception):
    """Redis answered with an error (``-ERR ...``, ``-MOVED ...``)."""


@dataclass(frozen=True)
class Target:
    """Where the heartbeats are: the few settings the check reads."""

    redis_url: str
    cluster: bool
    prefix: str
    partitions: int
    heartbeat_s: float

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Target:
        """As ``shared.settings.Settings`` reads these names (case-insensitive, ``REDIS_URL``
        before ``ORQ_REDIS_URL``, the same defaults), without importing it."""
        env = {name.upper(): value for name, value in environ.items()}
        mode = env.get("ORQ_REDIS_MODE", "single")
        if mode not in ("single", "cluster"):
            raise ValueError(f"ORQ_REDIS_MODE={mode!r}: expected single or cluster")
        return cls(
            redis_url=env.get("REDIS_URL") or env.get("ORQ_REDIS_URL") or DEFAULT_URL,
            cluster=mode == "cluster",
            prefix=env.get("ORQ_PREFIX", "orq:"),
            partitions=int(env.get("ORQ_PARTITIONS", "1")),
            heartbeat_s=float(env.get("ORQ_HEARTBEAT_S", "2.0")),
        )

    @classmethod
    def from_settings(cls, settings: Any) -> Target:
        """From a ``shared.settings.Settings`` (typed loosely: importing it is what the
        container check avoids)."""
        return cls(
            redis_url=settings.redis_url,
            cluster=settings.redis_mode == "cluster",
            prefix=settings.prefix,
            partitions=settings.partitions,
            heartbeat_s=settings.heartbeat_s,
        )


@dataclass(frozen=True)
class Endpoint:
    """One Redis server and how to log in to it (a cluster's nodes share the login)."""

    host: str
    port: int
    unix_path: str | None
    tls: bool
    username: str | None
    password: str | None
    db: int

    @classmethod
    def from_url(cls, url: str) -> Endpoint:
        parts = urlsplit(url)
        if parts.scheme not in ("redis", "rediss", "unix"):
            raise ValueError(f"{url!r}: expected a redis://, rediss:// or unix:// URL")
        return cls(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 6379,
            unix_path=unquote(parts.path) if parts.scheme == "unix" else None,
            tls=parts.scheme == "rediss",
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            db=_db(parts),
        )

    def moved_to(self, address: str) -> Endpoint:
        """The node a MOVED or ASK names (``host:port``; an empty host is this node's)."""
        host, _, port = address.rpartition(":")
        return Endpoint(
            host or self.host, int(port), None, self.tls, self.username, self.password, 0
        )


def _db(parts: SplitResult) -> int:
    """The database number as redis-py reads it: ``?db=N``, else the path (``/N``)."""
    query = parse_qs(parts.query).get("db")
    if query:
        return int(query[0])
    path = parts.path.strip("/")
    return int(path) if parts.scheme != "unix" and path else 0


class Connection:
    """A blocking RESP2 connection: enough of the protocol for a few read commands."""

    def __init__(self, endpoint: Endpoint) -> None:
        if endpoint.unix_path is not None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(TIMEOUT_S)
            sock.connect(endpoint.unix_path)
        else:
            sock = socket.create_connection((endpoint.host, endpoint.port), timeout=TIMEOUT_S)
        if endpoint.tls:
            import ssl  # only for rediss://: the TLS module is the costliest import here

            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=endpoint.host)
        self.sock = sock
        self.reader: IO[bytes] = sock.makefile("rb")
        if endpoint.password is not None:
            login = [endpoint.username] if endpoint.username else []
            self.call("AUTH", *login, endpoint.password)
        if endpoint.db:
            self.call("SELECT", str(endpoint.db))

    def call(self, *args: str) -> Any:
        words = [arg.encode() for arg in args]
        request = b"*%d\r\n" % len(words) + b"".join(
            b"$%d\r\n%s\r\n" % (len(word), word) for word in words
        )
        self.sock.sendall(request)
        return read_reply(self.reader)

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


def read_reply(reader: IO[bytes]) -> Any:
    """One RESP2 reply: a string, an integer, None, or a list of them; an error raises."""
    line = reader.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("Redis closed the connection")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise ReplyError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        size = int(rest)
        return None if size < 0 else reader.read(size + 2)[:-2].decode()
    if kind == b"*":
        count = int(rest)
        return None if count < 0 else [read_reply(reader) for _ in range(count)]
    raise ConnectionError(f"not a RESP2 reply: {line[:40]!r}")


class Nodes:
    """Connections to the nodes a check talks to: the URL's, and those a cluster redirects to."""

    def __init__(self, target: Target) -> None:
        self.seed = Endpoint.from_url(target.redis_url)
        self.cluster = target.cluster
        self.open: dict[Endpoint, Connection] = {}

    def connection(self, endpoint: Endpoint) -> Connection:
        if endpoint not in self.open:
            self.open[endpoint] = Connection(endpoint)
        return self.open[endpoint]

    def call(self, *args: str) -> Any:
        endpoint, asking = self.seed, False
        for _ in range(MAX_REDIRECTS):
            connection = self.connection(endpoint)
            try:
                if asking:
                    connection.call("ASKING")
                return connection.call(*args)
            except ReplyError as error:
                kind, _, rest = str(error).partition(" ")
                if not self.cluster or kind not in ("MOVED", "ASK"):
                    raise
                endpoint, asking = endpoint.moved_to(rest.split()[1]), kind == "ASK"
        raise ReplyError(f"{args[0]} {args[1]}: more than {MAX_REDIRECTS} redirections")

    def close(self) -> None:
        for connection in self.open.values():
            connection.close()


def live_consumers(target: Target, now: float) -> list[str]:
    """``service|consumer`` of every process whose heartbeat is fresh (as /healthz counts)."""
    fresh_after = now - max(10.0, target.heartbeat_s * 5)
    nodes = Nodes(target)
    try:
        return [
            str(member)
            for key in Keys(target.prefix, target.partitions).all_heartbeats()
            for member in nodes.call("ZRANGEBYSCORE", key, repr(fresh_after), "+inf")
        ]
    finally:
        nodes.close()


def check(service: str, target: Target) -> int:
    """0 when a consumer of ``service`` on this host beat lately; says which on stdout (Docker
    keeps the last checks' output: ``docker inspect``)."""
    try:
        members = live_consumers(target, time.time())
    except (OSError, ReplyError, ValueError) as error:
        print(f"{service}: cannot read the heartbeats: {type(error).__name__}: {error}")
        return 1
    mine = f"{service}|{service}-{socket.gethostname()}-"
    alive = any(member.startswith(mine) for member in members)
    print(f"{service}: {'live' if alive else 'no live consumer on this host'}")
    return 0 if alive else 1


def run(args: argparse.Namespace) -> int:
    # Imported here: the container check (``main``) runs without pydantic-settings.
    from shared.settings import get_settings

    return check(args.service, Target.from_settings(get_settings()))


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("health", help="exit 0 if this host runs a live SERVICE consumer")
    parser.add_argument("service")
    parser.set_defaults(func=run)


def main(argv: list[str] | None = None, environ: Mapping[str, str] = os.environ) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m orquestra.health",
        description="Container health check: exit 0 if this host runs a live SERVICE consumer.",
    )
    parser.add_argument("service", nargs="?", default=environ.get("ORQ_SERVICE"))
    args = parser.parse_args(argv)
    if not args.service:
        parser.error("name the service (or set ORQ_SERVICE)")
    try:
        target = Target.from_environ(environ)
    except ValueError as error:
        print(f"{args.service}: {error}")
        return 1
    return check(args.service, target)


if __name__ == "__main__":
    sys.exit(main())
