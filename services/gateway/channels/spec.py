"""What a channel declares about itself, once, in its own folder (``<folder>/spec.py``).

A channel is one folder and one line in ``registry.py``. Its ``ChannelSpec`` says everything the
rest of the gateway asks about it, so nothing outside the folder names it:

- ``name`` (the ``channel`` of its messages and replies) and ``conversation_prefix`` (its
  conversation ids start with it; "" for a channel that takes any id);
- ``limits`` (the longest text of one message, its reply window);
- ``build``: ``module:function`` making its adapter (a ``Channel``) for one tenant from
  ``Parts``; the adapter delivers, answers turns itself, reports health, hands over;
- ``routes``: ``module:router`` of its inbound webhooks, mounted by the gateway's app;
- ``tenant``: its part of a tenant's entry in ``tenants.yaml`` (``shared.tenants.TenantSection``:
  the model, and the ids in it that route a webhook to its tenant);
- ``pack``: its pack section, if it reads one (``section``, ``module:Model``);
- ``http_writes``: whether ``POST /v1/messages`` may write into its conversations as the person
  (False for a channel whose conversations are real people on another network: staff answer
  there through the inbox's agent messages).

Functions and routers are named by import path, like a service spec's ``build``: the registry
is read by light code (the gateway's service spec, ``orquestra tenants``), which must not import
every channel's HTTP client.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from services.gateway.channels.base import Limits
from shared.durability import ReplicaAck
from shared.tenants import TenantSection

if TYPE_CHECKING:
    from fastapi import APIRouter

    from services.gateway.channels.base import Channel
    from services.gateway.history import History
    from shared.service import Runtime
    from shared.tenants import Tenant


@dataclass(frozen=True)
class Parts:
    """What a channel's ``build`` gets: the tenant's runtime, its history, the tenant, and the
    replicas a delivery claim waits for before the reply goes out (``shared/durability.py``)."""

    rt: Runtime
    history: History
    tenant: Tenant
    ack: ReplicaAck = field(default_factory=ReplicaAck)


def load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class ChannelSpec:
    name: str
    conversation_prefix: str
    limits: Limits
    build: str
    routes: str | None = None
    tenant: TenantSection | None = None
    pack: tuple[str, str] | None = None
    http_writes: bool = True

    def make(self, parts: Parts) -> Channel:
        adapter: Channel = load(self.build)(parts)
        return adapter

    def router(self) -> APIRouter | None:
        return load(self.routes) if self.routes else None

    def owns(self, conversation_id: str) -> bool:
        """Whether ``conversation_id`` is one of this channel's (a prefix of its own)."""
        return bool(self.conversation_prefix) and conversation_id.startswith(
            self.conversation_prefix
        )
