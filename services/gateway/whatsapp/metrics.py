"""Prometheus metrics of the WhatsApp channel (served by the gateway's /metrics)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

WEBHOOKS = Counter(
    "orq_whatsapp_webhooks_total",
    "WhatsApp webhook requests by outcome",
    ["outcome"],  # ok, bad_signature, too_large, verified, verify_refused
)
EVENTS = Counter(
    "orq_whatsapp_events_total",
    "What WhatsApp webhooks carried",
    ["kind"],  # message:<kind>, status:<status>, ignored:<reason>
)
SENDS = Counter(
    "orq_whatsapp_sends_total",
    "Graph API sends by message kind and outcome",
    ["kind", "outcome"],  # kind: text, template, read; outcome: sent, retried, failed
)
ERRORS = Counter(
    "orq_whatsapp_errors_total",
    "Graph API errors by Meta error code and category",
    ["code", "category"],
)
TOKEN_VALID = Gauge(
    "orq_whatsapp_token_valid",
    "1 after a successful send, 0 after an access-token error (190)",
)
