"""What a service declares about itself, once: ``services/<name>/spec.py`` exports a
:class:`ServiceSpec` and ``services/registry.py`` lists them. Everything that used to be listed
by hand (the services, the state slices, who consumes what, ``orquestra up``'s processes, the
AsyncAPI document, the compose check, the bench's wiring) is derived from the specs.

Streams are named as :meth:`shared.keys.Keys.stream` takes them (``"turns"``,
``"tasks.trial"``...). This module imports nothing from ``services/``: the registry is passed
to shared code that needs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel

from shared.explain import JournalExplainer
from shared.keys import Keys, Topology
from shared.pack import Pack


@dataclass(frozen=True)
class Consumes:
    """One subscription: a stream (as ``Keys.stream`` names it) read by one consumer group."""

    stream: str
    group: str


@dataclass(frozen=True)
class Owns:
    """A state slice the service alone writes, and its model (``None``: written by a script)."""

    slice: str
    model: type[BaseModel] | None = None


class PersonalRecords(Protocol):
    """A service's records about a person kept outside the conversation's own keys (which
    erasure finds by their hash tag): the gateway's export lists them and its erase unlinks
    them from the person, for every service whose spec names them."""

    async def of_conversation(self, conversation_id: str) -> list[dict[str, Any]]: ...

    async def anonymize(self, conversation_id: str, *, now: datetime) -> list[str]: ...


@dataclass(frozen=True)
class ServiceSpec:
    """A service: its name, what it reads, the slices it owns, what it publishes, its build."""

    name: str
    build: str  # "package.module:function", imported only when the service is built
    consumes: tuple[Consumes, ...] = ()
    owns: tuple[Owns, ...] = ()
    publishes: tuple[str, ...] = ()
    specialist: bool = False  # triage routes turns to it on ``tasks.<name>``
    # It publishes ``tasks.<name>`` for every specialist (the registry adds those streams).
    routes_to_specialists: bool = False
    in_process: bool = True  # wired by the bench's single-process pipeline
    # "package.module:attribute" of a FastAPI ``APIRouter`` for staff, which the gateway
    # mounts behind the admin token; its handlers take ``redis`` and ``keys`` with
    # ``deps: AppDepends`` (``shared/deps.py``). The data stays the service's; the gateway only
    # serves it.
    admin_api: str | None = None
    # The pack sections it reads, each with how it validates it at start-up: (section,
    # "package.module:attribute"), the attribute a function of the pack or a pydantic model of
    # the section. ``orquestra pack check`` runs exactly these.
    pack: tuple[tuple[str, str], ...] = ()
    # The pack section that gives the service its work (trial classes, enrollment plans): a
    # pack without it leaves the service out of that pack's turns. The service then starts and
    # idles (heartbeat, no subscriptions), and triage refuses a route to it.
    needs_section: str | None = None
    # "package.module:attribute" of the ``shared.explain.JournalExplainer`` that says how the
    # service's journal events read (``orquestra explain``).
    journal: str | None = None
    # "package.module:attribute" of a factory ``(redis, keys) -> PersonalRecords`` when the
    # service keeps records about a person outside the conversation's keys.
    personal_records: str | None = None

    @property
    def slices(self) -> tuple[str, ...]:
        return tuple(owned.slice for owned in self.owns)

    def builder(self) -> Callable[..., Any]:
        built: Callable[..., Any] = _attribute(self.build)
        return built

    def admin_router(self) -> Any:
        """The service's staff routes (an ``APIRouter``), or None when it has none."""
        return _attribute(self.admin_api) if self.admin_api else None

    def explainer(self) -> JournalExplainer | None:
        found: JournalExplainer | None = _attribute(self.journal) if self.journal else None
        return found

    def records_of(self, redis: Any, keys: Keys) -> PersonalRecords | None:
        """The service's personal records store, or None when it keeps none."""
        if not self.personal_records:
            return None
        found: PersonalRecords = _attribute(self.personal_records)(redis, keys)
        return found

    def out_of(self, pack: Pack) -> bool:
        """Whether ``pack`` lacks the section that gives the service its work."""
        return self.needs_section is not None and not pack.has(self.needs_section)

    def pack_validators(self) -> dict[str, Callable[[Pack], object]]:
        """Section → the call that validates it (the one the service makes at start-up)."""
        return {section: _validator(section, path) for section, path in self.pack}


def _validator(section: str, path: str) -> Callable[[Pack], object]:
    target = _attribute(path)
    if isinstance(target, type) and issubclass(target, BaseModel):
        model = target
        return lambda pack: pack.section(section, model)
    validate: Callable[[Pack], object] = target
    return validate


def _attribute(path: str) -> Any:
    """``"package.module:name"`` or ``"package.module:Class.method"``, imported."""
    module, _, name = path.partition(":")
    found: Any = importlib.import_module(module)
    for part in name.split("."):
        found = getattr(found, part)
    return found


def topology_of(specs: Iterable[ServiceSpec]) -> Topology:
    """The bus the services declare: what they consume (the groups created up front) and
    every stream they name."""
    specs = tuple(specs)
    groups = tuple((c.stream, c.group) for spec in specs for c in spec.consumes)
    named = [*(stream for stream, _ in groups), *(s for spec in specs for s in spec.publishes)]
    return Topology(groups=groups, streams=tuple(dict.fromkeys(named)))
