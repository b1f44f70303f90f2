"""The webhook routes in-process (the real router, a recording stand-in for the channel).

The triples signed with other secrets than the pywa one (whatsapp-api-js, Meta's SDK), the
gateway without any secret, and bodies streamed without a Content-Length are checked here; the
end-to-end test runs the whole system with the pywa secret.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
from fastapi import FastAPI
from redis.asyncio import Redis

from services.gateway.whatsapp.routes import router
from services.gateway.whatsapp.settings import WhatsAppSettings
from shared.deps import deployment
from shared.keys import Keys
from shared.pack import load_pack

CORPUS = Path("/work/shared/conformance/whatsapp")
TRIPLES = {
    t["id"]: t for t in json.loads((CORPUS / "cloud_signature_triples.json").read_text())["triples"]
}


class Recorder:
    """Stands in for the WhatsApp channel: remembers every body it was asked to store."""

    def __init__(self, settings: WhatsAppSettings) -> None:
        self.settings = settings
        self.bodies: list[bytes] = []

    async def receive(
        self, raw: bytes, payload: Any, turns: Any, staff: Any, background: Any
    ) -> dict[str, int]:
        self.bodies.append(raw)
        return {"messages": 0, "duplicates": 0, "statuses": 0, "ignored": 1}


def client(**settings: Any) -> tuple[httpx.AsyncClient, Recorder]:
    app = FastAPI()
    app.include_router(router)
    recorder = Recorder(WhatsAppSettings(_env_file=None, **settings))
    stand_in = SimpleNamespace(channels={"whatsapp": recorder}, turns=None, inbox=None, keys=Keys())
    one_business = SimpleNamespace(any=lambda: stand_in, of_routes=lambda _, ids: stand_in)
    app.dependency_overrides[deployment] = lambda: one_business
    transport = httpx.ASGITransport(app=app)
    return httpx.AsyncClient(transport=transport, base_url="http://gw"), recorder


async def test_meta_sdk_triple_passes_and_a_wrong_one_is_401() -> None:
    triple = TRIPLES["meta_nodejs_sdk_minimal"]
    http, recorder = client(app_secret=triple["app_secret"])
    async with http:
        ok = await http.post(
            "/webhooks/whatsapp",
            content=triple["body"].encode(),
            headers={"x-hub-signature-256": triple["x_hub_signature_256"]},
        )
        bad = await http.post(
            "/webhooks/whatsapp", content=b"test", headers={"x-hub-signature-256": "sha256=00"}
        )
        missing = await http.post("/webhooks/whatsapp", content=b"test")
    assert ok.status_code == 200 and recorder.bodies == [b"test"]
    assert (bad.status_code, missing.status_code) == (401, 401)


async def test_without_a_secret_unsigned_bodies_are_accepted() -> None:
    http, recorder = client()
    async with http:
        response = await http.post("/webhooks/whatsapp", content=b'{"object": "x"}')
    assert response.status_code == 200 and recorder.bodies == [b'{"object": "x"}']


async def test_bodies_over_the_limit_are_413_before_anything_is_stored() -> None:
    http, recorder = client(max_body_bytes=1000)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(5):
            yield b"x" * 300

    async with http:
        declared = await http.post("/webhooks/whatsapp", content=b"x" * 1001)
        streamed = await http.post("/webhooks/whatsapp", content=chunks())
        at_limit = await http.post("/webhooks/whatsapp", content=b"x" * 1000)
    assert (declared.status_code, streamed.status_code, at_limit.status_code) == (413, 413, 200)
    assert recorder.bodies == [b"x" * 1000]


async def test_handshake_without_a_verify_token_is_403() -> None:
    http, _ = client()
    async with http:
        response = await http.get(
            "/webhooks/whatsapp",
            params={"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "1"},
        )
    assert response.status_code == 403


async def test_handshake_echoes_the_challenge_as_plain_text() -> None:
    http, _ = client(verify_token="meatyhamhock")
    query = "hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=meatyhamhock"
    async with http:
        response = await http.get(f"/webhooks/whatsapp?{query}")
        wrong = await http.get(f"/webhooks/whatsapp?{query.replace('meaty', 'lean')}")
    assert response.status_code == 200 and response.text == "1158201444"
    assert response.headers["content-type"].startswith("text/plain")
    assert wrong.status_code == 403


async def test_whatsapp_api_js_triples_sign_the_raw_bytes() -> None:
    wajs = TRIPLES["whatsapp_api_js_unicode_escaped"]
    body = (CORPUS / wajs["body_bytes_actually_signed_file"]).read_bytes()
    http, recorder = client(app_secret=wajs["app_secret"])
    negative = TRIPLES["negative_wrong_signature"]["x_hub_signature_256"]
    async with http:
        good = await http.post(
            "/webhooks/whatsapp",
            content=body,
            headers={"x-hub-signature-256": wajs["x_hub_signature_256"]},
        )
        wrong = await http.post(
            "/webhooks/whatsapp", content=body, headers={"x-hub-signature-256": negative}
        )
        decoded = await http.post(
            "/webhooks/whatsapp",
            content=wajs["body_as_unicode_text"].encode(),
            headers={"x-hub-signature-256": wajs["x_hub_signature_256"]},
        )
    assert (good.status_code, wrong.status_code, decoded.status_code) == (200, 401, 401)
    assert recorder.bodies == [body]


async def test_whatsapp_api_js_handshake_cases() -> None:
    cases = json.loads((CORPUS / "cloud_verify_handshake.json").read_text())["whatsapp_api_js_test"]
    http, _ = client(verify_token=cases["configured_verify_token"])
    async with http:
        for case in cases["cases"]:
            response = await http.get("/webhooks/whatsapp", params=case["query"])
            if case["expected"] == "return 'challenge'":
                assert (response.status_code, response.text) == (200, "challenge")
            else:
                assert response.status_code == 403, case


async def test_a_gateway_without_app_secret_warns_once_at_start() -> None:
    from services.gateway.whatsapp.gateway import WhatsApp

    class Log:
        def __init__(self) -> None:
            self.warnings: list[str] = []

        def warning(self, event: str, **_: Any) -> None:
            self.warnings.append(event)

    def runtime(log: Log) -> Any:
        return SimpleNamespace(
            redis=Redis(), keys=Keys("t:"), pack=load_pack("ctsmash"), log=log, tz=None
        )

    unsigned, signed = Log(), Log()
    await WhatsApp(runtime(unsigned), WhatsAppSettings(_env_file=None)).aclose()
    await WhatsApp(runtime(signed), WhatsAppSettings(_env_file=None, app_secret="s3cret")).aclose()
    assert len(unsigned.warnings) == 1 and "WHATSAPP_APP_SECRET" in unsigned.warnings[0]
    assert signed.warnings == []
