"""The WhatsApp Cloud API channel, as the gateway's channel registry reads it."""

from datetime import timedelta

from services.gateway.channels.base import Limits
from services.gateway.channels.spec import ChannelSpec
from services.gateway.whatsapp.parse import CHANNEL, CONVERSATION_PREFIX
from services.gateway.whatsapp.settings import WhatsAppTenant, numbers_of
from shared.tenants import TenantSection

# A text message holds at most 4,096 characters; a business may send free-form messages only
# within 24 hours of the customer's last message (afterwards an approved template).
LIMITS = Limits(max_text=4096, reply_window=timedelta(hours=24))

SPEC = ChannelSpec(
    name=CHANNEL,
    conversation_prefix=CONVERSATION_PREFIX,
    limits=LIMITS,
    build="services.gateway.whatsapp.gateway:build",
    routes="services.gateway.whatsapp.routes:router",
    tenant=TenantSection(WhatsAppTenant, numbers_of, "WhatsApp number"),
    pack=("whatsapp", "services.gateway.whatsapp.notices:WhatsAppPack"),
    # A WhatsApp conversation is a real person's phone: nobody writes into it over HTTP as
    # them; staff answer through the inbox's agent messages.
    http_writes=False,
)
