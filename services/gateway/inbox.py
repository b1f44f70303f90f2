"""The staff side of a conversation: the list staff pick conversations from, the one-line
summary of what the bot understood, and messages written by a person.

Decisions are pure functions (``summarize``, ``list_row``, ``agent_refusal``); ``Inbox`` is the
shell that loads, decides and publishes. An agent message travels like a bot reply (outbound
stream → egress → channel), so it is sent through the conversation's own channel exactly once
(the channel's per-message claim), across redeliveries and gateway restarts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from redis.asyncio import Redis
from structlog.typing import FilteringBoundLogger

from services.gateway.handoff import Handoff
from services.gateway.history import History, history_entry
from services.gateway.summary import InboxConfig, contact_name, last_unanswered, summarize
from services.gateway.turns import Publish, ReplyWindow
from shared.contracts import MetaView, Reply, new_id, now_ms, utcnow
from shared.keys import Keys
from shared.lua import Scripts
from shared.nlu.normalize import normalize
from shared.pack import Pack
from shared.state import StateStore, journal_entry

SCAN_BATCH = 100
SUMMARY_JOURNAL = 60  # journal entries read for a row's summary: the last few turns
MAX_SCANNED = 5000


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str
    detail: str


def matches(query: str, row: dict[str, Any], texts: list[str]) -> bool:
    """Case- and accent-insensitive search over the names, the id and recent texts."""
    needle = normalize(query)
    haystack = [row["conversation_id"], row.get("contact_name") or "", *texts]
    return any(needle in normalize(h) for h in haystack)


def agent_refusal(meta: dict[str, Any] | None, agent: str, take: bool) -> Refusal | None:
    """Why a person may not write into this conversation now, or None."""
    if meta is None:
        return Refusal(404, "unknown_conversation", "no conversation with this id")
    owner = meta.get("handoff", "bot")
    holder = meta.get("handoff_by")
    if owner == "human" and holder and holder != agent and not take:
        return Refusal(
            409, "owned_by_other", f"{holder} owns this conversation; send take=true to take it"
        )
    return None


def window_closed(meta: dict[str, Any], now: datetime, window: timedelta | None) -> bool:
    """Whether the conversation's channel has a reply window (``window``, e.g. WhatsApp's 24
    hours) and the expiry stored from the customer's last message passed (wall clock)."""
    return window is not None and MetaView.model_validate(meta).window_closed(now)


def agent_message_id(conversation_id: str, client_message_id: str | None) -> str:
    """Stable for a client id, so a retried request names the same message everywhere."""
    if client_message_id is None:
        return f"agent-{new_id()}"
    digest = hashlib.blake2s(f"{conversation_id}|{client_message_id}".encode(), digest_size=12)
    return f"agent-{digest.hexdigest()}"


class Inbox:
    def __init__(
        self,
        redis: Redis,
        scripts: Scripts,
        keys: Keys,
        store: StateStore,
        history: History,
        handoff: Handoff,
        publish: Publish,
        pack: Pack,
        claim_ttl_s: int,
        log: FilteringBoundLogger,
        reply_window: ReplyWindow,
        channel_of: Callable[[str], str | None],
    ) -> None:
        self.redis = redis
        self.scripts = scripts
        self.keys = keys
        self.store = store
        self.history = history
        self.handoff = handoff
        self.publish = publish
        self.pack = pack
        self.config = pack.section("inbox", InboxConfig)
        self.claim_ttl_s = claim_ttl_s
        self.log = log
        self.reply_window = reply_window
        # The channel a conversation id belongs to by its prefix, for a conversation whose
        # meta names none yet (a person wrote on the provider's side before the customer did).
        self.channel_of = channel_of

    async def exists(self, conversation_id: str) -> bool:
        return bool(await self.redis.hexists(self.keys.state(conversation_id), "meta"))

    async def row(self, conversation_id: str) -> dict[str, Any] | None:
        """The list entry of one conversation, or None when it is gone (state expired)."""
        snapshot = await self.store.load(conversation_id)
        meta = snapshot.get("meta")
        if meta is None:
            return None
        slices = {name: snapshot.get(name) for name in ("meta", "triage", "trial")}
        # Recent turns only: the list is read often (the page refreshes it), and the question
        # the bot could not answer that matters to staff is a recent one.
        journal = await self.store.journal(conversation_id, last=SUMMARY_JOURNAL)
        latest = await self.history.latest(conversation_id)
        owner = meta.get("handoff", "bot")
        return {
            "conversation_id": conversation_id,
            "owner": owner,
            "agent": meta.get("handoff_by") if owner == "human" else None,
            "channel": meta.get("channel"),
            "contact_name": contact_name(slices),
            "last_message_at": (latest or {}).get("at") or meta.get("last_message_at"),
            "last_text": (latest or {}).get("text"),
            "waiting_since": meta.get("waiting_since") if owner == "pending_human" else None,
            "summary": summarize(slices, last_unanswered(journal), self.pack, self.config),
        }

    async def conversations(
        self, owner: str | None, query: str | None, limit: int, cursor: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Newest activity first. The cursor is ``<score>:<conversation id>`` of the last row."""
        rows: list[dict[str, Any]] = []
        top = "+inf"
        skip_through: str | None = None
        if cursor:
            score, _, skip_through = cursor.partition(":")
            top = score
        scanned = 0
        offset = 0
        while len(rows) < limit and scanned < MAX_SCANNED:
            batch = await self.redis.zrevrangebyscore(
                self.keys.conversation_index,
                top,
                "-inf",
                start=offset,
                num=SCAN_BATCH,
                withscores=True,
            )
            if not batch:
                return rows, None
            offset += len(batch)
            for conversation_id, score in batch:
                scanned += 1
                if skip_through is not None:
                    if conversation_id == skip_through:
                        skip_through = None
                    continue
                row = await self.row(conversation_id)
                if row is None:
                    await self.redis.zrem(self.keys.conversation_index, conversation_id)
                    offset -= 1
                    continue
                if owner and row["owner"] != owner:
                    continue
                if query and not matches(query, row, await self._recent_texts(conversation_id)):
                    continue
                rows.append(row)
                if len(rows) == limit:
                    return rows, f"{int(score)}:{conversation_id}"
        return rows, None

    async def _recent_texts(self, conversation_id: str) -> list[str]:
        messages, _ = await self.history.page(conversation_id, None, 50)
        return [m.get("text") or "" for m in messages]

    async def send(
        self,
        conversation_id: str,
        agent: str,
        text: str,
        client_message_id: str | None,
        take: bool,
        template: bool,
    ) -> tuple[str, bool] | Refusal:
        """Queue a staff member's message; (message id, duplicate) or why it was refused."""
        raw = await self.redis.hget(self.keys.state(conversation_id), "meta")
        meta = json.loads(raw) if raw else None
        refusal = agent_refusal(meta, agent, take)
        if refusal is not None:
            return refusal
        assert meta is not None
        channel = meta.get("channel") or self.channel_of(conversation_id) or "http"
        window = self.reply_window(channel)
        if window_closed(meta, utcnow(), window) and not template:
            return Refusal(
                409,
                "window_closed",
                "outside the channel's reply window: send the pack's template with template=true",
            )
        message_id = agent_message_id(conversation_id, client_message_id)
        if client_message_id is not None:
            claim = self.keys.agent_claim(conversation_id, client_message_id)
            fresh = await self.redis.set(claim, "pending", nx=True, ex=self.claim_ttl_s)
            if not fresh and await self.redis.get(claim) == "published":
                return message_id, True
        if meta.get("handoff") != "human" or meta.get("handoff_by") != agent:
            await self.handoff.assign(conversation_id, "human", by=agent, reason="agent_message")
        else:
            await self.handoff.staff_wrote(conversation_id, agent)
        reply = Reply(
            turn_id=message_id,
            conversation_id=conversation_id,
            channel=channel,
            to=meta.get("contact"),
            text=text,
            bubbles=[text],
            author="agent",
            agent=agent,
            template=template,
        )
        async with self.redis.pipeline(transaction=False) as pipe:
            await self.publish(
                self.keys.route(self.keys.outbound, conversation_id), reply, pipeline=pipe
            )
            self.store.queue_journal(
                pipe,
                conversation_id,
                journal_entry("gateway", message_id, "agent.message", agent=agent, text=text),
            )
            if client_message_id is not None:
                pipe.set(
                    self.keys.agent_claim(conversation_id, client_message_id),
                    "published",
                    ex=self.claim_ttl_s,
                )
            await pipe.execute()
        self.log.info(
            "agent message queued",
            conversation_id=conversation_id,
            message_id=message_id,
            agent=agent,
        )
        return message_id, False

    async def record_echo(
        self, conversation_id: str, message_id: str, text: str, at: datetime, agent: str
    ) -> bool:
        """A message a person sent into the conversation outside this inbox, as its channel
        saw it (the WhatsApp Business app on the same number, an agent in the channel's own
        inbox, the business phone): into the history once, and the conversation becomes
        human-owned by ``agent`` so the bot does not talk over a person. False for a
        redelivered echo."""
        entry = history_entry(message_id, "agent", text, at, agent)
        written = await self.scripts.history_once(
            keys=[
                self.keys.history_claim(conversation_id, message_id),
                self.keys.history(conversation_id),
            ],
            args=[entry, self.claim_ttl_s, self.history.ttl_s, self.history.kept],
        )
        if not written:
            return False
        await self.redis.zadd(self.keys.conversation_index, {conversation_id: now_ms()}, gt=True)
        owner = await self.handoff.owner(conversation_id)
        if owner != "human":
            await self.handoff.assign(conversation_id, "human", by=agent, reason="echo")
        else:
            await self.handoff.staff_wrote(conversation_id, agent)
        await self.store.append_journal(
            conversation_id,
            journal_entry("gateway", message_id, "agent.echo", agent=agent, text=text),
        )
        return True
