"""The Evolution API channel, as the gateway's channel registry reads it."""

from services.gateway.channels.base import Limits
from services.gateway.channels.spec import ChannelSpec
from services.gateway.evolution.settings import NAME, EvolutionTenant, instances_of
from shared.tenants import TenantSection

PREFIX = "evo:"
# One WhatsApp text message; an unofficial session has no 24-hour rule of Meta's to keep.
LIMITS = Limits(max_text=4096)

SPEC = ChannelSpec(
    name=NAME,
    conversation_prefix=PREFIX,
    limits=LIMITS,
    build="services.gateway.evolution.adapter:build",
    routes="services.gateway.evolution.routes:router",
    tenant=TenantSection(EvolutionTenant, instances_of, "Evolution instance"),
    # A real person's phone: staff answer through the inbox (or the phone itself).
    http_writes=False,
)
