"""The gateway's answer when Redis is out of reach mid-request: a 503 to retry, never a 500;
and a 500 still for what is a bug."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from services.gateway.unavailable import closed_connection

CLOSED = "unable to perform operation on <TCPTransport closed=True>; the handler is closed"


def app_raising(error: Exception) -> FastAPI:
    app = FastAPI()
    app.add_exception_handler(RuntimeError, closed_connection)

    @app.get("/v1/thing")
    async def thing() -> None:
        raise error

    return app


async def get(app: FastAPI) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
        return await client.get("/v1/thing")


async def test_a_write_on_a_connection_a_dead_node_closed_is_a_503() -> None:
    response = await get(app_raising(RuntimeError(CLOSED)))
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "2"


async def test_any_other_runtime_error_stays_a_500() -> None:
    response = await get(app_raising(RuntimeError("dictionary changed size during iteration")))
    assert response.status_code == 500
