"""The ``orquestra`` command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from shared.settings import get_settings


def cmd_up(args: argparse.Namespace) -> int:
    from orquestra.up import Supervisor, parse_scale

    try:
        scale = parse_scale(args.scale)
    except ValueError as exc:
        print(f"orquestra up: {exc}", file=sys.stderr)
        return 2
    settings = get_settings()
    supervisor = Supervisor(args.port, scale, Path(args.data_dir), settings.redis_url)
    return supervisor.run()


def cmd_health(args: argparse.Namespace) -> int:
    """Exit 0 when this host runs a live consumer of SERVICE (container health checks)."""
    import socket
    import time

    import redis

    from shared.keys import Keys

    settings = get_settings()
    client = redis.Redis.from_url(settings.redis_url, decode_responses=True)
    fresh_after = time.time() - max(10.0, settings.heartbeat_s * 5)
    members = client.zrangebyscore(Keys(settings.prefix).heartbeats, fresh_after, "+inf")
    mine = f"{args.service}|{args.service}-{socket.gethostname()}-"
    alive = any(m.startswith(mine) for m in members)
    print(f"{args.service}: {'live' if alive else 'no live consumer on this host'}")
    return 0 if alive else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="orquestra", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="run Redis (if needed), every service and the gateway")
    up.add_argument("--port", type=int, default=get_settings().port, help="gateway port")
    up.add_argument(
        "--scale",
        action="append",
        default=[],
        metavar="SERVICE=N",
        help="replicas of a worker, e.g. --scale trial=2 (repeatable)",
    )
    up.add_argument("--data-dir", default=".orquestra", help="embedded Redis data folder")
    up.set_defaults(func=cmd_up)

    health = sub.add_parser("health", help="exit 0 if this host runs a live SERVICE consumer")
    health.add_argument("service")
    health.set_defaults(func=cmd_health)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
