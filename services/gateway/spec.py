"""The gateway: channels in and out, turns, handoff; owns the ``meta`` slice (written by its
Lua scripts)."""

from services.gateway.channels.registry import PACK_SECTIONS
from shared.spec import Consumes, Owns, ServiceSpec

SPEC = ServiceSpec(
    name="gateway",
    build="services.gateway.app:build",
    consumes=(Consumes("outbound", "gateway"), Consumes("events", "gateway")),
    owns=(Owns("meta"),),
    publishes=("turns", "commands.trial"),
    in_process=False,
    pack=(
        *PACK_SECTIONS,
        ("inbox", "services.gateway.summary:InboxConfig"),
    ),
    journal="services.gateway.journal:JOURNAL",
)
