"""The Evolution API channel: WhatsApp through an Evolution API instance (a phone's session).

- ``spec``: the channel as the registry reads it (name, ``evo:`` ids, limits, tenant section)
- ``settings``: the ``EVOLUTION_*`` settings and a tenant's ``evolution:`` section
- ``numbers``: Brazilian mobile numbers with or without the ninth digit are one person (pure)
- ``parse``: webhook bodies → messages, a person's messages from the business phone, ignored
  items (pure)
- ``auth``: the webhook's ``jwt_key`` bearer or ``X-Webhook-Token`` (pure)
- ``adapter``: the gateway's ``Channel``: receive, deliver through ``sendText``, health
- ``routes``: ``POST /webhooks/evolution``
"""
