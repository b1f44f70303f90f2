"""The outbound WhatsApp adapter: a composed reply becomes Graph API messages, each at most once.

Every bubble (and the re-engagement template) is claimed under ``keys.sent(conv, turn, i)``
before it is sent, across replicas and redeliveries:

- ``pending:<token>`` while one sender works on it (a short TTL, refreshed per attempt, so a
  sender that died mid-request frees it); another sender meeting it raises
  :class:`DeliveryInFlight` and the bus delivers the reply again later;
- ``sent:<wamid>`` or ``failed:<code>`` once decided, kept for ``WHATSAPP_DELIVERY_TTL_S``.

Bubbles go out strictly in order: a bubble that failed stops the rest, and a redelivered reply
skips what is decided and stops at a failure too. Throttling (130429, 131056, 80007, 4) and
transient errors are retried in place with jittered exponential backoff, pacing the business
number or the (number, recipient) pair for every replica; after ``WHATSAPP_SEND_ATTEMPTS`` the
message is recorded as failed. 131047 (outside the 24-hour window) is never retried: the reply
is replaced by the pack's re-engagement template when one is configured, whether the error comes
in the send's response, in a ``failed`` status webhook (``WhatsApp._status``), or in a status
that beat the send's response (the record is already ``failed`` with 131047 when the send
records its wamid: the status path could not know the turn yet, so the send sends the template).
The window is also checked beforehand from the conversation's meta slice (``window_expires_at``,
written by ingest from the provider timestamps), so a reply known to be too late goes straight
to the template.
The window is Meta's machinery, measured in real time, hence the wall clock here.
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from redis.asyncio import Redis

from services.gateway.channels.base import SUPERSEDED, Delivery
from services.gateway.channels.once import Holder, claim, holder_of
from services.gateway.whatsapp.errors import (
    PAIR_THROTTLING_CODES,
    REENGAGEMENT_CODE,
    Category,
    GraphError,
    backoff_s,
)
from services.gateway.whatsapp.graph import GraphClient
from services.gateway.whatsapp.metrics import ERRORS, SENDS
from services.gateway.whatsapp.parse import split_conversation_id
from services.gateway.whatsapp.payloads import (
    Template,
    read_receipt,
    sent_message_id,
    template_message,
    text_message,
)
from services.gateway.whatsapp.records import ChannelRecords
from services.gateway.whatsapp.settings import WhatsAppSettings
from shared.contracts import InboundMessage, Reply, Turn, utcnow
from shared.durability import ReplicaAck
from shared.keys import Keys

# Conversations whose last marked-read message is remembered (the oldest forgotten first).
MARKED_KEPT = 10_000

RETRYABLE = frozenset({Category.THROTTLED, Category.TRANSIENT})
TEMPLATE_SLOT = "template"
UNKNOWN_DETAIL = "an earlier attempt died mid-request; not sent again (it may have arrived)"


class DeliveryInFlight(RuntimeError):
    """Another sender holds this bubble right now; the bus will deliver the reply again."""


@dataclass(frozen=True)
class Target:
    """Who sends (business number) to whom, for one conversation."""

    phone_number_id: str
    recipient: str
    conversation_id: str

    @property
    def pair(self) -> str:
        return f"{self.phone_number_id}:{self.recipient}"


@dataclass(frozen=True)
class Outcome:
    """What happened to one claimed slot (a bubble or the template)."""

    status: str  # "sent" | "duplicate" | "failed_before" | "failed" | "unknown" | "superseded"
    wamid: str | None = None
    error: GraphError | None = None
    # Sent, but a failed status with 131047 for this wamid arrived before the send's response.
    reengage: bool = False


def target_of(conversation_id: str, to: str | None, default_number: str | None) -> Target | None:
    """The conversation id names the business number that received the person's messages."""
    parts = split_conversation_id(conversation_id)
    number = parts[0] if parts else default_number
    recipient = to or (parts[1] if parts else None)
    if not number or not recipient:
        return None
    return Target(number, recipient, conversation_id)


class WhatsAppChannel:
    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        settings: WhatsAppSettings,
        graph: GraphClient,
        records: ChannelRecords,
        template: Template | None,
        log: Any,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        jitter: Callable[[], float] = random.random,
        ack: ReplicaAck | None = None,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.ack = ack or ReplicaAck()
        self.settings = settings
        self.graph = graph
        self.records = records
        self.template = template
        self.log = log
        self.sleep = sleep
        self.jitter = jitter
        self.pending_ttl_s = int(settings.timeout_s + settings.retry_max_ms / 1000) + 10
        # The message each conversation last had marked read here: a message that waited as a
        # burst's fragment was marked then (with "typing..."), not again as its turn starts.
        self._marked: OrderedDict[str, str] = OrderedDict()

    # Delivery -------------------------------------------------------------------------------

    async def deliver(self, reply: Reply) -> Delivery:
        target = target_of(reply.conversation_id, reply.to, self.settings.phone_number_id)
        problem = self._config_problem(target)
        if problem is not None or target is None:
            detail = problem or "no target"
            await self.records.note_problem(detail, reply.conversation_id)
            return Delivery("failed", detail)
        if reply.template:
            return await self._template_instead(target, reply.turn_id, "agent_template")
        template = self._template_for(reply)
        holder = holder_of(self.keys, reply)
        if not await self.window_open(reply.conversation_id):
            return await self._template_instead(
                target, reply.turn_id, "window_closed", template, holder
            )
        wamids: list[str] = []
        for index, bubble in enumerate(reply.bubbles):
            payload = text_message(target.recipient, bubble)
            outcome = await self._send_once(
                target,
                reply.turn_id,
                index,
                payload,
                "text",
                at_most_once=reply.author == "agent",
                holder=holder,
            )
            if outcome.status == SUPERSEDED:
                return Delivery(SUPERSEDED, f"bubble {index}: another turn answers")
            if outcome.status == "unknown":
                return Delivery("unknown", f"bubble {index}: {UNKNOWN_DETAIL}")
            if outcome.status == "failed_before":
                return Delivery("duplicate", f"bubble {index} failed before")
            if outcome.error is not None:
                if outcome.error.category == Category.REENGAGEMENT:
                    return await self._template_instead(target, reply.turn_id, "131047", template)
                return Delivery("failed", f"bubble {index}: {outcome.error}")
            if outcome.reengage:
                return await self._template_after_early_status(target, reply.turn_id)
            if outcome.wamid and outcome.status == "sent":
                wamids.append(outcome.wamid)
        if reply.bubbles and not wamids:
            return Delivery("duplicate")
        return Delivery("sent", " ".join(wamids))

    async def reengage(self, conversation_id: str, turn_id: str, recipient: str | None) -> None:
        """After a ``failed`` status with 131047: send the template once for that turn."""
        target = target_of(conversation_id, recipient, self.settings.phone_number_id)
        if target is None or self._config_problem(target):
            return
        try:
            delivery = await self._template_instead(target, turn_id, "131047 status")
        except DeliveryInFlight:
            return  # the template for this turn is being sent right now
        self.log.info(
            "re-engagement after a failed status",
            conversation_id=conversation_id,
            turn_id=turn_id,
            status=delivery.status,
        )

    async def _template_after_early_status(self, target: Target, turn_id: str) -> Delivery:
        reason = "131047 status before the send's response"
        try:
            return await self._template_instead(target, turn_id, reason)
        except DeliveryInFlight:
            # The status path learnt the turn just in time and is sending the template itself.
            return Delivery("template", f"{reason}; template sent by the status webhook")

    async def mark_read(self, turn: Turn) -> None:
        """Mark the turn's latest message read with a typing indicator (best effort)."""
        if turn.messages:
            await self.typing(turn.messages[-1], turn.turn_id)

    async def typing(self, message: InboundMessage, turn_id: str | None = None) -> None:
        """Mark ``message`` (and those before it) read and show "typing..." (best effort)."""
        target = target_of(message.conversation_id, message.contact, self.settings.phone_number_id)
        if target is None or self._config_problem(target):
            return
        wamid = message.metadata.get("wamid") or message.message_id
        conversation = message.conversation_id
        if self._marked.get(conversation) == wamid:
            return
        # Noted before the call, so the turn's start does not send it again while it is on its
        # way; forgotten if it fails.
        self._marked[conversation] = wamid
        self._marked.move_to_end(conversation)
        if len(self._marked) > MARKED_KEPT:
            self._marked.popitem(last=False)
        try:
            await self.graph.post_message(target.phone_number_id, read_receipt(wamid, typing=True))
        except GraphError as error:
            if self._marked.get(conversation) == wamid:
                del self._marked[conversation]
            SENDS.labels("read", "failed", self.keys.tenant).inc()
            self.log.warning(
                "mark-read failed",
                conversation_id=message.conversation_id,
                turn_id=turn_id,
                error=str(error),
            )
            return
        SENDS.labels("read", "sent", self.keys.tenant).inc()

    async def window_open(self, conversation_id: str) -> bool:
        """False when the meta slice says the 24-hour window closed; True when unknown."""
        raw = await self.redis.hget(self.keys.state(conversation_id), "meta")
        expires = json.loads(raw).get("window_expires_at") if raw else None
        if not expires:
            return True
        return datetime.fromisoformat(expires) > utcnow()

    # Internals ------------------------------------------------------------------------------

    def _config_problem(self, target: Target | None) -> str | None:
        if not self.settings.access_token:
            return "WHATSAPP_ACCESS_TOKEN is not set"
        if target is None:
            return "no business number or recipient for this conversation"
        return None

    def _template_for(self, reply: Reply) -> Template | None:
        """The reply's own template (a scheduled reminder's), else the re-engagement one."""
        if reply.template_name is None:
            return self.template
        language = self.template.language if self.template else Template(name="").language
        return Template(
            name=reply.template_name, language=language, parameters=reply.template_params
        )

    async def _template_instead(
        self,
        target: Target,
        turn_id: str,
        reason: str,
        template: Template | None = None,
        holder: Holder | None = None,
    ) -> Delivery:
        template = template or self.template
        if template is None:
            return Delivery("failed", f"{reason}: outside the 24-hour window, no template in pack")
        payload = template_message(target.recipient, template)
        outcome = await self._send_once(
            target, turn_id, TEMPLATE_SLOT, payload, "template", holder=holder
        )
        if outcome.status == SUPERSEDED:
            return Delivery(SUPERSEDED, f"{reason}; another turn answers")
        if outcome.error is not None:
            return Delivery("failed", f"{reason}; template {template.name}: {outcome.error}")
        if outcome.status != "sent":
            return Delivery("duplicate", f"{reason}; template decided before")
        return Delivery("template", f"{reason}; template {template.name} {outcome.wamid}")

    async def _send_once(
        self,
        target: Target,
        turn_id: str,
        slot: int | str,
        payload: dict[str, Any],
        kind: str,
        *,
        at_most_once: bool = False,
        holder: Holder | None = None,
    ) -> Outcome:
        """Send one slot once across replicas. A sender that dies mid-request leaves its claim
        to expire; a bot reply is then sent again (the person gets an answer, maybe twice).
        With ``at_most_once`` (a person's message) the first attempt is remembered, and a later
        one that finds it gives up as ``unknown`` rather than risk sending it twice. With
        ``holder`` (a reply to a turn), nothing is sent once another turn holds the lease."""
        key = self.keys.sent(target.conversation_id, turn_id, slot)
        token = f"pending:{uuid.uuid4().hex}"
        claimed = await claim(self.redis, key, token, self.pending_ttl_s, self.ack, holder)
        if claimed == SUPERSEDED:
            return Outcome(SUPERSEDED)
        if claimed == "taken":
            decided = await self.redis.get(key)
            if decided is None:  # the pending holder's claim just expired: take it
                return await self._send_once(
                    target, turn_id, slot, payload, kind, at_most_once=at_most_once, holder=holder
                )
            if decided.startswith("pending:"):
                raise DeliveryInFlight(f"{key} is being sent by another sender")
            if decided == "unknown":
                return Outcome("unknown")
            return Outcome("failed_before" if decided.startswith("failed") else "duplicate")
        if at_most_once:
            tried = self.keys.sent(target.conversation_id, turn_id, f"{slot}:tried")
            if not await self.redis.set(tried, "1", nx=True, ex=self.settings.delivery_ttl_s):
                await self.redis.set(key, "unknown", ex=self.settings.delivery_ttl_s)
                self.log.warning(
                    "an earlier send of this message died mid-request: not sent again",
                    conversation_id=target.conversation_id,
                    turn_id=turn_id,
                    slot=slot,
                )
                return Outcome("unknown")
        try:
            body = await self._post(target, payload, kind, key)
        except GraphError as error:
            code = error.code if error.code is not None else f"http_{error.http_status}"
            await self.redis.set(key, f"failed:{code}", ex=self.settings.delivery_ttl_s)
            await self.records.note_error(error, target.conversation_id)
            self.log.warning(
                "whatsapp send failed",
                conversation_id=target.conversation_id,
                turn_id=turn_id,
                slot=slot,
                code=error.code,
                category=str(error.category),
            )
            return Outcome("failed", error=error)
        wamid = sent_message_id(body) or f"unknown:{uuid.uuid4().hex}"
        await self.redis.set(key, f"sent:{wamid}", ex=self.settings.delivery_ttl_s)
        held = await self.records.record(
            wamid,
            "accepted",
            conversation_id=target.conversation_id,
            turn_id=turn_id,
            slot=slot,
            kind=kind,
            recipient_id=target.recipient,
            phone_number_id=target.phone_number_id,
        )
        await self.records.note_success()
        early = held == "failed" and REENGAGEMENT_CODE in await self.records.error_codes(wamid)
        if early:
            self.log.info(
                "a failed status with 131047 beat the send's response",
                conversation_id=target.conversation_id,
                turn_id=turn_id,
                slot=slot,
            )
        return Outcome("sent", wamid, reengage=early)

    async def _post(
        self, target: Target, payload: dict[str, Any], kind: str, claim: str
    ) -> dict[str, Any]:
        settings = self.settings
        cap_s = settings.retry_max_ms / 1000
        attempt = 0
        while True:
            wait_ms = await self.records.wait_ms(target.phone_number_id, target.pair)
            if wait_ms:
                await self.sleep(min(wait_ms / 1000, cap_s))
            await self.redis.expire(claim, self.pending_ttl_s)
            try:
                body = await self.graph.post_message(target.phone_number_id, payload)
            except GraphError as error:
                code = str(error.code) if error.code is not None else f"http_{error.http_status}"
                ERRORS.labels(code, str(error.category), self.keys.tenant).inc()
                too_long = error.retry_after_s is not None and error.retry_after_s > cap_s
                attempt += 1
                delay = backoff_s(
                    attempt - 1,
                    base_s=settings.retry_base_ms / 1000,
                    cap_s=cap_s,
                    retry_after_s=error.retry_after_s,
                    jitter=self.jitter(),
                )
                if error.category == Category.THROTTLED:  # every replica paces this scope
                    pair = error.code in PAIR_THROTTLING_CODES
                    await self.records.hold(target.pair if pair else target.phone_number_id, delay)
                if error.category not in RETRYABLE or too_long or attempt >= settings.send_attempts:
                    SENDS.labels(kind, "failed", self.keys.tenant).inc()
                    raise
                SENDS.labels(kind, "retried", self.keys.tenant).inc()
                await self.sleep(delay)
                continue
            SENDS.labels(kind, "sent", self.keys.tenant).inc()
            return body
