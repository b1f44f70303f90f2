"""The Chatwoot Agent Bot channel: the bot answers an inbox of a business's Chatwoot, where its
team takes conversations over.

- ``spec``: the channel as the registry reads it (name, ``cw:`` ids, limits, tenant section)
- ``settings``: the ``CHATWOOT_*`` settings and a tenant's ``chatwoot:`` section
- ``signature``: ``X-Chatwoot-Signature`` over ``"{timestamp}.{raw body}"`` (pure)
- ``parse``: webhook bodies → a customer's message, an agent's message, an ownership change, or
  an ignored item (pure)
- ``adapter``: the gateway's ``Channel``: receive, deliver through the messages API, hand over
  with ``toggle_status``, health
- ``routes``: ``POST /webhooks/chatwoot``
"""
