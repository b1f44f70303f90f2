"""structlog set-up: JSON when not a TTY, turn and conversation ids bound, phones masked."""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

# Phone numbers as WhatsApp gives them (E.164 digits, "5511987654321") or as people write them
# ("+55 11 98765-4321", "(11) 98765-4321"). Dates and times do not match. The last 4 digits are
# kept so two numbers can still be told apart in a log.
_PHONE = re.compile(
    r"(?<![\w-])(?:\+?\d{10,15}|\+?(?:\d{2}\s)?\(?\d{2}\)?\s?\d{4,5}-\d{4})(?![\w-])"
)
_NOT_MASKED = frozenset({"timestamp", "at", "now", "turn_id", "consumer"})


def mask_phone(text: str) -> str:
    def _mask(match: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", match.group())
        if len(digits) < 8:
            return match.group()
        return "*" * (len(digits) - 4) + digits[-4:]

    return _PHONE.sub(_mask, text)


def _mask_values(value: Any) -> Any:
    if isinstance(value, str):
        return mask_phone(value)
    if isinstance(value, dict):
        return {k: _mask_values(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask_values(v) for v in value]
    return value


def _mask_processor(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> Mapping[str, Any]:
    return {k: v if k in _NOT_MASKED else _mask_values(v) for k, v in event_dict.items()}


def setup_logging(service: str, level: str = "INFO", json: bool | None = None) -> None:
    """Configure structlog and stdlib logging for one process."""
    use_json = (not sys.stderr.isatty()) if json is None else json
    renderer: Any = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _mask_processor,
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
    structlog.contextvars.bind_contextvars(service=service)
    logging.basicConfig(level=level.upper(), stream=sys.stderr, format="%(name)s %(message)s")


def get_logger(name: str | None = None) -> Any:
    return structlog.get_logger(name)
