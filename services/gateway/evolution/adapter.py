"""The Evolution API channel adapter: inbound webhooks, delivery through ``sendText``, health.

Inbound, the webhook request does only cheap Redis work (``TurnKeeper.ingest`` per message), so
Evolution gets its answer at once. A message the business's own number sent (``fromMe``) is
either our echo (the id ``sendText`` returned, or, when the echo beats the response, the text
of a bubble being sent to that conversation right now) or a person typing on the business phone
or WhatsApp Web: that person owns the conversation from then on (``Inbox.record_echo``, as the
WhatsApp Business app's echoes do), and the bot stays silent until the idle-return rule or
staff give it back.

Outbound, each bubble of a reply is sent once (``channels/once.py``: claimed before the
request, retried on 429/5xx, never again after a 2xx), and the id Evolution returns is
remembered as ours.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import httpx

from services.gateway.channels.base import SUPERSEDED, Delivery
from services.gateway.channels.once import Sent, holder_of
from services.gateway.channels.rest import RestChannel
from services.gateway.channels.spec import Parts
from services.gateway.channels.webhooks import Ignored, StaffEchoes, journal_once
from services.gateway.evolution.parse import (
    FromBusiness,
    Webhook,
    parse_webhook,
    split_conversation_id,
)
from services.gateway.evolution.settings import NAME, EvolutionSettings, evolution_for
from services.gateway.evolution.spec import LIMITS, PREFIX
from services.gateway.turns import MessageRefused, TurnKeeper
from shared.contracts import Reply, utcnow
from shared.durability import ReplicaAck
from shared.metrics import INBOUND
from shared.service import Runtime
from shared.state import journal_entry

TAG = "evo"
EVENTS_KEPT = 1000
# Who the staff inbox says wrote a message typed on the business phone (or WhatsApp Web).
PHONE_AGENT = "evolution-phone"
# How long a bubble being sent counts as ours by its text (an echo may beat the response).
SENDING_TTL_S = 120


def build(parts: Parts) -> Evolution:
    """The tenant's adapter (``ChannelSpec.build``)."""
    return Evolution(parts.rt, evolution_for(parts.tenant), parts.ack)


def _text_scope(conversation_id: str, text: str) -> str:
    digest = hashlib.blake2s(text.strip().encode(), digest_size=10).hexdigest()
    return f"{conversation_id}|{digest}"


def message_id_of(body: Any) -> str | None:
    """The id of the message ``sendText`` created (``key.id``)."""
    key = body.get("key") if isinstance(body, dict) else None
    found = key.get("id") if isinstance(key, dict) else None
    return found if isinstance(found, str) else None


class Evolution(RestChannel):
    name = NAME
    limits = LIMITS
    conversation_prefix = PREFIX
    tag = TAG

    def __init__(
        self, rt: Runtime, settings: EvolutionSettings, ack: ReplicaAck | None = None
    ) -> None:
        super().__init__(rt, settings, settings.url or "http://unset", ack)
        self.settings = settings
        if settings.instance and not settings.webhook_secret:
            rt.log.warning(
                "EVOLUTION_WEBHOOK_SECRET is not set: every Evolution webhook is refused"
            )

    @property
    def events_key(self) -> str:
        return self.keys.channel_global(TAG, "events")

    def serves(self, instance: str | None) -> bool:
        return instance is not None and instance in self.settings.instance

    # Outbound -------------------------------------------------------------------------------

    async def deliver(self, reply: Reply) -> Delivery:
        target = split_conversation_id(reply.conversation_id)
        problem = self._config_problem()
        if target is None:
            problem = "not an Evolution conversation id"
        if problem is not None or target is None:
            await self._note("last_error", {"message": problem, "at": utcnow().isoformat()})
            return Delivery("failed", problem or "")
        instance, number = target
        ids: list[str] = []
        for index, bubble in enumerate(reply.bubbles):
            sent = await self._send(reply, instance, number, index, bubble)
            if sent.status == SUPERSEDED:
                return Delivery(SUPERSEDED, f"bubble {index}: {sent.detail}")
            if sent.status in ("unknown", "failed"):
                return Delivery(sent.status, f"bubble {index}: {sent.detail}")
            if sent.status == "sent":
                ids.append(message_id_of(sent.body) or "?")
        if reply.bubbles and not ids:
            return Delivery("duplicate")
        return Delivery("sent", " ".join(ids))

    async def _send(
        self, reply: Reply, instance: str, number: str, index: int, bubble: str
    ) -> Sent:
        conv = reply.conversation_id
        sending = self.keys.channel_item(TAG, "sending", _text_scope(conv, bubble))
        await self.redis.set(sending, reply.turn_id, ex=SENDING_TTL_S)

        async def post() -> httpx.Response:
            return await self.http.post(
                f"/message/sendText/{instance}",
                json={"number": number, "text": bubble},
                headers={"apikey": self.settings.api_key or ""},
            )

        key = self.keys.sent(conv, reply.turn_id, index)
        sent = await self.send(key, post, message_id_of, holder_of(self.keys, reply))
        if sent.status == "sent":
            ours = message_id_of(sent.body)
            if ours:
                key = self.keys.channel_item(TAG, "ours", ours)
                await self.redis.set(key, conv, ex=self.settings.delivery_ttl_s)
            await self._note("last_success_at", utcnow().isoformat())
        elif sent.status in ("failed", "unknown"):
            error = {"message": sent.detail, "conversation_id": conv, "at": utcnow().isoformat()}
            await self._note("last_error", error)
            self.rt.log.warning(
                "evolution send failed", conversation_id=conv, turn_id=reply.turn_id, slot=index
            )
        return sent

    def _config_problem(self) -> str | None:
        if not self.settings.url:
            return "EVOLUTION_URL is not set"
        if not self.settings.api_key:
            return "EVOLUTION_API_KEY is not set"
        return None

    # Webhook --------------------------------------------------------------------------------

    async def receive(self, payload: Any, turns: TurnKeeper, staff: StaffEchoes) -> dict[str, int]:
        """Store what one webhook delivery carried; a summary of counts."""
        webhook: Webhook = parse_webhook(payload, received_at=utcnow(), tz=self.rt.tz)
        counts = {"messages": 0, "duplicates": 0, "echoes": 0, "ours": 0, "ignored": 0}
        if webhook.connection is not None:
            await self._note("connection", {**webhook.connection, "at": utcnow().isoformat()})
        for message in webhook.messages:
            try:
                fresh = await turns.ingest(message)
            except MessageRefused as refused:
                self.rt.log.warning("evolution message refused", reason=str(refused))
                detail = {"field": refused.field, "reason": refused.reason}
                await self._ignored(
                    Ignored(
                        reason="refused",
                        conversation_id=message.conversation_id,
                        message_id=message.message_id,
                        detail=detail,
                    )
                )
                counts["ignored"] += 1
                continue
            INBOUND.labels(NAME, "accepted" if fresh else "duplicate", self.rt.tenant).inc()
            counts["messages" if fresh else "duplicates"] += 1
        for echo in webhook.from_business:
            if await self._ours(echo):
                counts["ours"] += 1
            elif await staff.record_echo(
                echo.conversation_id, echo.message_id, echo.text, echo.at, PHONE_AGENT
            ):
                counts["echoes"] += 1
        for item in webhook.ignored:
            await self._ignored(item)
            counts["ignored"] += 1
        return counts

    async def _ours(self, echo: FromBusiness) -> bool:
        """Whether a ``fromMe`` message is one this adapter sent (by id, or by the text of a
        bubble it is sending to that conversation now)."""
        ours = self.keys.channel_item(TAG, "ours", echo.message_id)
        sending = self.keys.channel_item(
            TAG, "sending", _text_scope(echo.conversation_id, echo.text)
        )
        return bool(await self.redis.exists(ours) or await self.redis.exists(sending))

    async def _ignored(self, item: Ignored) -> None:
        entry = journal_entry(
            "gateway",
            None,
            "evolution.ignored",
            reason=item.reason,
            message_id=item.message_id,
            detail=item.detail,
        )
        conv = item.conversation_id
        if conv is None:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.rpush(self.events_key, entry)
                pipe.ltrim(self.events_key, -EVENTS_KEPT, -1)
                pipe.expire(self.events_key, self.settings.delivery_ttl_s)
                await pipe.execute()
            return
        await journal_once(self.rt, conv, item.message_id, entry)

    # Health and lifecycle -------------------------------------------------------------------

    async def _note(self, field: str, value: Any) -> None:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        await self.redis.hset(self.health_key, field, text)

    async def health(self) -> dict[str, Any] | None:
        s = self.settings
        configured = any((s.url, s.api_key, s.instance, s.webhook_secret))
        if not configured:
            return None
        raw = await self.redis.hgetall(self.health_key)
        problems = [p for p in (self._config_problem(),) if p]
        if not s.webhook_secret:
            problems.append("EVOLUTION_WEBHOOK_SECRET is not set: webhooks are refused")
        connection = json.loads(raw["connection"]) if "connection" in raw else None
        if connection and connection.get("state") == "close":
            problems.append(f"the instance's session is closed ({connection.get('status_reason')})")
        return {
            "status": "error" if problems else "ok",
            "problems": problems,
            "configured": {
                "url": bool(s.url),
                "api_key": bool(s.api_key),
                "instances": s.instance,
                "webhook_secret": bool(s.webhook_secret),
            },
            "connection": connection,
            "last_success_at": raw.get("last_success_at"),
            "last_error": json.loads(raw["last_error"]) if "last_error" in raw else None,
        }
