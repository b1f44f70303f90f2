"""``python -m services.gateway [--port N] [--with A,B] [--reuse-port]``: the HTTP API and
egress, and the worker services named with ``--with`` in the same process.

The listening socket is bound before the app starts, so a port already in use fails at once
with a clear message, and a client that connects as soon as "gateway started" is logged waits
in the backlog instead of being refused. It is created with ``IPPROTO_TCP``: asyncio enables
TCP_NODELAY only then, and without it every keep-alive response waits ~40 ms for the client's
delayed ACK.
"""

from __future__ import annotations

import argparse
import socket
import sys

import uvicorn

from services.gateway.app import create_app
from services.gateway.auth import exposure_problem
from services.gateway.channels.registry import SECTIONS
from services.gateway.http_protocol import CorkedHttpToolsProtocol
from services.registry import services_together
from shared import tracing
from shared.logs import setup_logging
from shared.pack import PackError
from shared.settings import get_settings
from shared.tenants import TenantsError, tenants_of
from shared.tracing import TracingConfigError


def main() -> None:
    settings = get_settings()
    parser = argparse.ArgumentParser(prog="python -m services.gateway")
    parser.add_argument("--host", default=settings.host)
    parser.add_argument("--port", type=int, default=settings.port)
    parser.add_argument(
        "--with",
        dest="together",
        default="",
        metavar="A,B,...",
        help="worker services to run in this process too",
    )
    parser.add_argument(
        "--reuse-port",
        action="store_true",
        help="share the port with other gateway processes (SO_REUSEPORT: the kernel spreads "
        "connections over them)",
    )
    args = parser.parse_args()
    try:
        # None is fine: the gateway then runs alone.
        together = services_together(
            [name.strip() for name in args.together.split(",") if name.strip()],
            gateway=False,
            at_least=0,
        )
    except ValueError as exc:
        sys.exit(f"gateway: --with: {exc}")
    problem = exposure_problem(settings, args.host)
    if problem:
        sys.exit(f"gateway: {problem}")
    try:
        tenants_of(settings, SECTIONS)
    except (TenantsError, PackError) as exc:
        sys.exit(f"gateway: {exc}")
    setup_logging("+".join(["gateway", *together]), settings.log_level, settings.log_json)
    try:
        # Before the app: its routes and its broker are traced only when tracing is on.
        tracing.setup("gateway")
    except TracingConfigError as exc:
        sys.exit(f"gateway: {exc}")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((args.host, args.port))
    except OSError as exc:
        sys.exit(f"gateway: cannot listen on {args.host}:{args.port}: {exc.strerror}")
    sock.listen(2048)
    # Keep idle connections longer than clients and load balancers do (60 s is common), so
    # the server is never the side that closes a connection a client is about to reuse.
    config = uvicorn.Config(
        create_app(settings, together),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_keep_alive=75,
        http=CorkedHttpToolsProtocol,
    )
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
