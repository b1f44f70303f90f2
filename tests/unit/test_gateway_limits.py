"""The /v1 body limit counts what arrives, with or without a Content-Length."""

from __future__ import annotations

import httpx
from fastapi import FastAPI, Request
from pydantic import BaseModel

from services.gateway.limits import BodyLimit


class Body(BaseModel):
    text: str


def app() -> FastAPI:
    api = FastAPI()
    api.add_middleware(BodyLimit, max_bytes=100)

    @api.post("/v1/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    @api.post("/v1/model")
    async def model(body: Body) -> dict[str, int]:
        return {"size": len(body.text)}

    @api.post("/webhooks/echo")
    async def hook(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    return api


async def chunks(n: int, size: int):
    for _ in range(n):
        yield b"x" * size


async def test_declared_and_streamed_bodies_over_the_limit_get_413() -> None:
    transport = httpx.ASGITransport(app=app())
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await client.post("/v1/echo", content=b"x" * 100)).json() == {"size": 100}
        assert (await client.post("/v1/echo", content=b"x" * 101)).status_code == 413
        streamed = await client.post("/v1/echo", content=chunks(5, 30))
        assert streamed.status_code == 413
        assert "100 bytes" in streamed.json()["detail"]
        other = await client.post("/webhooks/echo", content=b"x" * 500)
        assert other.json() == {"size": 500}


async def json_chunks(n: int, size: int):
    yield b'{"text": "'
    for _ in range(n):
        yield b"x" * size
    yield b'"}'


async def test_a_streamed_body_over_the_limit_is_413_for_a_parsed_model_too() -> None:
    """FastAPI turns any error while it reads a body into a 400; the limit must stay a 413."""
    transport = httpx.ASGITransport(app=app())
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        json_type = {"content-type": "application/json"}
        small = await client.post("/v1/model", content=json_chunks(2, 10), headers=json_type)
        assert small.json() == {"size": 20}
        streamed = await client.post("/v1/model", content=json_chunks(5, 30), headers=json_type)
        assert streamed.status_code == 413
        assert "100 bytes" in streamed.json()["detail"]
