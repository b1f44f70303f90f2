"""Human handoff: who owns the conversation, kept in the meta slice and enforced here.

States: ``bot`` → ``pending_human`` (someone asked for a person; the bot keeps answering until
one takes over) → ``human`` (the bot sends nothing: inbound messages are recorded but start no
turn, and a reply still in flight is dropped) → ``bot`` again (handing back is journaled; the
bot resumes from the current state).

A ``handoff.requested`` domain event moves the conversation to ``pending_human`` and notifies
the configured webhook with a summary, so a person can pick it up.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import httpx
from structlog.typing import FilteringBoundLogger

from shared.contracts import DomainEvent
from shared.keys import Keys
from shared.lua import Scripts
from shared.state import StateStore, journal_entry

Owner = Literal["bot", "pending_human", "human"]
NOTIFY_ATTEMPTS = 3


class Handoff:
    def __init__(
        self,
        scripts: Scripts,
        keys: Keys,
        store: StateStore,
        http: httpx.AsyncClient,
        webhook_url: str | None,
        log: FilteringBoundLogger,
    ) -> None:
        self.scripts = scripts
        self.keys = keys
        self.store = store
        self.http = http
        self.webhook_url = webhook_url
        self.log = log

    async def owner(self, conversation_id: str) -> Owner:
        """Asked on every reply: reads the meta slice alone, not the whole state."""
        raw = await self.store.redis.hget(self.keys.state(conversation_id), "meta")
        return json.loads(raw).get("handoff", "bot") if raw else "bot"

    async def assign(
        self, conversation_id: str, owner: Owner, *, by: str, reason: str = ""
    ) -> dict[str, Any]:
        """Set the owner (admin API). Returns the meta slice as stored."""
        meta = await self._patch(conversation_id, {"handoff": owner, "handoff_by": by})
        await self.store.append_journal(
            conversation_id,
            journal_entry("gateway", None, f"handoff.{owner}", by=by, reason=reason),
        )
        self.log.info("handoff owner changed", conversation_id=conversation_id, owner=owner)
        return meta

    async def on_event(self, body: bytes) -> None:
        event = DomainEvent.model_validate_json(body)
        if event.type != "handoff.requested":
            return
        # Only a bot-owned conversation becomes pending: a human who already owns it keeps it.
        meta = await self.scripts.meta_patch(
            keys=[self.keys.state(event.conversation_id)],
            args=[
                json.dumps({"handoff": "pending_human", "waiting_since": event.at.isoformat()}),
                "handoff",
                "bot",
            ],
        )
        if meta is None:
            return
        await self.store.append_journal(
            event.conversation_id,
            journal_entry("gateway", event.turn_id, "handoff.pending_human", **event.data),
        )
        await self._notify(event)

    async def _patch(self, conversation_id: str, patch: dict[str, Any]) -> dict[str, Any]:
        raw = await self.scripts.meta_patch(
            keys=[self.keys.state(conversation_id)], args=[json.dumps(patch), "", ""]
        )
        return json.loads(raw)

    async def _notify(self, event: DomainEvent) -> None:
        if not self.webhook_url:
            return
        snapshot = await self.store.load(event.conversation_id)
        journal = await self.store.journal(event.conversation_id)
        messages = [m for e in journal if e["event"] == "turn.started" for m in e["messages"]]
        payload = {
            "type": "handoff.requested",
            "conversation_id": event.conversation_id,
            "at": event.at.isoformat(),
            "reason": event.data,
            "summary": {"trial": snapshot.get("trial"), "last_messages": messages[-10:]},
        }
        for attempt in range(1, NOTIFY_ATTEMPTS + 1):
            try:
                response = await self.http.post(self.webhook_url, json=payload)
                response.raise_for_status()
                outcome = "sent"
                break
            except httpx.HTTPError as exc:
                outcome = f"failed: {type(exc).__name__}"
                self.log.warning("handoff webhook failed", attempt=attempt, error=repr(exc))
                await asyncio.sleep(0.5 * attempt)
        await self.store.append_journal(
            event.conversation_id,
            journal_entry("gateway", event.turn_id, "handoff.notified", outcome=outcome),
        )
