"""The error taxonomy is keyed on Meta's code, whatever the HTTP status or envelope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.gateway.whatsapp.errors import Category, backoff_s, categorize, graph_error

CORPUS = Path("/work/shared/conformance/whatsapp")


@pytest.mark.parametrize(
    ("name", "status", "code", "category"),
    [
        ("outbound_error_130429_kapso.json", 429, 130429, Category.THROTTLED),
        ("outbound_error_130429_kapso.json", 400, 130429, Category.THROTTLED),
        ("outbound_error_130429_kapso.json", 403, 130429, Category.THROTTLED),
        ("outbound_error_131056_via_ycloud_doc.json", 429, 131056, Category.THROTTLED),
        ("outbound_error_131047_kapso.json", 400, 131047, Category.REENGAGEMENT),
        ("outbound_error_190_invalid_token_netflie.json", 401, 190, Category.AUTH),
        ("outbound_error_190_expired_token_pywa.json", 400, 190, Category.AUTH),
        ("outbound_error_100_unsupported_post_request.json", 400, 100, Category.PERMANENT),
        ("outbound_error_100_invalid_parameter_read_outgoing.json", 400, 100, Category.PERMANENT),
    ],
)
def test_corpus_errors(name: str, status: int, code: int, category: Category) -> None:
    error = graph_error(status, json.loads((CORPUS / name).read_text()))
    assert (error.code, error.category, error.http_status) == (code, category, status)
    assert error.message.startswith(("(#", "Invalid", "Error", "Unsupported"))


def test_reseller_envelope_yields_metas_numbers() -> None:
    body = json.loads((CORPUS / "outbound_error_131056_via_ycloud_doc.json").read_text())
    error = graph_error(429, body, retry_after="2")
    assert (error.code, error.subcode, error.retry_after_s) == (131056, 2494071, 2.0)
    assert error.details and error.details.startswith("Message failed to send")


@pytest.mark.parametrize(
    ("code", "status", "category"),
    [
        (4, 400, Category.THROTTLED),
        (80007, 400, Category.THROTTLED),
        (131000, 500, Category.TRANSIENT),
        (None, 429, Category.THROTTLED),
        (None, 503, Category.TRANSIENT),
        (None, 0, Category.TRANSIENT),
        (None, 404, Category.PERMANENT),
        (131026, 400, Category.PERMANENT),
        (131051, 500, Category.PERMANENT),
    ],
)
def test_categories(code: int | None, status: int, category: Category) -> None:
    assert categorize(code, status) == category


def test_bodies_without_an_error_object() -> None:
    error = graph_error(502, "<html>Bad Gateway</html>")
    assert error.code is None and error.category == Category.TRANSIENT
    assert graph_error(500, {"error": {"code": "oops"}}).code is None
    assert (
        graph_error(400, {"error": {"code": 100}}, retry_after="Wed, 21 Oct").retry_after_s is None
    )


def test_backoff_doubles_is_capped_jittered_and_respects_retry_after() -> None:
    low = [backoff_s(a, base_s=0.5, cap_s=8, retry_after_s=None, jitter=0.0) for a in range(6)]
    high = [backoff_s(a, base_s=0.5, cap_s=8, retry_after_s=None, jitter=0.999) for a in range(6)]
    assert low == [0.25, 0.5, 1.0, 2.0, 4.0, 4.0]
    assert all(lo < hi < 2 * lo for lo, hi in zip(low, high, strict=True))
    assert backoff_s(0, base_s=0.5, cap_s=8, retry_after_s=3, jitter=0.5) == 3
