"""Prometheus metrics of the WhatsApp channel (served by the gateway's /metrics).

Each series names its ``tenant`` (``shared/metrics.py``); a webhook refused before its business
number picked a tenant (verification, too large, a number of no single tenant) counts under "".
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge

WEBHOOKS = Counter(
    "orq_whatsapp_webhooks_total",
    "WhatsApp webhook requests by outcome",
    ["outcome", "tenant"],  # ok, bad_signature, too_large, unknown_number, verified...
)
EVENTS = Counter(
    "orq_whatsapp_events_total",
    "What WhatsApp webhooks carried",
    ["kind", "tenant"],  # kind: message:<kind>, status:<status>, ignored:<reason>
)
SENDS = Counter(
    "orq_whatsapp_sends_total",
    "Graph API sends by message kind and outcome",
    ["kind", "outcome", "tenant"],  # kind: text, template, read; outcome: sent, retried, failed
)
ERRORS = Counter(
    "orq_whatsapp_errors_total",
    "Graph API errors by Meta error code and category",
    ["code", "category", "tenant"],
)
TOKEN_VALID = Gauge(
    "orq_whatsapp_token_valid",
    "1 after a successful send, 0 after an access-token error (190)",
    ["tenant"],  # each tenant sends with its own access token
)
