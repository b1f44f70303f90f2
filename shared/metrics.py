"""Prometheus metrics shared by every service.

Every series of one business's work carries a ``tenant`` label (``shared/tenants.py``): the
tenant's id, or "" for a deployment of one (Prometheus shows no value then). Only what belongs
to the deployment as a whole (live consumers; the lag of the shared streams, ``shared/lag.py``)
has none.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

HANDLED = Counter(
    "orq_messages_handled_total",
    "Bus messages handled",
    ["service", "stream", "outcome", "tenant"],
)
LATENCY = Histogram(
    "orq_handler_seconds",
    "Handler latency",
    ["service", "stream", "tenant"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
DEAD_LETTERS = Counter(
    "orq_dead_letters_total", "Messages moved to the DLQ", ["service", "stream", "tenant"]
)
TAKEN_ON_WRITE = Counter(
    "orq_taken_on_write_total",
    "Bus messages a commit read for a subscription of its own process (no delivery of their own)",
    ["service", "stream", "tenant"],
)
TURNS_STARTED = Counter("orq_turns_started_total", "Turns started by the gateway", ["tenant"])
REPLIES = Counter("orq_replies_total", "Replies delivered", ["channel", "outcome", "tenant"])
INBOUND = Counter("orq_inbound_total", "Inbound messages", ["channel", "outcome", "tenant"])
LIVE_SERVICES = Gauge("orq_live_consumers", "Live consumers per service", ["service"])
LLM_CALLS = Counter("orq_llm_calls_total", "LLM calls", ["service", "outcome", "tenant"])
FUNNEL_STEPS = Counter("orq_funnel_steps_total", "Funnel steps counted", ["step", "tenant"])
SCHEDULED = Counter(
    "orq_scheduled_total", "Scheduled messages by outcome", ["kind", "outcome", "tenant"]
)
