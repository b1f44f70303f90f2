"""Enrollment requests as personal records: found by conversation, unlinked from the person on
erasure while the business keeps the request (real Redis)."""

from __future__ import annotations

from datetime import UTC, datetime

from redis.asyncio import Redis

from services.enrollment.core import EnrollmentRequest
from services.enrollment.store import EnrollmentStore
from services.registry import BY_NAME
from shared.keys import Keys

NOW = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)


def request(ident: str, conversation_id: str) -> EnrollmentRequest:
    return EnrollmentRequest(
        id=ident,
        conversation_id=conversation_id,
        plan="3x por semana",
        days=["segunda", "quarta"],
        time="19:00",
        payment="Pix",
        created_at=NOW,
    )


async def test_erasure_unlinks_only_that_persons_requests(redis: Redis, unique_prefix: str) -> None:
    records = BY_NAME["enrollment"].records_of(redis, Keys(unique_prefix))
    assert isinstance(records, EnrollmentStore)  # what the gateway's export and erase call
    for ident, conv in (("MT-1", "ana"), ("MT-2", "ana"), ("MT-3", "bia")):
        assert await records.create(request(ident, conv))

    assert [r["id"] for r in await records.of_conversation("ana")] == ["MT-2", "MT-1"]
    assert await records.anonymize("ana", now=NOW) == ["MT-2", "MT-1"]

    assert await records.of_conversation("ana") == []
    listed = await records.requests(status=None, limit=None)
    linked = {r["id"]: r["conversation_id"] for r in listed}
    assert linked == {"MT-1": "", "MT-2": "", "MT-3": "bia"}
    assert {r["plan"] for r in listed} == {"3x por semana"}
    assert all(r.get("erased_at") == NOW.isoformat() for r in listed if r["id"] != "MT-3")
    assert await records.anonymize("ana", now=NOW) == []
