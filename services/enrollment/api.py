"""Staff's list of enrollment requests (``GET /v1/enrollments``), mounted by the gateway behind
the admin token (the spec's ``admin_api``). It only reads what the enrollment service stored."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from services.enrollment.core import EnrollmentRequest
from services.enrollment.store import EnrollmentStore
from shared.deps import AppDepends

router = APIRouter()


class EnrollmentList(BaseModel):
    enrollments: list[EnrollmentRequest]


@router.get("/v1/enrollments", response_model=EnrollmentList)
async def list_enrollments(
    deps: AppDepends,
    status: Annotated[Literal["requested"] | None, Query(description="Only this status.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> dict[str, Any]:
    """Enrollment requests for staff, newest first: who asked for which plan, days, time and
    way to pay. Nothing was charged; a person arranges it in the conversation."""
    store = EnrollmentStore(deps.redis, deps.keys)
    return {"enrollments": await store.requests(status=status, limit=limit)}
