"""The Graph API's errors, sorted by what to do about them (pure).

Meta advises handling errors by ``error.code``: the HTTP status of the same error differs
between sources (130429 arrives as 400, 403 or 429), so the category is decided by the code and
the HTTP status only matters when the body carries no code at all.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel


class Category(StrEnum):
    THROTTLED = "throttled"  # retry with backoff, pace the number or the recipient
    REENGAGEMENT = "reengagement"  # outside the 24-hour window: only a template may go out
    AUTH = "auth"  # the access token is invalid or expired: nothing will work until fixed
    TRANSIENT = "transient"  # Meta or the network hiccuped: retry a few times
    PERMANENT = "permanent"  # this message will never go out as it is


THROTTLING_CODES = frozenset({4, 80007, 130429, 131056})
# 131056 limits one (business number, recipient) pair; the others limit the whole number.
PAIR_THROTTLING_CODES = frozenset({131056})
REENGAGEMENT_CODE = 131047
AUTH_CODES = frozenset({190})
# Unknown error, service unavailable, temporarily unavailable (Meta's error-code reference).
TRANSIENT_CODES = frozenset({1, 2, 131000, 131016, 133004})


class GraphError(Exception):
    """One failed Graph API call, with Meta's code when the response carried one."""

    def __init__(
        self,
        *,
        code: int | None,
        message: str,
        http_status: int,
        details: str | None = None,
        subcode: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"({code}) {message}" if code is not None else message)
        self.code = code
        self.message = message
        self.http_status = http_status
        self.details = details
        self.subcode = subcode
        self.retry_after_s = retry_after_s
        self.category = categorize(code, http_status)

    def summary(self) -> dict[str, Any]:
        """What is recorded and shown in /healthz."""
        return {
            "code": self.code,
            "category": str(self.category),
            "http_status": self.http_status,
            "message": self.message[:300],
            "details": (self.details or "")[:300] or None,
        }


class ErrorInfo(BaseModel):
    """The fields of an error response body that matter (codes as ints)."""

    code: int | None = None
    subcode: int | None = None
    message: str = ""
    details: str | None = None


def categorize(code: int | None, http_status: int) -> Category:
    if code in THROTTLING_CODES:
        return Category.THROTTLED
    if code == REENGAGEMENT_CODE:
        return Category.REENGAGEMENT
    if code in AUTH_CODES:
        return Category.AUTH
    if code in TRANSIENT_CODES:
        return Category.TRANSIENT
    if code is None:
        if http_status == 429:
            return Category.THROTTLED
        if http_status == 0 or http_status >= 500:
            return Category.TRANSIENT
    return Category.PERMANENT


def error_info(body: Any) -> ErrorInfo:
    """Read ``{"error": {...}}``; a reseller's envelope may wrap Meta's object one level down.

    The object used is the first one (the error itself, then its nested objects) whose ``code``
    is a number or a numeric string: YCloud, for one, puts its own word code outside and Meta's
    object, with the numbers as strings, inside.
    """
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return ErrorInfo(message=str(body)[:300] if body else "")
    candidates = [error, *(v for v in error.values() if isinstance(v, dict))]
    chosen = next((c for c in candidates if _int(c.get("code")) is not None), error)
    data = chosen.get("error_data")
    details = data.get("details") if isinstance(data, dict) else None
    return ErrorInfo(
        code=_int(chosen.get("code")),
        subcode=_int(chosen.get("error_subcode")),
        message=str(chosen.get("message") or error.get("message") or ""),
        details=details if isinstance(details, str) else None,
    )


def graph_error(http_status: int, body: Any, retry_after: str | None = None) -> GraphError:
    info = error_info(body)
    return GraphError(
        code=info.code,
        subcode=info.subcode,
        message=info.message or f"HTTP {http_status}",
        details=info.details,
        http_status=http_status,
        retry_after_s=_seconds(retry_after),
    )


def backoff_s(
    attempt: int, *, base_s: float, cap_s: float, retry_after_s: float | None, jitter: float
) -> float:
    """Wait before retry number ``attempt`` (0-based): exponential, capped, jittered.

    "Equal jitter" (half fixed, half random with ``jitter`` in [0, 1)) spreads replicas that
    were throttled together without ever retrying at once; a Retry-After is a lower bound.
    """
    ceiling = min(cap_s, base_s * (2**attempt))
    delay = ceiling / 2 + ceiling / 2 * jitter
    return max(delay, retry_after_s or 0.0)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None  # an HTTP date: rare from the Graph API; the backoff applies instead
    return seconds if seconds >= 0 else None
