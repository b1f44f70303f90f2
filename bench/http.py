"""A minimal keep-alive HTTP/1.1 client for the load driver.

The driver shares the machine's cores with the system it measures, so every microsecond it
spends per request is taken from the services. A general client (httpx) costs several times
more CPU per request than this: one connection per simulated person, one request at a time,
``Content-Length`` or chunked bodies, nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib


class Connection:
    def __init__(
        self, host: str, port: int, *, headers: dict[str, str] | None = None, timeout_s: float = 60
    ) -> None:
        self.host = host
        self.port = port
        self.timeout_s = timeout_s
        self.extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        if self._writer is None or self._writer.is_closing():
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{self.extra}\r\n"
        )
        try:
            self._writer.write(head.encode() + body)
            async with asyncio.timeout(self.timeout_s):
                return await self._response(self._reader)
        except BaseException:
            await self.close()  # a half-read response leaves the connection unusable
            raise

    async def _response(self, reader: asyncio.StreamReader) -> tuple[int, bytes]:
        raw = await reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = await self._chunked(reader)
        else:
            body = await reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, body

    async def _chunked(self, reader: asyncio.StreamReader) -> bytes:
        chunks = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
            self._writer = None
