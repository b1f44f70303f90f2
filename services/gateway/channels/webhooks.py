"""What every channel's webhook route does the same way: read the raw body within a bound.

A signature is computed over the exact bytes the provider sent, so routes read the raw body
themselves (never a parsed model), and stop reading at the channel's limit: a missing or false
Content-Length does not get a larger body past it.
"""

from __future__ import annotations

from fastapi import Request


class BodyTooLarge(Exception):
    pass


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)
