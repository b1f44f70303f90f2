"""Every service, registered once. A new service adds its ``spec.SPEC`` here; the lists below
(and ``orquestra up``, the AsyncAPI document, the compose check, the bench's wiring) follow."""

from __future__ import annotations

from services.faq.spec import SPEC as FAQ
from services.gateway.spec import SPEC as GATEWAY
from services.merger.spec import SPEC as MERGER
from services.mode_router.spec import SPEC as MODE_ROUTER
from services.scheduler.spec import SPEC as SCHEDULER
from services.triage.spec import SPEC as TRIAGE
from services.trial.spec import SPEC as TRIAL
from shared.spec import ServiceSpec

SPECS: tuple[ServiceSpec, ...] = (GATEWAY, TRIAGE, TRIAL, FAQ, MODE_ROUTER, MERGER, SCHEDULER)
BY_NAME: dict[str, ServiceSpec] = {spec.name: spec for spec in SPECS}

SERVICES: tuple[str, ...] = tuple(spec.name for spec in SPECS)
SLICES: tuple[str, ...] = tuple(name for spec in SPECS for name in spec.slices)
SPECIALISTS: tuple[str, ...] = tuple(spec.name for spec in SPECS if spec.specialist)
GROUPS: tuple[tuple[str, str], ...] = tuple(
    (consumed.stream, consumed.group) for spec in SPECS for consumed in spec.consumes
)


def spec(name: str) -> ServiceSpec:
    """The spec of a registered service; a name nothing registered says where to add it."""
    if name not in BY_NAME:
        raise KeyError(f"no service {name!r}: add its spec.SPEC to services/registry.py")
    return BY_NAME[name]
