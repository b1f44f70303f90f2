"""uvicorn's HTTP protocol with a response's head and body sent in one write.

uvicorn (``httptools_impl``) writes a response's status line and headers when the app sends
``http.response.start``, and its body in a second ``transport.write`` when the app sends it. On
a socket with TCP_NODELAY (``__main__``) each write is a system call and a packet of its own:
the client wakes twice for one answer, and the gateway pays the send twice, about 5 % of a
gateway's CPU under load for its two requests a turn. Here a write is held until the next one
(then both go at once) or the end of the pass of the event loop (``call_soon``): an app sends a
response's head and body in the same pass, so they leave together with no wait; a streamed
body still goes out chunk by chunk as the app sends it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class CorkedTransport:
    """A transport that holds a write until the next one or the end of the pass of the event
    loop, whichever comes first: a response's head waits for its body, and both go out in one
    write as soon as the body is given; nothing waits longer than the pass. Everything else,
    flow control included, is the wrapped transport's; what ends the writing (closing, an end
    of file) sends what is held first, and an abort drops it with the connection."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if self._held:  # a response's body after its head: both go now
            self._held.append(data)
            self.flush()
            return
        self._held.append(data)
        self._loop.call_soon(self.flush)

    def writelines(self, data: Any) -> None:
        self.write(b"".join(data))

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

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CorkedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a ``CorkedTransport`` (``uvicorn.Config(http=...)``)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CorkedTransport(transport, self.loop))  # type: ignore[arg-type]
