"""Serve an ASGI app on a free 127.0.0.1 port from a background thread: the fake OpenAI server
(``bench/fake_openai.py``) and the tests' fake Graph API (``tests/support/fake_graph.py``)."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn


def serve_in_thread(app: object, name: str) -> tuple[uvicorn.Server, threading.Thread, int]:
    """Start ``app``; returns once it accepts connections. The socket is IPPROTO_TCP so asyncio
    sets TCP_NODELAY (no 40 ms delayed-ACK stall per request)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"{name} did not start")
        time.sleep(0.01)
    return server, thread, port
