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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel


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

    @property
    def slices(self) -> tuple[str, ...]:
        return tuple(owned.slice for owned in self.owns)

    def builder(self) -> Callable[..., Any]:
        built: Callable[..., Any] = _attribute(self.build)
        return built

    def admin_router(self) -> Any:
        """The service's staff routes (an ``APIRouter``), or None when it has none."""
        return _attribute(self.admin_api) if self.admin_api else None


def _attribute(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
