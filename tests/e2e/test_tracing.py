"""Issue 30's tracing, end to end: one turn is one trace, from ``POST /v1/messages`` through
triage and each specialist to the delivery (the part that completes the turn sends it to the
gateway; the merger answers only at the deadline), read from what the services' real OTLP
exporters sent to a receiver (``tests/support/otlp.py``).

One system (``orquestra up`` with ``OTEL_EXPORTER_OTLP_ENDPOINT`` set) serves three turns: a
turn for two specialists; a burst, whose turn continues its latest message's trace and links
the other; and a turn whose FAQ part never comes, so the merger's deadline answers it without
any message to carry the trace (the turn's merge hash does).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
import redis as redis_sync

from tests.e2e.journey import events
from tests.support.otlp import Receiver, Span, otlp_receiver
from tests.system import System

SPAN_KIND_SERVER, SPAN_KIND_CONSUMER = 2, 5  # OTLP's SpanKind values
PRODUCERS = {"triage", "trial", "faq", "enrollment", "mode_router"}


@pytest.fixture(scope="module")
def traced(redis_url: str) -> Iterator[tuple[System, Receiver]]:
    prefix = f"orqtest-{uuid.uuid4().hex[:8]}:"
    env = {
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # standard: export within 100 ms, not 5 s
        "ORQ_FAULT_INJECT": "faq:VENENO",
        "ORQ_MERGE_DEADLINE_MS": "5000",
    }
    with ExitStack() as stack:
        endpoint, receiver = stack.enter_context(otlp_receiver())
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        yield stack.enter_context(System.up(redis_url, prefix, **env)), receiver
    client = redis_sync.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"{prefix}*", count=1000):
        client.delete(key)
    client.close()


class Trace:
    """The spans of one trace, with their parent links."""

    def __init__(self, spans: list[Span], trace_id: str) -> None:
        self.spans = [s for s in spans if s.trace_id == trace_id]
        self.by_id = {s.span_id: s for s in self.spans}

    def ancestors(self, span: Span) -> list[Span]:
        """Parent, grandparent... up to the root (every link must be a span of the trace)."""
        found = []
        while span.parent_id:
            assert span.parent_id in self.by_id, f"{span.name}'s parent is not in the trace"
            span = self.by_id[span.parent_id]
            found.append(span)
        return found

    def hop(self, span: Span) -> Span:
        """The nearest ancestor in another service: where the message came from."""
        return next(a for a in self.ancestors(span) if a.service != span.service)

    def named(self, service: str, name: str) -> list[Span]:
        return [s for s in self.spans if s.service == service and s.name == name]

    def processed(self, service: str, stream: str) -> list[Span]:
        """``service``'s consumer spans of messages of ``stream`` (FastStream's middleware)."""
        return [
            s
            for s in self.spans
            if s.service == service
            and s.kind == SPAN_KIND_CONSUMER
            and s.name.endswith(" process")
            and stream in s.name
        ]


def _delivered(trace_id: str, *, deadline: bool = False) -> Any:
    """A probe: the trace once its delivery (its span, and the outbound message's, which ends
    after it) is in, and with ``deadline`` the merger's deadline span."""

    def probe(spans: list[Span]) -> Trace | None:
        trace = Trace(spans, trace_id)
        merged = trace.named("merger", "merge deadline") if deadline else True
        egress = trace.processed("gateway", "outbound")
        return trace if merged and egress and trace.named("gateway", "reply deliver") else None

    return probe


def _turn_trace(system: System, conversation: str) -> tuple[str, list[dict[str, Any]]]:
    """The trace id of the conversation's turn, as its journal entries carry it (one each)."""
    journal = system.journal(conversation)
    ids = {entry.get("trace_id") for entry in journal}
    assert len(ids) == 1 and None not in ids, f"journal entries carry one trace id: {ids}"
    return ids.pop(), journal


def test_one_turn_is_one_trace_from_the_request_to_the_delivery(
    traced: tuple[System, Receiver],
) -> None:
    system, receiver = traced
    conversation = f"otel-{uuid.uuid4().hex[:10]}"
    system.say(conversation, "Oi! Quero agendar uma aula experimental. Quanto custa a mensalidade?")
    trace_id, journal = _turn_trace(system, conversation)
    specialists = events(journal, "triage.decided")[0]["routes"]
    assert {"trial", "faq"} <= set(specialists)
    # Every process exports its own spans on its own schedule: wait for each hop asserted
    # below (every specialist's, not only the one that completed; triage's and the mode
    # router's too), then take the trace once its delivery is in.
    hops = [(name, "tasks") for name in specialists] + [
        ("triage", "turns"),
        ("mode_router", "turns"),
    ]
    for service, stream in hops:
        receiver.wait_for(
            lambda spans, service=service, stream=stream: Trace(spans, trace_id).processed(
                service, stream
            ),
            20,
        )
    trace = receiver.wait_for(_delivered(trace_id), 20)

    # gateway: the request, the message it brought, the turn that message started.
    [request] = [s for s in trace.spans if s.name == "POST /v1/messages"]
    assert request.kind == SPAN_KIND_SERVER and not request.parent_id
    [ingest] = trace.named("gateway", "message ingest")
    [start] = trace.named("gateway", "turn start")
    assert (ingest.parent_id, start.parent_id) == (request.span_id, ingest.span_id)

    # -> triage (and the mode router), from the turn's publish.
    [triage] = trace.processed("triage", "turns")
    assert trace.hop(triage).service == "gateway" and start in trace.ancestors(triage)
    assert start in trace.ancestors(trace.processed("mode_router", "turns")[0])

    # -> each specialist, from triage's commit (a Lua script published its task).
    for name in specialists:
        [task] = trace.processed(name, "tasks")
        assert trace.hop(task) == triage, f"{name}'s task did not come from triage's span"

    # -> the delivery, from whichever part completed the turn (its commit sent the turn to
    # the gateway, which composed the reply): no merger hop.
    [egress] = trace.processed("gateway", "outbound")
    assert trace.hop(egress).service in PRODUCERS
    assert triage in trace.ancestors(egress) or trace.hop(egress).service == "mode_router"
    assert not trace.processed("merger", "merge")
    [deliver] = trace.named("gateway", "reply deliver")
    assert deliver.parent_id == egress.span_id
    assert deliver.attributes["orquestra.delivery.status"] == "sent"

    # Every span of the turn is in the trace: one trace id across every service.
    services = {s.service for s in trace.spans}
    assert {"gateway", "triage", "mode_router", *specialists} <= services


def test_a_burst_continues_its_latest_message_and_links_the_others(
    traced: tuple[System, Receiver],
) -> None:
    system, receiver = traced
    conversation = f"otel-{uuid.uuid4().hex[:10]}"
    first = system.post(conversation, "Oi")  # a fragment: its turn waits for the rest
    assert first.status_code == 202
    system.say(conversation, "onde fica a CT?")
    trace_id, journal = _turn_trace(system, conversation)
    [started] = events(journal, "turn.started")
    assert started["messages"] == ["Oi", "onde fica a CT?"]
    trace = receiver.wait_for(_delivered(trace_id), 20)

    def both_ingests(spans: list[Span]) -> list[Span] | None:
        found = [
            s
            for s in spans
            if s.name == "message ingest"
            and s.attributes.get("orquestra.message_id") in started["message_ids"]
        ]
        return found if len(found) == 2 else None

    ingests = receiver.wait_for(both_ingests, 20)
    by_message = {s.attributes["orquestra.message_id"]: s for s in ingests}
    earlier, latest = (by_message[m] for m in started["message_ids"])
    [start] = trace.named("gateway", "turn start")
    assert start.parent_id == latest.span_id and latest.trace_id == trace_id
    assert earlier.trace_id != trace_id and start.links == (earlier.span_id,)


def test_a_reply_at_the_merge_deadline_continues_the_turns_trace(
    traced: tuple[System, Receiver],
) -> None:
    system, receiver = traced
    conversation = f"otel-{uuid.uuid4().hex[:10]}"
    # The FAQ fails on this message (fault injection), so only the deadline answers it.
    system.say(conversation, "Quanto custa a mensalidade? VENENO")
    assert events(system.journal(conversation), "merge.partial"), "the deadline answered it"
    trace_id, _ = _turn_trace(system, conversation)
    trace = receiver.wait_for(_delivered(trace_id, deadline=True), 20)

    [start] = trace.named("gateway", "turn start")
    [deadline] = trace.named("merger", "merge deadline")
    assert deadline.parent_id == start.span_id
    assert not trace.processed("merger", "merge")  # no message brought this reply
    [egress] = trace.processed("gateway", "outbound")
    assert trace.hop(egress).service == "merger" and deadline in trace.ancestors(egress)
