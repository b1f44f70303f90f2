"""Human handoff: who owns the conversation, kept in the meta slice and enforced here.

States: ``bot`` → ``pending_human`` (someone asked for a person; the bot keeps answering until
one takes over) → ``human`` (the bot sends nothing: inbound messages are recorded but start no
turn, and a reply still in flight is dropped) → ``bot`` again (handing back is journaled; the
bot resumes from the current state).

A ``handoff.requested`` domain event moves the conversation to ``pending_human`` and notifies
the configured webhook with a summary, so a person can pick it up; a ``handoff.withdrawn`` event
(the person answered after the bot's own handoff and the bot went on) gives a conversation still
only waiting back to the bot; a conversation still waiting
after ``ORQ_HANDOFF_REMIND_MIN`` is notified once more. A human-owned conversation with no staff
message for ``ORQ_HUMAN_IDLE_MIN`` goes back to the bot, so a forgotten one does not stay
silent for good. Both are found through two sorted sets scored on the wall clock (staff work in
real time), visited by ``sweep_once``.

The two sets hold every tenant's conversations (``Keys.qualified`` members), so one sweeper
per gateway process reads them whatever the number of tenants and hands each due conversation
to its tenant's ``Handoff``; a conversation of a tenant the process does not serve is left for
one that does. The staff inbox's index stays per tenant (it is the tenant's listing); it is
pruned where it is written (``TurnKeeper.ingest``), not here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal, cast

import httpx
from redis.asyncio import Redis
from structlog.typing import FilteringBoundLogger

from services.gateway.summary import InboxConfig, contact_name, last_unanswered, summarize
from shared.contracts import DomainEvent, now_ms, utcnow
from shared.keys import Keys
from shared.lua import Scripts
from shared.pack import Pack
from shared.service import Lookup
from shared.settings import Settings
from shared.state import StateStore, journal_entry
from shared.sweep import Due, due_members

Owner = Literal["bot", "pending_human", "human"]
# The conversation's channel, told that the bot handed it to a person (``ChannelSet.on_handoff``).
OnHandoff = Callable[[str], Awaitable[None]]
NOTIFY_ATTEMPTS = 3
SWEEP_BATCH = 100


class Handoff:
    def __init__(
        self,
        scripts: Scripts,
        keys: Keys,
        store: StateStore,
        http: httpx.AsyncClient,
        settings: Settings,
        pack: Pack,
        log: FilteringBoundLogger,
        on_handoff: OnHandoff | None = None,
    ) -> None:
        self.scripts = scripts
        self.on_handoff = on_handoff
        self.keys = keys
        self.store = store
        self.http = http
        self.settings = settings
        self.pack = pack
        self.inbox_config = pack.section("inbox", InboxConfig)
        self.log = log

    async def owner(self, conversation_id: str) -> Owner:
        """Reads the meta slice alone, not the whole state."""
        return self.owner_in(await self.store.redis.hget(self.keys.state(conversation_id), "meta"))

    @staticmethod
    def owner_in(meta: str | bytes | None) -> Owner:
        """The owner a stored meta slice names ("bot" without one)."""
        return cast(Owner, json.loads(meta).get("handoff", "bot")) if meta else "bot"

    async def assign(
        self, conversation_id: str, owner: Owner, *, by: str, reason: str = ""
    ) -> dict[str, Any]:
        """Set the owner (admin API, staff messages). Returns the meta slice as stored."""
        patch: dict[str, Any] = {"handoff": owner, "handoff_by": by}
        if owner == "human":
            patch["last_staff_at"] = utcnow().isoformat()
        meta = await self._patch(conversation_id, patch)
        member = self.keys.qualified(conversation_id)
        async with self.store.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(self.keys.waiting_human, member)
            if owner == "human":
                pipe.zadd(self.keys.human_owned, {member: now_ms()})
            else:
                pipe.zrem(self.keys.human_owned, member)
            self.store.queue_journal(
                pipe,
                conversation_id,
                journal_entry("gateway", None, f"handoff.{owner}", by=by, reason=reason),
            )
            await pipe.execute()
        self.log.info("handoff owner changed", conversation_id=conversation_id, owner=owner)
        return meta

    @property
    def _state_ttl_s(self) -> int:
        return self.settings.state_ttl_days * 86_400

    async def staff_wrote(self, conversation_id: str, agent: str) -> None:
        """A staff message keeps a human-owned conversation from going back to the bot."""
        await self._patch(conversation_id, {"last_staff_at": utcnow().isoformat()})
        member = self.keys.qualified(conversation_id)
        await self.store.redis.zadd(self.keys.human_owned, {member: now_ms()})
        self.log.debug("staff message", conversation_id=conversation_id, agent=agent)

    async def on_event(self, body: bytes) -> None:
        event = DomainEvent.model_validate_json(body)
        if event.type == "handoff.withdrawn":
            await self._withdrawn(event)
            return
        if event.type != "handoff.requested":
            return
        # Only a bot-owned conversation becomes pending: a human who already owns it keeps it.
        meta = await self.scripts.meta_patch(
            keys=[self.keys.state(event.conversation_id)],
            args=[
                json.dumps({"handoff": "pending_human", "waiting_since": event.at.isoformat()}),
                "handoff",
                "bot",
                self._state_ttl_s,
            ],
        )
        if meta is None:
            return
        member = self.keys.qualified(event.conversation_id)
        await self.store.redis.zadd(self.keys.waiting_human, {member: now_ms()})
        await self.store.append_journal(
            event.conversation_id,
            journal_entry("gateway", event.turn_id, "handoff.pending_human", **event.data),
        )
        if self.on_handoff is not None:
            await self.on_handoff(event.conversation_id)
        await self._notify(event.conversation_id, event.turn_id, event.data, remind=False)

    async def _withdrawn(self, event: DomainEvent) -> None:
        """The bot's own handoff is withdrawn (the person answered and the bot went on): a
        conversation still only waiting for a person goes back to the bot; one a person took
        stays theirs."""
        back = json.dumps({"handoff": "bot", "handoff_by": "bot"})
        patched = await self.scripts.meta_patch(
            keys=[self.keys.state(event.conversation_id)],
            args=[back, "handoff", "pending_human", self._state_ttl_s],
        )
        if patched is None:
            return
        member = self.keys.qualified(event.conversation_id)
        await self.store.redis.zrem(self.keys.waiting_human, member)
        await self.store.append_journal(
            event.conversation_id,
            journal_entry("gateway", event.turn_id, "handoff.bot", by="bot", **event.data),
        )

    async def remind(self, conversation_id: str) -> bool:
        """Notify once more about a conversation due for a reminder; False when another
        replica took it first or it is no longer waiting for a person."""
        # Removed before notifying, so two gateway replicas never remind twice.
        taken = await self.store.redis.zrem(
            self.keys.waiting_human, self.keys.qualified(conversation_id)
        )
        if not taken or await self.owner(conversation_id) != "pending_human":
            return False
        await self._notify(conversation_id, None, {"reason": "reminder"}, remind=True)
        return True

    async def return_idle(self, conversation_id: str) -> bool:
        """Give a conversation idle past ``ORQ_HUMAN_IDLE_MIN`` back to the bot; False when
        another replica took it first or staff no longer own it."""
        member = self.keys.qualified(conversation_id)
        if not await self.store.redis.zrem(self.keys.human_owned, member):
            return False
        back = json.dumps({"handoff": "bot", "handoff_by": "idle"})
        patched = await self.scripts.meta_patch(
            keys=[self.keys.state(conversation_id)],
            args=[back, "handoff", "human", self._state_ttl_s],
        )
        if patched is None:
            return False
        minutes = f"{self.settings.human_idle_min:g}"
        await self.store.append_journal(
            conversation_id,
            journal_entry("gateway", None, "handoff.bot", by="idle", reason=f"idle {minutes} min"),
        )
        self.log.info("idle human conversation back to the bot", conversation_id=conversation_id)
        return True

    async def _patch(self, conversation_id: str, patch: dict[str, Any]) -> dict[str, Any]:
        raw = await self.scripts.meta_patch(
            keys=[self.keys.state(conversation_id)],
            args=[json.dumps(patch), "", "", self._state_ttl_s],
        )
        return json.loads(raw)

    async def _notify(
        self, conversation_id: str, turn_id: str | None, reason: dict[str, Any], *, remind: bool
    ) -> None:
        url = self.settings.handoff_webhook_url
        if not url:
            return
        payload = await self._payload(conversation_id, reason, remind)
        outcome = "failed"
        for attempt in range(1, NOTIFY_ATTEMPTS + 1):
            try:
                response = await self.http.post(url, json=payload)
                response.raise_for_status()
                outcome = "sent"
                break
            except httpx.HTTPError as exc:
                outcome = f"failed: {type(exc).__name__}"
                self.log.warning("handoff webhook failed", attempt=attempt, error=repr(exc))
                await asyncio.sleep(0.5 * attempt)
        await self.store.append_journal(
            conversation_id,
            journal_entry("gateway", turn_id, "handoff.notified", outcome=outcome, reminder=remind),
        )

    async def _payload(
        self, conversation_id: str, reason: dict[str, Any], remind: bool
    ) -> dict[str, Any]:
        snapshot = await self.store.load(conversation_id)
        journal = await self.store.journal(conversation_id)
        slices = {name: snapshot.get(name) for name in ("meta", "triage", "trial")}
        line = summarize(slices, last_unanswered(journal), self.pack, self.inbox_config)
        if self.settings.handoff_webhook_format == "slack":
            key = "handoff_notify_reminder" if remind else "handoff_notify"
            name = contact_name(slices) or conversation_id
            text = self.pack.text(
                key,
                name=name,
                conversation_id=conversation_id,
                summary=line,
                minutes=f"{self.settings.handoff_remind_min:g}",
            )
            return {"text": text}
        messages = [m for e in journal if e["event"] == "turn.started" for m in e["messages"]]
        return {
            "type": "handoff.reminder" if remind else "handoff.requested",
            "conversation_id": conversation_id,
            "at": utcnow().isoformat(),
            "reason": reason,
            "summary": {
                "line": line,
                # The trial's public view (shared/contracts.py: TrialView), not its private slice.
                "trial": trial.model_dump() if (trial := snapshot.trial()) else None,
                "last_messages": messages[-10:],
            },
        }


async def sweep_once(redis: Redis, keys: Keys, settings: Settings, handoffs: Lookup) -> int:
    """Remind once about conversations waiting too long and give idle ones back to the bot,
    every tenant's, each by its tenant's ``Handoff`` (``handoffs``; one this process does not
    serve is left for a process that does): one read per set when nothing is due, whatever
    the number of tenants. Returns how many conversations it acted on."""

    def served(tenant: str) -> bool:
        return handoffs(tenant) is not None

    async def due(key: str, minutes: float) -> list[tuple[Handoff, Due]]:
        until = now_ms() - minutes * 60_000
        found = await due_members(redis, key, until, served, SWEEP_BATCH)
        return [(handoff, d) for d in found if (handoff := handoffs(d.tenant)) is not None]

    acted = 0
    if settings.handoff_remind_min > 0:
        for handoff, d in await due(keys.waiting_human, settings.handoff_remind_min):
            acted += await handoff.remind(d.id)
    if settings.human_idle_min > 0:
        for handoff, d in await due(keys.human_owned, settings.human_idle_min):
            acted += await handoff.return_idle(d.id)
    return acted


async def sweeper(redis: Redis, keys: Keys, settings: Settings, handoffs: Lookup) -> None:
    """Sweep every ``ORQ_SWEEP_INTERVAL_MS``, once per gateway process for all its tenants;
    runs supervised (``shared/loops.py`` restarts it after a failure)."""
    while True:
        await sweep_once(redis, keys, settings, handoffs)
        await asyncio.sleep(settings.sweep_interval_ms / 1000)
