"""Every service, registered once. A new service adds its ``spec.SPEC`` here; the lists below
(and ``orquestra up``, the AsyncAPI document, the compose check, the bench's wiring) follow."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from services.enrollment.spec import SPEC as ENROLLMENT
from services.faq.spec import SPEC as FAQ
from services.gateway.spec import SPEC as GATEWAY
from services.merger.spec import SPEC as MERGER
from services.mode_router.spec import SPEC as MODE_ROUTER
from services.scheduler.spec import SPEC as SCHEDULER
from services.triage.spec import SPEC as TRIAGE
from services.trial.spec import SPEC as TRIAL
from shared.keys import Topology
from shared.spec import ServiceSpec, topology_of

_DECLARED = (GATEWAY, TRIAGE, TRIAL, FAQ, ENROLLMENT, MODE_ROUTER, MERGER, SCHEDULER)


def _with_task_streams(spec: ServiceSpec) -> ServiceSpec:
    """A router's spec with the task stream of every specialist among what it publishes."""
    if not spec.routes_to_specialists:
        return spec
    tasks = tuple(f"tasks.{s.name}" for s in _DECLARED if s.specialist)
    return replace(spec, publishes=(*spec.publishes, *tasks))


SPECS: tuple[ServiceSpec, ...] = tuple(_with_task_streams(spec) for spec in _DECLARED)
BY_NAME: dict[str, ServiceSpec] = {spec.name: spec for spec in SPECS}

SERVICES: tuple[str, ...] = tuple(spec.name for spec in SPECS)
SLICES: tuple[str, ...] = tuple(name for spec in SPECS for name in spec.slices)
SPECIALISTS: tuple[str, ...] = tuple(spec.name for spec in SPECS if spec.specialist)
# The bus: every (stream, group) pair and every stream, handed to ``Keys`` by whoever builds
# them for a process (``run_service``, the gateway, the bench, the ``orquestra`` commands).
TOPOLOGY: Topology = topology_of(SPECS)
GROUPS: tuple[tuple[str, str], ...] = TOPOLOGY.groups


def spec(name: str) -> ServiceSpec:
    """The spec of a registered service; a name nothing registered says where to add it."""
    if name not in BY_NAME:
        raise KeyError(f"no service {name!r}: add its spec.SPEC to services/registry.py")
    return BY_NAME[name]


def services_together(names: Iterable[str], *, gateway: bool, at_least: int = 1) -> tuple[str, ...]:
    """The services named to run in one process, checked, in the registry's order.

    Every command that runs services together (``python -m services``, the gateway's
    ``--with``, ``orquestra up --together``, ``orquestra bench --together``) checks its names
    here, so they refuse the same mistakes with the same words: a name nothing registered, the
    gateway where only workers run (``gateway=False``: it has its own entry point and runs the
    others with ``--with``), a name given twice, fewer than ``at_least``. The registry's order
    makes a group's label (``triage+trial``) the same whatever order it was typed in. Raises
    ``ValueError`` naming the wrong names and the allowed ones; each caller says it its way.
    """
    allowed = SERVICES if gateway else tuple(name for name in SERVICES if name != "gateway")
    named = list(names)
    kind = "service" if gateway else "worker service"
    if wrong := sorted({name for name in named if name not in allowed}):
        raise ValueError(f"no {kind} {', '.join(wrong)} (one of {', '.join(allowed)})")
    if twice := sorted({name for name in named if named.count(name) > 1}):
        raise ValueError(f"{', '.join(twice)} named twice")
    if len(named) < at_least:
        raise ValueError(f"name {at_least} or more of {', '.join(allowed)}")
    return tuple(name for name in allowed if name in named)
