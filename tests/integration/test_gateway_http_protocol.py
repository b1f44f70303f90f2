"""The gateway's HTTP protocol (``services.gateway.http_protocol``) on a real uvicorn server
and a real client: a response's head and body leave in one write to the socket, a streamed
body still goes out chunk by chunk as the app sends it, and a response that closes its
connection is sent whole before the close."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import httpx
import pytest
import uvicorn
import uvloop

from services.gateway import http_protocol
from services.gateway.http_protocol import CorkedHttpToolsProtocol


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        for part in (b"one,", b"two"):
            await send({"type": "http.response.body", "body": part, "more_body": True})
            await asyncio.sleep(0.01)  # the next chunk is not ready yet
        await send({"type": "http.response.body", "body": b""})
        return
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"5")]
    if path == "/close":
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"hello"})


@pytest.fixture
def socket_writes(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """What each ``write`` on a connection's real transport carried."""
    written: list[bytes] = []
    wrap = http_protocol.CorkedTransport.__init__

    def recording(self: Any, transport: asyncio.Transport, loop: Any) -> None:
        original = transport.write

        class Recorded:
            def __getattr__(self, name: str) -> Any:
                return getattr(transport, name)

            def write(self, data: bytes) -> None:
                written.append(bytes(data))
                original(data)

        wrap(self, Recorded(), loop)  # type: ignore[arg-type]

    monkeypatch.setattr(http_protocol.CorkedTransport, "__init__", recording)
    return written


def serve_and_get(paths: list[str]) -> list[tuple[int, bytes]]:
    async def scenario() -> list[tuple[int, bytes]]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", http=CorkedHttpToolsProtocol)
        server = uvicorn.Server(config)
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)  # uvicorn says no more than this flag
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                answers = []
                for path in paths:
                    response = await client.get(path)
                    answers.append((response.status_code, response.content))
                return answers
        finally:
            server.should_exit = True
            await serving

    return uvloop.run(scenario())


def test_a_response_leaves_in_one_write(socket_writes: list[bytes]) -> None:
    assert serve_and_get(["/", "/"]) == [(200, b"hello"), (200, b"hello")]
    responses = [w for w in socket_writes if w.startswith(b"HTTP/1.1")]
    assert len(responses) == 2 == len(socket_writes)
    assert all(w.endswith(b"\r\n\r\nhello") for w in responses)


def test_a_streamed_body_goes_out_as_it_is_sent(socket_writes: list[bytes]) -> None:
    assert serve_and_get(["/stream"]) == [(200, b"one,two")]
    assert len(socket_writes) == 3  # the head with the first chunk, the second, the end
    assert socket_writes[0].startswith(b"HTTP/1.1 200") and socket_writes[0].endswith(b"one,\r\n")


def test_a_response_that_closes_its_connection_is_sent_whole_first(
    socket_writes: list[bytes],
) -> None:
    assert serve_and_get(["/close", "/"]) == [(200, b"hello"), (200, b"hello")]
    assert socket_writes[0].endswith(b"hello") and b"connection: close" in socket_writes[0]
