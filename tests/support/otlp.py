"""A real OTLP/HTTP receiver for tests: what the services' exporters send, as spans.

It speaks the protocol a collector or Jaeger speaks on port 4318 (``POST /v1/traces``, an
``ExportTraceServiceRequest`` in protobuf), records every span with its service, and lets a
test await the spans it expects instead of sleeping.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root
    name: str
    service: str
    kind: int
    attributes: dict[str, Any] = field(hash=False, compare=False)
    links: tuple[str, ...] = ()  # the span ids it links to


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def decode(body: bytes) -> list[Span]:
    """The spans of one export request."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans: list[Span] = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    Span(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        name=span.name,
                        service=str(resource.get("service.name", "")),
                        kind=span.kind,
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        links=tuple(link.span_id.hex() for link in span.links),
                    )
                )
    return spans


class Receiver:
    """Spans received so far; ``wait_for`` blocks until a condition over them holds."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.requests = 0
        self._changed = threading.Condition()

    def add(self, spans: list[Span]) -> None:
        with self._changed:
            self.spans.extend(spans)
            self.requests += 1
            self._changed.notify_all()

    def wait_for(self, probe: Callable[[list[Span]], Any], timeout_s: float) -> Any:
        """``probe``'s first truthy answer over the spans received (re-asked as they come);
        AssertionError after ``timeout_s`` without one."""
        found: Any = None

        def ready() -> bool:
            nonlocal found
            found = probe(list(self.spans))
            return bool(found)

        with self._changed:
            if not self._changed.wait_for(ready, timeout_s):
                names = sorted({(s.service, s.name) for s in self.spans})
                raise AssertionError(f"spans not received within {timeout_s}s; have {names}")
        return found


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, Receiver]]:
    """A receiver listening on a free loopback port: (its base URL, its spans)."""
    receiver = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            encoding = self.headers.get("Content-Encoding", "")
            if encoding == "gzip":
                body = gzip.decompress(body)
            elif encoding == "deflate":
                body = zlib.decompress(body)
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            receiver.add(decode(body))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test reads the spans, not the access log."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
