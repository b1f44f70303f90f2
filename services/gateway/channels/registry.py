"""Every channel the gateway can serve: one line each (its folder's ``spec.py`` says the rest).

Adding a channel is a folder and a line here (``docs/architecture/add-a-channel.md``); the
gateway's app, auth, the tenants file, the API's text bound and ``orquestra tenants`` read
what they need from these specs and name no channel.
"""

from __future__ import annotations

from collections.abc import Iterable

from services.gateway.channels.spec import ChannelSpec, load
from shared.tenants import Sections, Tenant

# The module of each channel's ``SPEC``: a channel is registered by its line here.
CHANNELS: tuple[ChannelSpec, ...] = tuple(
    load(f"{module}:SPEC")
    for module in (
        "services.gateway.channels.http",
        "services.gateway.channels.console",
        "services.gateway.whatsapp.spec",
        "services.gateway.evolution.spec",
        "services.gateway.chatwoot.spec",
    )
)

# Each channel's part of a tenant's entry in tenants.yaml, by channel name.
SECTIONS: Sections = {spec.name: spec.tenant for spec in CHANNELS if spec.tenant is not None}
# Text a person writes over HTTP, or staff send through any channel, fits every channel.
MAX_TEXT = min(spec.limits.max_text for spec in CHANNELS)
# The pack sections the channels read (the gateway's service spec validates them).
PACK_SECTIONS = tuple(spec.pack for spec in CHANNELS if spec.pack is not None)


def of_conversation(conversation_id: str) -> ChannelSpec | None:
    """The channel whose conversation ids start with its prefix (the longest that fits)."""
    fits = [spec for spec in CHANNELS if spec.owns(conversation_id)]
    return max(fits, key=lambda spec: len(spec.conversation_prefix), default=None)


def routes_of(tenant: Tenant) -> Iterable[tuple[str, str]]:
    """(channel, route id) of every id in a tenant's channel sections that routes a webhook
    to it (``Deployment.of_routes``)."""
    for name, section in tenant.channels.items():
        spec = SECTIONS.get(name)
        for route in spec.routes(section) if spec else ():
            yield name, route
