"""The Chatwoot Agent Bot adapter: inbound webhooks, replies through the messages API, handoff
through ``toggle_status``, health.

Chatwoot turns a bot off (moves its conversations to ``open``) when the bot's webhook answers
in more than 5 s, so a webhook does only cheap Redis work (``TurnKeeper.ingest``) and is
answered at once; the turn is taken and answered later, through egress.

Who owns a conversation follows Chatwoot's status: ``pending`` is the bot's, ``open`` a
person's. An agent's message or the conversation becoming ``open`` makes it human-owned here
(the bot stays silent, and a reply still in flight is dropped by egress); the conversation back
to ``pending`` (staff, or a ``resolved`` one reopened by the customer, which Chatwoot reopens
as ``pending`` for a bot's inbox) gives it back to the bot. When the bot itself hands over
(``handoff.requested``: asked for a person, an upset customer...), its reply says so and the
adapter moves the conversation to ``open``, where Chatwoot's team sees it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

from services.gateway.channels.base import SUPERSEDED, Delivery
from services.gateway.channels.once import holder_of
from services.gateway.channels.rest import RestChannel
from services.gateway.channels.spec import Parts
from services.gateway.channels.webhooks import Ignored, StaffEchoes, journal_once
from services.gateway.chatwoot.parse import (
    OWN_MESSAGE,
    Customer,
    Event,
    Ownership,
    parse_event,
)
from services.gateway.chatwoot.parse import split_conversation_id as split
from services.gateway.chatwoot.settings import NAME, ChatwootSettings, chatwoot_for
from services.gateway.chatwoot.spec import LIMITS, PREFIX
from services.gateway.handoff import Handoff
from services.gateway.turns import MessageRefused, TurnKeeper
from shared.contracts import Reply, utcnow
from shared.durability import ReplicaAck
from shared.metrics import INBOUND
from shared.service import Runtime
from shared.state import journal_entry

TAG = "cw"
# Who the handoff journal says changed the owner when Chatwoot's status did.
STATUS_AGENT = f"{NAME}:status"


def build(parts: Parts) -> Chatwoot:
    """The tenant's adapter (``ChannelSpec.build``)."""
    return Chatwoot(parts.rt, chatwoot_for(parts.tenant), parts.ack)


def message_id_of(body: Any) -> str | None:
    found = body.get("id") if isinstance(body, dict) else None
    return str(found) if isinstance(found, int | str) else None


class Chatwoot(RestChannel):
    name = NAME
    limits = LIMITS
    conversation_prefix = PREFIX
    tag = TAG

    def __init__(
        self, rt: Runtime, settings: ChatwootSettings, ack: ReplicaAck | None = None
    ) -> None:
        # Without a URL the channel is off (``settings.on``); the client still needs a base.
        super().__init__(rt, settings, settings.url or "http://chatwoot.invalid", ack)
        self.settings = settings

    def delivery_key(self, delivery: str) -> str:
        return self.keys.channel_item(TAG, "delivery", delivery)

    # Outbound -------------------------------------------------------------------------------

    async def deliver(self, reply: Reply) -> Delivery:
        target = split(reply.conversation_id)
        if target is None:
            return Delivery("failed", "not a Chatwoot conversation id")
        account, conversation = target
        ids: list[str] = []
        for index, bubble in enumerate(reply.bubbles):

            async def post(text: str = bubble) -> httpx.Response:
                return await self.http.post(
                    f"/api/v1/accounts/{account}/conversations/{conversation}/messages",
                    json={"content": text, "message_type": "outgoing"},
                    headers=self._auth,
                )

            key = self.keys.sent(reply.conversation_id, reply.turn_id, index)
            sent = await self.send(key, post, message_id_of, holder_of(self.keys, reply))
            if sent.status == SUPERSEDED:
                return Delivery(SUPERSEDED, f"bubble {index}: {sent.detail}")
            if sent.status in ("failed", "unknown"):
                await self._note_error(sent.detail, reply.conversation_id)
                return Delivery(sent.status, f"bubble {index}: {sent.detail}")
            if sent.status == "sent":
                ids.append(message_id_of(sent.body) or "?")
                await self._note("last_success_at", utcnow().isoformat())
        if reply.bubbles and not ids:
            return Delivery("duplicate")
        return Delivery("sent", " ".join(ids))

    async def on_handoff(self, conversation_id: str) -> None:
        """The bot hands over: the conversation becomes ``open`` in Chatwoot (its team's)."""
        target = split(conversation_id)
        if target is None or not self.settings.on:
            return
        account, conversation = target

        async def post() -> httpx.Response:
            return await self.http.post(
                f"/api/v1/accounts/{account}/conversations/{conversation}/toggle_status",
                json={"status": "open"},
                headers=self._auth,
            )

        # Toggling to open twice is harmless: each handoff gets its own slot, retried alone.
        slot = self.keys.sent(conversation_id, f"handoff-{uuid.uuid4().hex}", 0)
        sent = await self.send(slot, post, lambda _: "open")
        await self.rt.store.append_journal(
            conversation_id,
            journal_entry("gateway", None, "chatwoot.toggled", status="open", outcome=sent.status),
        )
        if sent.status != "sent":
            await self._note_error(f"toggle_status: {sent.detail}", conversation_id)

    @property
    def _auth(self) -> dict[str, str]:
        return {"api_access_token": self.settings.bot_token or ""}

    # Webhook --------------------------------------------------------------------------------

    async def seen(self, delivery: str | None) -> bool:
        """Whether this delivery (``X-Chatwoot-Delivery``) was handled already."""
        return bool(delivery) and bool(await self.redis.exists(self.delivery_key(str(delivery))))

    async def receive(
        self,
        payload: Any,
        delivery: str | None,
        turns: TurnKeeper,
        staff: StaffEchoes,
        handoff: Handoff,
    ) -> dict[str, int]:
        """Store what one webhook delivery carried; a summary of counts. The delivery id is
        remembered once everything is stored, so a redelivery after a failure is handled."""
        event: Event = parse_event(payload, received_at=utcnow(), tz=self.rt.tz)
        counts = {
            "messages": 0,
            "duplicates": 0,
            "agents": 0,
            "ownership": 0,
            "ours": 0,
            "ignored": 0,
        }
        if event.customer is not None:
            fresh = await self._customer(event.customer, turns, handoff)
            counts["messages" if fresh else "duplicates"] += 1
        if event.agent is not None:
            agent = event.agent
            if await staff.record_echo(
                agent.conversation_id, agent.message_id, agent.text, agent.at, agent.agent
            ):
                counts["agents"] += 1
        if event.ownership is not None and await self._ownership(event.ownership, handoff):
            counts["ownership"] += 1
        for item in event.ignored:
            if item.reason == OWN_MESSAGE:  # every reply comes back: counted, not journaled
                counts["ours"] += 1
                continue
            await self._ignored(item)
            counts["ignored"] += 1
        if delivery:
            await self.redis.set(self.delivery_key(delivery), "1", ex=self.rt.settings.dedupe_ttl_s)
        return counts

    async def _customer(self, customer: Customer, turns: TurnKeeper, handoff: Handoff) -> bool:
        """A customer's message: a turn while the conversation is the bot's (``pending``),
        recorded only while a person owns it (``open``)."""
        message = customer.message
        conv = message.conversation_id
        owner = await handoff.owner(conv)
        if customer.owned_by_bot and owner == "human":
            await handoff.assign(conv, "bot", by=STATUS_AGENT, reason="pending")
        elif not customer.owned_by_bot and owner != "human":
            await handoff.assign(conv, "human", by=customer.agent or STATUS_AGENT, reason="open")
        try:
            fresh = await turns.ingest(message)
        except MessageRefused as refused:
            self.rt.log.warning("chatwoot message refused", reason=str(refused))
            await self._ignored(
                Ignored(reason="refused", conversation_id=conv, message_id=message.message_id)
            )
            return False
        INBOUND.labels(NAME, "accepted" if fresh else "duplicate", self.rt.tenant).inc()
        return fresh

    async def _ownership(self, change: Ownership, handoff: Handoff) -> bool:
        """``open``: a person's; ``pending``: the bot's again; other statuses change nothing
        (a resolved conversation reopened by the customer comes back ``pending``)."""
        conv = change.conversation_id
        owner = await handoff.owner(conv)
        if change.status == "open" and owner != "human":
            await handoff.assign(conv, "human", by=change.agent or STATUS_AGENT, reason="open")
            return True
        if change.status == "pending" and owner == "human":
            await handoff.assign(conv, "bot", by=STATUS_AGENT, reason="pending")
            return True
        return False

    async def _ignored(self, item: Ignored) -> None:
        conv = item.conversation_id
        if conv is None:
            return
        entry = journal_entry(
            "gateway", None, "chatwoot.ignored", reason=item.reason, message_id=item.message_id
        )
        once = f"ignored-{item.message_id}" if item.message_id else None
        await journal_once(self.rt, conv, once, entry)

    # Health and lifecycle -------------------------------------------------------------------

    async def _note(self, field: str, value: str) -> None:
        await self.redis.hset(self.health_key, field, value)

    async def _note_error(self, detail: str, conversation_id: str) -> None:
        error = {"message": detail, "conversation_id": conversation_id, "at": utcnow().isoformat()}
        await self._note("last_error", json.dumps(error, ensure_ascii=False))
        self.rt.log.warning("chatwoot request failed", conversation_id=conversation_id)

    async def health(self) -> dict[str, Any] | None:
        s = self.settings
        if not any((s.url, s.bot_token, s.webhook_secret)):
            return None
        raw = await self.redis.hgetall(self.health_key)
        problems = []
        if not s.on:
            problems.append("CHATWOOT_URL and CHATWOOT_BOT_TOKEN are both needed")
        return {
            "status": "error" if problems else "ok",
            "problems": problems,
            "configured": {
                "url": bool(s.url),
                "bot_token": bool(s.bot_token),
                "webhook_secret": bool(s.webhook_secret),
            },
            "last_success_at": raw.get("last_success_at"),
            "last_error": json.loads(raw["last_error"]) if "last_error" in raw else None,
        }
