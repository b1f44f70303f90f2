"""Triage: which specialists a turn needs."""

from services.triage.memory import MemoryState
from services.triage.models import TriageState
from shared.spec import Consumes, Owns, ServiceSpec

SPEC = ServiceSpec(
    name="triage",
    build="services.triage.app:build",
    consumes=(Consumes("turns", "triage"),),
    owns=(Owns("triage", TriageState), Owns("memory", MemoryState)),
    publishes=("merge", "outbound", "funnel.steps"),
    routes_to_specialists=True,
    pack=(("triage", "services.triage.app:load_routed_config"),),
    journal="services.triage.journal:JOURNAL",
)
