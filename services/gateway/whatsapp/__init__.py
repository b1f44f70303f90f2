"""The WhatsApp Cloud API channel of the gateway.

- ``parse``: webhook payloads → messages, statuses, ignored items (pure)
- ``signature``: X-Hub-Signature-256 and the verification handshake (pure)
- ``errors``, ``payloads``, ``notices``: error taxonomy, request bodies, self-answered turns (pure)
- ``graph``, ``records``, ``channel``: the Graph API client, Redis records, the outbound adapter
- ``gateway``: the adapter (the gateway's ``Channel`` for WhatsApp, its limits and reply window)
- ``routes``: the ``/webhooks/whatsapp`` routes
"""

from services.gateway.whatsapp.gateway import WhatsApp
from services.gateway.whatsapp.routes import router

__all__ = ["WhatsApp", "router"]
