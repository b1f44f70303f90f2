"""``orquestra health SERVICE``: exit 0 when this host runs a live consumer of SERVICE.

Used as the container health check of every worker in docker-compose.yml.
"""

from __future__ import annotations

import argparse
import socket
import time
from typing import Any

from shared.connections import connect_sync
from shared.keys import Keys
from shared.settings import Settings, get_settings


def live_consumers(client: Any, keys: Keys, settings: Settings) -> list[str]:
    """``service|consumer`` of every process whose heartbeat is fresh (as /healthz counts)."""
    fresh_after = time.time() - max(10.0, settings.heartbeat_s * 5)
    return [
        str(member)
        for key in keys.all_heartbeats()
        for member in client.zrangebyscore(key, fresh_after, "+inf")
    ]


def run(args: argparse.Namespace) -> int:
    settings = get_settings()
    client = connect_sync(settings, decode_responses=True)
    members = live_consumers(client, Keys(settings.prefix, settings.partitions), settings)
    mine = f"{args.service}|{args.service}-{socket.gethostname()}-"
    alive = any(m.startswith(mine) for m in members)
    print(f"{args.service}: {'live' if alive else 'no live consumer on this host'}")
    return 0 if alive else 1


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("health", help="exit 0 if this host runs a live SERVICE consumer")
    parser.add_argument("service")
    parser.set_defaults(func=run)
