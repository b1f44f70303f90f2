"""uvicorn's HTTP protocol with a response's head and body sent in one write.

uvicorn (``httptools_impl``) writes a response's status line and headers when the app sends
``http.response.start``, and its body in a second ``transport.write`` when the app sends it. On
a socket with TCP_NODELAY (``__main__``) each write is a system call and a packet of its own:
the client wakes twice for one answer, and the gateway pays the send twice, about 5 % of a
gateway's CPU under load for its two requests a turn. Here the writes of one pass of the event
loop leave together, once the pass is over (``call_soon``): an app sends a response's head and
body in the same pass unless the body is streamed, which then goes out chunk by chunk as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class CorkedTransport:
    """A transport whose writes of one pass of the event loop go out as one. Everything else,
    flow control included, is the wrapped transport's; closing sends what is held first."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(data)

    def flush(self) -> None:
        if not self._held:
            return
        data = b"".join(self._held)
        self._held.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CorkedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a ``CorkedTransport`` (``uvicorn.Config(http=...)``)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CorkedTransport(transport, self.loop))  # type: ignore[arg-type]
