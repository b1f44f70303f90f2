"""scheduler service shell: domain events in, scheduled messages out on the outbound stream.

Events (``trial.booked``, ``trial.rescheduled``, ``trial.cancelled``/``booking.cancelled``,
``booking.attendance``) become scheduled messages or cancel them (``core.plan_event``). One loop
per process, whatever the number of tenants (a shared loop: ``Runtime.shared_loops``), claims
what is due in the buckets every tenant shares, bucket by bucket, atomically across replicas
(``SCHED_CLAIM``), and hands each message to its tenant's sender (that tenant's pack, config,
store and bus view: ``Runtime.exports``), which sends it as a turn of its own (``sched-<id>``)
through the normal outbound path, unless a person owns the conversation (held, listed for
staff). The funnel's counters are kept here too (``funnel.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from services.scheduler.config import load_reminders
from services.scheduler.core import (
    SCHEDULING,
    Context,
    admit,
    at_due,
    bucket_finished,
    plan_event,
)
from services.scheduler.funnel import FunnelCounter
from shared.clock import Clock
from shared.contracts import DomainEvent, Reply
from shared.metrics import SCHEDULED
from shared.scheduled import Adding, Claimed, Scheduled, ScheduleStore
from shared.service import Lookup, Runtime
from shared.state import journal_entry, read_slices
from shared.trial.config import load_trial_config

BUCKET_GRACE = timedelta(minutes=5)
SERVICE = "scheduler"
# A tenant's sender: sends (or holds, or drops) one claimed message, then finishes the claim.
Send = Callable[[Claimed, datetime], Awaitable[None]]


async def tick_once(store: ScheduleStore, clock: Clock, senders: Lookup, claim_ms: int) -> int:
    """Claim what is due in every tenant's buckets and hand each message to its tenant's
    sender. Returns how many were handed over.

    A message of a tenant this process does not serve (its pack refused here, or the tenant
    left the tenants file) is not released but left claimed: its claim expires after
    ``claim_ms`` and a process serving the tenant claims it then (``SCHED_CLAIM`` takes
    expired claims back first). Released, it would be due again at once: claimed and released
    by this process every tick, and, being the oldest, first in every claim, so that enough of
    them would starve the served tenants' messages behind them. Left claimed, it costs one
    claim per ``claim_ms`` and keeps its bucket in the index (it counts in ``remaining``)."""
    now = await clock.now()
    handled = 0
    for bucket in await store.due_buckets(now):
        remaining, claimed = await store.claim(bucket, now, claim_ms)
        for one in claimed:
            send: Send | None = senders(one.tenant)
            if send is not None:
                await send(one, now)
                handled += 1
        if remaining == 0 and bucket_finished(bucket, now, BUCKET_GRACE):
            await store.forget_bucket(bucket)
    return handled


async def scheduler_loop(
    store: ScheduleStore, clock: Clock, senders: Lookup, tick_s: float, claim_ms: int
) -> None:
    """Tick every ``tick_s``: one loop per process over the buckets every tenant shares.
    Runs supervised (``shared/loops.py`` restarts it after a failure, e.g. Redis down)."""
    while True:
        await tick_once(store, clock, senders, claim_ms)
        await asyncio.sleep(tick_s)


def build(rt: Runtime) -> None:
    config = load_reminders(rt.pack)
    trial = load_trial_config(rt.pack)
    clock = Clock(rt.redis, rt.keys, movable=rt.settings.test_clock)
    store = ScheduleStore(
        rt.redis,
        rt.scripts,
        rt.keys,
        journal_max=rt.settings.journal_max,
        ttl_s=rt.settings.state_ttl_days * 86400,
    )

    async def context_of(conversation_id: str) -> Context:
        slices = await read_slices(rt.redis, rt.keys, conversation_id, "meta", "trial")
        meta, trial_view = slices.meta(), slices.trial()
        return Context(
            conversation_id=conversation_id,
            channel=(meta.channel if meta else None) or "http",
            to=meta.contact if meta else None,
            student_name=trial_view.nome if trial_view else None,
        )

    async def cancel_booking(event: DomainEvent, booking_id: str) -> None:
        for item, status, bucket in await store.items(event.conversation_id):
            if item.booking_id != booking_id or status not in ("pending", "held"):
                continue
            entry = journal_entry(
                SERVICE,
                item.turn_id,
                "scheduled.cancelled",
                id=item.id,
                kind=item.kind,
                because=event.type,
                event_turn_id=event.turn_id,
            )
            if await store.cancel(item, bucket, entry):
                SCHEDULED.labels(item.kind, "cancelled", rt.tenant).inc()
                rt.log.info("scheduled message cancelled", id=item.id, because=event.type)

    async def schedule(items: list[Scheduled], now: datetime, event: DomainEvent) -> None:
        """Record what an event schedules, each item admitted (sent now, at its time, or
        dropped as past), in one ``add_all``."""
        adds: list[Adding] = []
        for item in items:
            admission = admit(item, now, config)
            fields = {
                "id": item.id,
                "kind": item.kind,
                "booking_id": item.booking_id,
                "due_at": item.due_at.isoformat(),
                "because": event.type,
                "event_turn_id": event.turn_id,
            }
            if admission == "drop":
                entry = journal_entry(
                    SERVICE, item.turn_id, "scheduled.dropped", reason="past", **fields
                )
                adds.append(Adding(item, "dropped", now, entry))
                continue
            send_at = now if admission == "send_now" else item.due_at
            entry = journal_entry(
                SERVICE,
                item.turn_id,
                "scheduled.created",
                send_now=admission == "send_now",
                **fields,
            )
            adds.append(Adding(item, "pending", send_at, entry))
        created = await store.add_all(adds, event.turn_id)
        for add, new in zip(adds, created, strict=True):
            if not new:
                continue
            item = add.item
            if add.status == "dropped":
                SCHEDULED.labels(item.kind, "dropped", rt.tenant).inc()
                continue
            SCHEDULED.labels(item.kind, "created", rt.tenant).inc()
            due_at = item.due_at.isoformat()
            rt.log.info("message scheduled", id=item.id, kind=item.kind, due_at=due_at)

    async def on_event(body: bytes) -> None:
        event = DomainEvent.model_validate_json(body)
        await funnel.on_event(event)
        if event.type not in SCHEDULING:
            return  # a handoff, an enrollment request...: nothing to schedule, nothing to read
        ctx = await context_of(event.conversation_id)
        plan = plan_event(
            event.type,
            event.event_id,
            event.data,
            ctx,
            config=config,
            trial=trial,
            pack=rt.pack,
            tz=rt.tz,
        )
        if plan.note:
            rt.log.warning("event not scheduled", type=event.type, note=plan.note)
        if plan.cancel_booking:
            await cancel_booking(event, plan.cancel_booking)
        if plan.schedule:
            await schedule(plan.schedule, await clock.now(), event)

    async def send(claimed: Claimed, now: datetime) -> None:
        item = await store.load(claimed)
        if item is None:  # erased with its conversation
            await store.finish(claimed)
            return
        if at_due(item, now, config) == "drop":
            entry = journal_entry(
                SERVICE,
                item.turn_id,
                "scheduled.dropped",
                id=item.id,
                kind=item.kind,
                reason="late",
            )
            if await store.move(item, "pending", "dropped", entry):
                SCHEDULED.labels(item.kind, "dropped", rt.tenant).inc()
            await store.finish(claimed)
            return
        held = journal_entry(
            SERVICE, item.turn_id, "scheduled.held", id=item.id, kind=item.kind, text=item.text
        )
        status, taken = await store.take(item, held)
        if taken is not None:
            reply = Reply(
                turn_id=taken.turn_id,
                conversation_id=taken.conversation_id,
                channel=taken.channel,
                to=taken.to,
                text=taken.text,
                bubbles=[taken.text],
                scheduled=True,
                template_name=taken.template,
                template_params=taken.template_params,
            )
            await rt.bus.publish(rt.keys.route(rt.keys.outbound, reply.conversation_id), reply)
            entry = journal_entry(
                SERVICE,
                taken.turn_id,
                "scheduled.sent",
                id=taken.id,
                kind=taken.kind,
                booking_id=taken.booking_id,
                due_at=taken.due_at.isoformat(),
                text=taken.text,
            )
            if await store.move(taken, "sending", "sent", entry):
                SCHEDULED.labels(taken.kind, "sent", rt.tenant).inc()
            rt.log.info("scheduled message sent", id=taken.id, kind=taken.kind)
        elif status == "held":
            SCHEDULED.labels(item.kind, "held", rt.tenant).inc()
            rt.log.info("scheduled message held for a person", id=item.id)
        await store.finish(claimed)

    async def ticks(senders: Lookup) -> None:
        # The first tenant built declares the process's one loop: the buckets, their index
        # and the clock's offset carry no tenant, so its store and clock reach every tenant's.
        settings = rt.settings
        await scheduler_loop(
            store, clock, senders, settings.scheduler_tick_ms / 1000, settings.scheduler_claim_ms
        )

    funnel = FunnelCounter(rt.redis, rt.keys, rt.tz, rt.log)
    rt.bus.subscribe(rt.keys.events, "scheduler", on_event)
    rt.bus.subscribe(rt.keys.funnel, "funnel", funnel.on_step)
    rt.exports[SERVICE] = send
    rt.shared_loops[SERVICE] = ticks
