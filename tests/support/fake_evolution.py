"""A local fake of an Evolution API server: ``POST /message/sendText/{instance}`` as 2.3.x
answers it (201 with the created message and a fresh ``key.id``), a 401 for another ``apikey``.
Scripts are per recipient number; every instance key given is valid. :func:`upsert` builds
``messages.upsert`` webhooks from the conformance corpus, and :func:`evolution_jwt` the bearer
Evolution sends with ``jwt_key``."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jwt
from fastapi.responses import JSONResponse

from tests.support.fake_http import FakeServer, Recorded

CORPUS = Path("/work/shared/conformance/evolution")
INCOMING = "messages_upsert_conversation_incoming_v1_7plus_crm_evolution_sender_2025.json"
FROM_PHONE = (
    "messages_upsert_conversation_fromme_source_web_v1_7plus_crm_evolution_sender_2025.json"
)


def evolution_jwt(secret: str) -> str:
    iat = int(time.time())
    claims = {"iat": iat, "exp": iat + 600, "app": "evolution", "action": "webhook"}
    return jwt.encode(claims, secret, algorithm="HS256")


def upsert(
    instance: str,
    number: str,
    message_id: str,
    text: str,
    timestamp: int,
    *,
    from_me: bool = False,
    business: str = "5511900000000",
) -> dict[str, Any]:
    """One ``messages.upsert`` of a one-to-one chat, from the corpus' capture with our values."""
    body = json.loads((CORPUS / (FROM_PHONE if from_me else INCOMING)).read_text())
    body["instance"] = instance
    body["sender"] = f"{business}@s.whatsapp.net"
    data = body["data"]
    data["key"].update({"remoteJid": f"{number}@s.whatsapp.net", "id": message_id})
    data["message"]["conversation"] = text
    data["messageTimestamp"] = timestamp
    data["owner"] = instance
    return body


class FakeEvolution(FakeServer):
    name = "fake Evolution"
    success_status = 201

    def __init__(self, *api_keys: str) -> None:
        super().__init__()
        self.api_keys = set(api_keys)
        self._ids = itertools.count(1)

    def script_key(self, request: Recorded) -> str:
        return str((request.body or {}).get("number", ""))

    def authorized(self, request: Recorded) -> JSONResponse | None:
        if request.headers.get("apikey") in self.api_keys:
            return None
        body = {"status": 401, "error": "Unauthorized", "response": {"message": "Unauthorized"}}
        return JSONResponse(body, status_code=401)

    def success(self, request: Recorded) -> Any:
        number = str((request.body or {}).get("number", ""))
        return {
            "key": {
                "remoteJid": f"{number}@s.whatsapp.net",
                "fromMe": True,
                "id": f"BAE5FAKE{next(self._ids):08d}",
            },
            "pushName": "Você",
            "status": "PENDING",
            "message": {"conversation": (request.body or {}).get("text")},
            "messageType": "conversation",
            "messageTimestamp": int(time.time()),
            "source": "unknown",
        }

    def sends(self, number: str | None = None) -> list[Recorded]:
        return self.received(
            lambda r: (
                r.path.startswith("/message/sendText/")
                and (number is None or (r.body or {}).get("number") == number)
            )
        )

    @classmethod
    @contextmanager
    def running(cls, *api_keys: str) -> Iterator[FakeEvolution]:
        fake = cls(*api_keys)
        fake.start()
        try:
            yield fake
        finally:
            fake.stop()
