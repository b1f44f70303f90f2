"""The WhatsApp pack section, and the turns the channel answers itself (``channels/notices.py``:
only media, locations, contacts, reactions...)."""

from __future__ import annotations

from pydantic import BaseModel

from services.gateway.channels.notices import notice_kinds, notice_reply
from services.gateway.whatsapp.payloads import Template
from shared.pack import Pack

__all__ = ["WhatsAppPack", "notice_kinds", "notice_reply", "pack_config"]


class WhatsAppPack(BaseModel):
    """Pack section ``whatsapp``."""

    reengagement_template: Template | None = None


def pack_config(pack: Pack) -> WhatsAppPack:
    return pack.section("whatsapp", WhatsAppPack) if pack.has("whatsapp") else WhatsAppPack()
