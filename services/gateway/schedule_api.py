"""Admin routes for time-driven work: scheduled messages, the funnel, and the test clock.

``POST /v1/admin/clock`` exists only with ``ORQ_TEST_CLOCK=true`` (404 otherwise): end-to-end
tests move every process's clock with it instead of sleeping for hours.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query
from pydantic import AwareDatetime, BaseModel

from services.gateway import auth
from services.gateway.deps import Deps
from shared.contracts import CONVERSATION_ID_PATTERN
from shared.funnel import read_days

MAX_FUNNEL_DAYS = 366

router = APIRouter(dependencies=[Depends(auth.require_admin)])


class ClockIn(BaseModel):
    now: AwareDatetime


@router.post("/v1/admin/clock")
async def post_clock(body: ClockIn, deps: Deps) -> dict[str, Any]:
    if not deps.settings.test_clock:
        raise HTTPException(status_code=404, detail="Not Found")
    offset = await deps.clock.set(body.now)
    return {"now": body.now.isoformat(), "offset_ms": int(offset.total_seconds() * 1000)}


@router.get("/v1/scheduled")
async def get_scheduled(
    deps: Deps,
    conversation_id: Annotated[str | None, Query(pattern=CONVERSATION_ID_PATTERN)] = None,
    before: Annotated[AwareDatetime | None, Query()] = None,
) -> dict[str, Any]:
    """Scheduled messages: one conversation's (any status), or every one still to come and
    those held while a person owns the conversation; ``before`` bounds the due time."""
    rows = await deps.schedule.listing(conversation_id, before)
    return {"scheduled": rows}


@router.get("/v1/funnel")
async def get_funnel(
    deps: Deps,
    from_: Annotated[date | None, Query(alias="from")] = None,
    to: Annotated[date | None, Query()] = None,
) -> dict[str, Any]:
    """The funnel per business day, ``to`` inclusive (default: the last 7 days)."""
    today = (await deps.clock.now()).astimezone(deps.tz).date()
    last = to or today
    try:
        first = from_ or last - timedelta(days=6)
    except OverflowError:
        raise HTTPException(status_code=422, detail="'to' is too early") from None
    if last < first:
        raise HTTPException(status_code=422, detail="'to' is before 'from'")
    if (last - first).days + 1 > MAX_FUNNEL_DAYS:
        raise HTTPException(status_code=422, detail=f"at most {MAX_FUNNEL_DAYS} days")
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    async with deps.redis.pipeline(transaction=False) as pipe:
        for day in days:
            pipe.hgetall(deps.keys.funnel_day(day.isoformat()))
        raw = await pipe.execute()
    return {"days": read_days({d.isoformat(): r for d, r in zip(days, raw, strict=True)})}
