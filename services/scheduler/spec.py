"""The scheduler: reminders and follow-ups, the funnel's counters."""

from shared.spec import Consumes, ServiceSpec

SPEC = ServiceSpec(
    name="scheduler",
    build="services.scheduler.app:build",
    consumes=(
        Consumes("events", "scheduler"),
        Consumes("funnel.steps", "funnel"),
    ),
    publishes=("outbound",),
    in_process=False,
    needs_section="reminders",
    pack=(
        ("reminders", "services.scheduler.config:load_reminders"),
        ("funnel", "shared.funnel:FunnelConfig"),
    ),
)
