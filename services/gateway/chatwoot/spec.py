"""The Chatwoot Agent Bot channel, as the gateway's channel registry reads it."""

from services.gateway.channels.base import Limits
from services.gateway.channels.spec import ChannelSpec
from services.gateway.chatwoot.settings import NAME, ChatwootTenant, accounts_of
from shared.tenants import TenantSection

PREFIX = "cw:"
# One message of the inbox's channel (a WhatsApp inbox's bound); Chatwoot keeps its channels'
# own windows (a WhatsApp inbox refuses free-form messages after 24 hours itself).
LIMITS = Limits(max_text=4096)

SPEC = ChannelSpec(
    name=NAME,
    conversation_prefix=PREFIX,
    limits=LIMITS,
    build="services.gateway.chatwoot.adapter:build",
    routes="services.gateway.chatwoot.routes:router",
    tenant=TenantSection(ChatwootTenant, accounts_of, "Chatwoot account"),
    # Customers write in Chatwoot's inbox; staff answer there (or through our inbox).
    http_writes=False,
)
