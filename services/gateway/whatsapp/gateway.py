"""The WhatsApp channel adapter: inbound webhooks, outbound delivery, turn-start hook, health.

WhatsApp's own limits live here: a text message holds at most 4,096 characters, and a business
may send free-form messages only within 24 hours of the customer's last message (afterwards an
approved template; ``channel.py``). Ingest stores that window's expiry in the meta slice.

The webhook request does only cheap Redis work, so Meta gets its 200 fast: each message goes
through ``TurnKeeper.ingest`` (dedupe, inbox, meta slice, burst timer), each status updates its
delivery record, and everything else is journaled. Sending happens later, in egress.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from fastapi import BackgroundTasks

from services.gateway.channels.base import Delivery
from services.gateway.channels.spec import Parts
from services.gateway.channels.webhooks import Ignored, StaffEchoes, journal_once
from services.gateway.turns import MessageRefused, TurnKeeper
from services.gateway.whatsapp.channel import WhatsAppChannel
from services.gateway.whatsapp.errors import REENGAGEMENT_CODE
from services.gateway.whatsapp.graph import GraphClient
from services.gateway.whatsapp.metrics import EVENTS
from services.gateway.whatsapp.notices import notice_kinds, notice_reply, pack_config
from services.gateway.whatsapp.parse import (
    CHANNEL,
    CONVERSATION_PREFIX,
    NOT_JSON,
    StatusUpdate,
    Webhook,
    parse_webhook,
)
from services.gateway.whatsapp.records import ChannelRecords
from services.gateway.whatsapp.settings import WhatsAppSettings, whatsapp_for
from services.gateway.whatsapp.spec import LIMITS
from shared.contracts import InboundMessage, Reply, Turn, utcnow
from shared.durability import ReplicaAck
from shared.metrics import INBOUND
from shared.service import Runtime
from shared.state import journal_entry

EVENTS_KEPT = 1000
# Who the staff inbox says wrote a message sent from the WhatsApp Business app.
ECHO_AGENT = "whatsapp-app"


def build(parts: Parts) -> WhatsApp:
    """The tenant's adapter (``ChannelSpec.build``)."""
    return WhatsApp(parts.rt, whatsapp_for(parts.tenant), parts.ack)


class WhatsApp:
    name = CHANNEL
    limits = LIMITS
    conversation_prefix = CONVERSATION_PREFIX
    writes_history = False
    guards_owner = False

    def __init__(
        self, rt: Runtime, settings: WhatsAppSettings | None = None, ack: ReplicaAck | None = None
    ) -> None:
        self.rt = rt
        self.settings = settings or WhatsAppSettings()
        self.records = ChannelRecords(rt.redis, rt.keys, self.settings.delivery_ttl_s)
        self.graph = GraphClient(self.settings)
        self.channel = WhatsAppChannel(
            rt.redis,
            rt.keys,
            self.settings,
            self.graph,
            self.records,
            pack_config(rt.pack).reengagement_template,
            rt.log,
            ack=ack,
        )
        self._tasks: set[asyncio.Task[None]] = set()
        if not self.settings.app_secret:
            rt.log.warning(
                "WHATSAPP_APP_SECRET is not set: WhatsApp webhooks are accepted unsigned"
            )

    # Turn start -----------------------------------------------------------------------------

    def own_answer(self, turn: Turn) -> tuple[Reply, str] | None:
        """Called as each turn starts: WhatsApp turns may be marked read, and a turn made only
        of media, locations, reactions... is answered here instead of going to triage. Returns
        that reply with its journal entry, or None for a turn the pipeline answers."""
        if self.settings.mark_read:
            self._spawn(self.channel.mark_read(turn))
        reply = notice_reply(turn, self.rt.pack, created_at=utcnow())
        if reply is None:
            return None
        entry = journal_entry("gateway", turn.turn_id, "whatsapp.notice", kinds=notice_kinds(turn))
        return reply, entry

    def on_fragment(self, message: InboundMessage) -> None:
        """Called when a fragment ("oi", "queria saber") makes the gateway wait for the rest of
        the burst: with mark-read on, the person sees it read and "typing..." meanwhile."""
        if self.settings.mark_read:
            self._spawn(self.channel.typing(message))

    # Outbound -------------------------------------------------------------------------------

    async def deliver(self, reply: Reply) -> Delivery:
        return await self.channel.deliver(reply)

    # Webhook --------------------------------------------------------------------------------

    async def receive(
        self,
        raw: bytes,
        payload: Any,
        turns: TurnKeeper,
        staff: StaffEchoes,
        background: BackgroundTasks,
    ) -> dict[str, int]:
        """Store what one webhook delivery carried (``payload``: its body as ``parse.decode``
        gave it); a summary of counts."""
        if payload is NOT_JSON:
            webhook = Webhook(ignored=[Ignored(reason="not_json", detail={"bytes": len(raw)})])
        else:
            webhook = parse_webhook(payload, received_at=utcnow(), tz=self.rt.tz)
        counts = {"messages": 0, "duplicates": 0, "statuses": 0, "echoes": 0, "ignored": 0}
        for message in webhook.messages:
            try:
                fresh = await turns.ingest(message)
            except MessageRefused as refused:
                # Meta still gets its 200 (a retry would carry the same time): journaled only.
                self.rt.log.warning("whatsapp message refused", reason=str(refused))
                refusal = Ignored(
                    reason="refused",
                    conversation_id=message.conversation_id,
                    message_id=message.message_id,
                    detail={"field": refused.field, "reason": refused.reason, "kind": message.kind},
                )
                await self._ignored(refusal)
                counts["ignored"] += 1
                continue
            INBOUND.labels(CHANNEL, "accepted" if fresh else "duplicate", self.rt.tenant).inc()
            EVENTS.labels(f"message:{message.kind}", self.rt.tenant).inc()
            counts["messages" if fresh else "duplicates"] += 1
        for echo in webhook.echoes:
            EVENTS.labels("echo", self.rt.tenant).inc()
            if await staff.record_echo(
                echo.conversation_id, echo.message_id, echo.text, echo.at, ECHO_AGENT
            ):
                counts["echoes"] += 1
        for status in webhook.statuses:
            await self._status(status, background)
            counts["statuses"] += 1
        for item in webhook.ignored:
            await self._ignored(item)
            counts["ignored"] += 1
        return counts

    async def _status(self, status: StatusUpdate, background: BackgroundTasks) -> None:
        EVENTS.labels(f"status:{status.status}", self.rt.tenant).inc()
        await self.records.record(
            status.wamid,
            status.status,
            at=status.at.isoformat() if status.at else None,
            errors=status.errors,
            conversation_id=status.conversation_id,
            recipient_id=status.recipient_id,
            phone_number_id=status.phone_number_id,
        )
        if status.status != "failed":
            return
        record = await self.records.delivery(status.wamid)
        conv = record.get("conversation_id")
        codes = [e.get("code") for e in status.errors]
        if conv:
            await self.rt.store.append_journal(
                conv,
                journal_entry(
                    "gateway",
                    record.get("turn_id"),
                    "whatsapp.failed",
                    wamid=status.wamid,
                    errors=status.errors,
                ),
            )
        if conv and REENGAGEMENT_CODE in codes and record.get("turn_id"):
            background.add_task(
                self.channel.reengage, conv, record["turn_id"], record.get("recipient_id")
            )

    async def _ignored(self, item: Ignored) -> None:
        EVENTS.labels(f"ignored:{item.reason.split(':', 1)[0]}", self.rt.tenant).inc()
        entry = journal_entry(
            "gateway",
            None,
            "whatsapp.ignored",
            reason=item.reason,
            message_id=item.message_id,
            detail=item.detail,
        )
        if item.conversation_id is None:
            await self.records.event(entry, EVENTS_KEPT)
            return
        await journal_once(self.rt, item.conversation_id, item.message_id, entry)

    async def on_handoff(self, conversation_id: str) -> None:
        """Nothing to tell Meta: the staff inbox is where a person takes the conversation."""
        return None

    # Health and lifecycle -------------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        s = self.settings
        detail = await self.records.health()
        configured = any((s.verify_token, s.app_secret, s.access_token, s.phone_number_id))
        problems = []
        if configured and not s.access_token:
            problems.append("WHATSAPP_ACCESS_TOKEN is not set: replies cannot be sent")
        if detail["token"] == "invalid":
            problems.append("the Graph API refused the access token (190)")
        return {
            "status": "error" if problems else ("ok" if configured else "off"),
            "problems": problems,
            "configured": {
                "verify_token": bool(s.verify_token),
                "app_secret": bool(s.app_secret),
                "access_token": bool(s.access_token),
                "phone_number_id": s.phone_number_id,
            },
            **detail,
        }

    def _spawn(self, job: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.graph.aclose()
