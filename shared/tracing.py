"""Tracing: one OpenTelemetry trace per turn, across every hop; off unless configured.

On when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set
and neither ``OTEL_SDK_DISABLED=true`` nor ``OTEL_TRACES_EXPORTER=none`` says otherwise; every
other standard variable (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_TRACES_SAMPLER``, ``OTEL_BSP_*``, the exporter's headers, timeout, compression and
certificates) is read by the SDK itself. Spans go out over OTLP/HTTP (protobuf).
``docs/operations/tracing.md`` says what a trace shows.

How the context travels (W3C ``traceparent``):

- between services, in the headers of FastStream's envelope: its telemetry middleware
  (``RedisTelemetryMiddleware``, on the broker only when tracing is on) injects it on
  ``broker.publish`` and opens a consumer span from it; a message a Lua script publishes (a
  handler's commit) was encoded beforehand by ``Bus.encode``, which injects it there too;
- from a message to its turn, in the inbox entry (``stamp_entry``): a turn starts later, from a
  timer, a release or the sweeper, and continues the trace of its latest message
  (``turn_started``), linked to the others;
- from a turn to the merger's deadline, in the turn's merge hash (``MERGE_TRACE``), so a
  partial reply continues the turn's trace (``resumed``).

When tracing is off every entry point here is one check of a module flag (``active``) and
nothing else: no middleware, no span, no header, no extra key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

TRACEPARENT = "traceparent"
# The merge hash's field with the turn's trace context (read back by the merger's deadline).
MERGE_TRACE = "_trace"
NAMESPACE = "orquestra"
# The routes whose requests start no trace of their own (probes, scrapes), unless
# ``OTEL_PYTHON_FASTAPI_EXCLUDED_URLS`` says otherwise.
EXCLUDED_URLS = "healthz,metrics"

_PROPAGATOR = TraceContextTextMapPropagator()
_NOTHING: AbstractContextManager[None] = nullcontext()


class TracingConfigError(ValueError):
    """The OpenTelemetry variables ask for something this deployment does not ship."""


class _State:
    """The process's tracing, set once by ``setup``."""

    provider: Any = None  # opentelemetry.sdk.trace.TracerProvider when on
    tracer: trace.Tracer = trace.NoOpTracer()


_state = _State()


def wanted(env: Mapping[str, str]) -> bool:
    """Whether ``env`` turns tracing on (pure). Raises ``TracingConfigError`` for an exporter
    or protocol other than OTLP over HTTP/protobuf."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() or "otlp"
    if exporter == "none":
        return False
    endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
        "OTEL_EXPORTER_OTLP_ENDPOINT"
    )
    if not endpoint:
        return False
    if exporter != "otlp":
        raise TracingConfigError(
            f"OTEL_TRACES_EXPORTER={exporter!r}: only 'otlp' (OTLP over HTTP) or 'none' is shipped"
        )
    protocol = (
        env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    if protocol.strip().lower() != "http/protobuf":
        raise TracingConfigError(
            f"OTLP protocol {protocol!r}: only 'http/protobuf' is shipped (Jaeger and the "
            "OpenTelemetry Collector take it on port 4318)"
        )
    return True


def setup(service: str, env: Mapping[str, str] | None = None) -> bool:
    """Start tracing for this process as ``service`` when the environment asks for it;
    whether it did. Called once, before the process builds its broker or its app."""
    env = os.environ if env is None else env
    if _state.provider is not None or not wanted(env):
        return _state.provider is not None
    # Imported here: a process that does not trace never loads the SDK.
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    attributes = {"service.namespace": NAMESPACE}
    if not env.get("OTEL_SERVICE_NAME"):
        attributes["service.name"] = service
    provider = SdkTracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _state.provider = provider
    _state.tracer = provider.get_tracer("orquestra")
    return True


def shutdown() -> None:
    """Export what is still buffered and stop (at the process's orderly stop)."""
    if _state.provider is not None:
        _state.provider.shutdown()
        _state.provider = None
        _state.tracer = trace.NoOpTracer()


def active() -> bool:
    """Whether this process traces: the one check the hot paths make."""
    return _state.provider is not None


def provider() -> TracerProvider | None:
    provider: TracerProvider | None = _state.provider
    return provider


def broker_middlewares() -> tuple[Any, ...]:
    """FastStream's telemetry middleware for the broker, when tracing is on."""
    if _state.provider is None:
        return ()
    from faststream.redis.opentelemetry import RedisTelemetryMiddleware

    return (RedisTelemetryMiddleware(tracer_provider=_state.provider),)


def instrument_app(app: Any) -> None:
    """Trace the gateway's HTTP requests (a caller's own ``traceparent`` is honoured), when
    tracing is on; probes and scrapes excepted."""
    if _state.provider is None:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    excluded = os.environ.get("OTEL_PYTHON_FASTAPI_EXCLUDED_URLS", EXCLUDED_URLS)
    FastAPIInstrumentor.instrument_app(
        app,
        tracer_provider=_state.provider,
        excluded_urls=excluded,
        exclude_spans=["receive", "send"],
    )


def traceparent() -> str | None:
    """The current span's W3C trace context, to store with what continues it later."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get(TRACEPARENT)


def with_context(headers: dict[str, Any] | None) -> dict[str, Any] | None:
    """``headers`` plus the current trace context, for a message a script publishes (its
    envelope is encoded before the script runs, inside the handler's span)."""
    if _state.provider is None:
        return headers
    carrier = dict(headers or {})
    _PROPAGATOR.inject(carrier)
    return carrier


def trace_id() -> str | None:
    """The current trace's id (32 hex digits), for the journal; None outside a trace."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


def span(name: str, **attributes: Any) -> AbstractContextManager[Span | None]:
    """A child span of the current one while the block runs (None, and nothing, when off)."""
    if _state.provider is None:
        return _NOTHING
    return _state.tracer.start_as_current_span(name, attributes=_attrs(attributes))


def stamp_entry(message_json: str, parent: str | None) -> str:
    """A message's JSON (an object, as pydantic writes it) with ``parent`` as one more key,
    which ``InboundMessage`` ignores: its inbox entry carries its trace to its turn."""
    if not parent:
        return message_json
    return f'{message_json[:-1]},"{TRACEPARENT}":{json.dumps(parent)}}}'


def entry_traceparent(entry: str) -> str | None:
    """The trace context an inbox entry (``<epoch ms>|<message JSON>``) carries, if any. An
    entry that is no message (screened out and dead-lettered by the gateway) carries none."""
    try:
        found = json.loads(entry.partition("|")[2]).get(TRACEPARENT)
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def turn_started(entries: list[str], **attributes: Any) -> AbstractContextManager[Span | None]:
    """The span of a turn's start, current while the block runs: a child of its latest
    message's (the one whose arrival or timer starts it), linked to the others', whatever
    context the start runs in (a release runs in the previous turn's delivery)."""
    if _state.provider is None:
        return _NOTHING
    parents = [found for entry in entries if (found := entry_traceparent(entry))]
    return _continued(parents, "turn start", attributes)


def resumed(parent: str | None, name: str, **attributes: Any) -> AbstractContextManager[Any]:
    """A span continuing the stored trace ``parent`` (the merger's deadline of a turn)."""
    if _state.provider is None or not parent:
        return _NOTHING
    return _continued([parent], name, attributes)


@contextmanager
def _continued(parents: list[str], name: str, attributes: dict[str, Any]) -> Iterator[Span]:
    context = _PROPAGATOR.extract({TRACEPARENT: parents[-1]}) if parents else None
    links = []
    for other in dict.fromkeys(parents[:-1]):
        linked = trace.get_current_span(_PROPAGATOR.extract({TRACEPARENT: other}))
        if linked.get_span_context().is_valid:
            links.append(Link(linked.get_span_context()))
    with _state.tracer.start_as_current_span(
        name,
        # An explicit parent (an empty context: a root) rather than whatever context the
        # start happens to run in.
        context=context if context is not None else Context(),
        kind=SpanKind.INTERNAL,
        links=links,
        attributes=_attrs(attributes),
    ) as started:
        yield started


def _attrs(attributes: dict[str, Any]) -> dict[str, Any]:
    return {f"{NAMESPACE}.{key}": value for key, value in attributes.items() if value is not None}
