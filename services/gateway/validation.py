"""422 answers that name the field and the rule, and never echo the input.

FastAPI's default handler puts each rejected value back into the answer. A value that cannot
be encoded (a lone surrogate such as ``"\\ud800"`` in a JSON string) then makes the error
answer itself fail with a 500, and echoing hostile input is a bad idea anyway. This handler
keeps the error's type, location and message, and makes every string safe to encode.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse


def safe_text(value: object) -> str:
    """``value`` as text that UTF-8 can encode (undecodable characters become ``?``)."""
    return str(value).encode("utf-8", "replace").decode("utf-8")


def _location(loc: Any) -> list[str | int]:
    items = loc if isinstance(loc, list | tuple) else [loc]
    return [item if isinstance(item, int) else safe_text(item) for item in items]


def describe(error: dict[str, Any]) -> dict[str, Any]:
    """One error, without its input: type, location, message and the rule's parameters."""
    out: dict[str, Any] = {
        "type": safe_text(error.get("type", "value_error")),
        "loc": _location(error.get("loc", ())),
        "msg": safe_text(error.get("msg", "invalid value")),
    }
    ctx = error.get("ctx")
    if isinstance(ctx, dict) and ctx:
        out["ctx"] = {
            safe_text(k): v if isinstance(v, int | float) else safe_text(v) for k, v in ctx.items()
        }
    return out


def field_error(field: str, reason: str) -> RequestValidationError:
    """A 422 for a body field the handler itself refused (a rule the schema cannot state)."""
    return RequestValidationError([{"type": "value_error", "loc": ("body", field), "msg": reason}])


async def validation_error(_: Request, exc: Exception) -> JSONResponse:
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    return JSONResponse({"detail": [describe(e) for e in errors]}, status_code=422)
