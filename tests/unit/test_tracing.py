"""Tracing's switch and its carriers (``shared/tracing.py``); with tracing off (as in every
test process, which never calls ``setup``), nothing is added to messages, entries or journals.
Tracing on, end to end: ``tests/e2e/test_tracing.py``."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from faststream.redis.parser.binary import BinaryMessageFormatV1
from redis.asyncio import Redis

from services.gateway.turns import screen_entries
from services.registry import TOPOLOGY
from shared import tracing
from shared.bus import Bus, make_broker
from shared.contracts import InboundMessage
from shared.keys import Keys
from shared.settings import Settings
from shared.state import journal_entry

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://jaeger:4318"}
PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
AT = datetime(2026, 2, 3, 13, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("env", "on"),
    [
        ({}, False),
        (ENDPOINT, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://jaeger:4318/v1/traces"}, True),
        ({**ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, True),
        ({**ENDPOINT, "OTEL_SDK_DISABLED": "true"}, False),
        ({**ENDPOINT, "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, False),  # no endpoint: nowhere to send
    ],
)
def test_the_standard_variables_turn_tracing_on(env: dict[str, str], on: bool) -> None:
    assert tracing.wanted(env) is on


@pytest.mark.parametrize(
    "extra",
    [
        {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
        {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
        {"OTEL_TRACES_EXPORTER": "zipkin"},
    ],
)
def test_an_exporter_not_shipped_is_refused_not_ignored(extra: dict[str, str]) -> None:
    with pytest.raises(tracing.TracingConfigError):
        tracing.wanted({**ENDPOINT, **extra})


def test_setup_without_an_endpoint_leaves_tracing_off() -> None:
    assert tracing.setup("triage", {}) is False
    assert not tracing.active()
    assert tracing.broker_middlewares() == ()


def _message() -> InboundMessage:
    return InboundMessage(
        channel="http",
        conversation_id="c-1",
        message_id="m-1",
        text="oi",
        sent_at=AT,
        received_at=AT,
    )


def test_an_inbox_entry_carries_its_trace_and_still_reads_as_the_message() -> None:
    plain = _message().model_dump_json()
    assert tracing.stamp_entry(plain, None) == plain  # off: the entry as before
    entry = f"{int(AT.timestamp() * 1000)}|{tracing.stamp_entry(plain, PARENT)}"
    assert tracing.entry_traceparent(entry) == PARENT
    messages, rejected = screen_entries([entry], "c-1", AT, 7)
    assert (messages, rejected) == ([_message()], [])
    assert "traceparent" not in messages[0].model_dump_json()  # it travels no further


@pytest.mark.parametrize("entry", ["1770123600000|" + '{"v": 1}', "1770123600000|not json", "x"])
def test_an_entry_without_a_trace_has_none(entry: str) -> None:
    assert tracing.entry_traceparent(entry) is None


def test_off_every_span_is_nothing() -> None:
    for started in (
        tracing.span("reply deliver", channel="http"),
        tracing.turn_started([f"1|{tracing.stamp_entry(_message().model_dump_json(), PARENT)}"]),
        tracing.resumed(PARENT, "merge deadline"),
    ):
        with started as span:
            assert span is None


def test_off_journal_entries_carry_no_trace_id() -> None:
    assert "trace_id" not in json.loads(journal_entry("triage", "t-1", "triage.decided"))


async def test_off_a_script_published_envelope_carries_no_trace_context() -> None:
    settings = Settings()
    redis = Redis()  # never connected: encoding needs no Redis
    bus = Bus(make_broker(settings), redis, settings, Keys("t:", topology=TOPOLOGY), "triage")
    [(stream, data)] = await bus.encode([("t:merge", '{"kind": "plan"}')])
    body, headers = BinaryMessageFormatV1.parse(data)
    assert (stream, body) == ("t:merge", b'{"kind": "plan"}')
    assert not any(key.startswith("trace") for key in headers)
    await redis.aclose()
