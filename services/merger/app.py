"""The merger: a correlation-id aggregator that answers every turn exactly once.

Any replica may complete any turn: the turn, its plan and its parts go into one hash per turn,
and a Lua script reports "complete" to exactly one caller. The gateway opens that hash (the turn
itself) and registers the turn's deadline in a sorted set in the same round trip in which it
publishes the turn (``TurnKeeper._after_start``), so the merger needs no delivery of the turn,
and a turn whose triage or specialists never answer still gets a partial reply with fallback
lines. A published reply takes its turn off the deadline set; what is left there when the
deadline passes is a turn that did not complete, or whose publisher died before publishing.

On one Redis a producer's commit adds its input to the hash itself (the same Lua), and only the
one that completes the turn tells the merger: its ``MergeReady`` carries the hash as that commit
read it, so the merger composes without reading it again.
"""

from __future__ import annotations

import asyncio
import time

from shared import tracing
from shared.bus import riding
from shared.contracts import MergeReady, now_ms
from shared.merge import MERGE_INPUT, merge_field, merger_config, reply_of
from shared.service import Lookup, Runtime
from shared.sweep import due_members

# Turns expired per partition in one pass of the deadline loop.
BATCH = 100


class Merger:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.config = merger_config(rt.pack)

    async def on_merge(self, body: bytes) -> None:
        item = MERGE_INPUT.validate_json(body)
        if isinstance(item, MergeReady):
            # A producer's commit completed the turn and sent its merge hash along.
            await self._reply(item.turn_id, item.fields)
            return
        await self._add(item.turn_id, merge_field(item), body.decode())

    async def _add(self, turn_id: str, field: str, value: str) -> None:
        rt, settings = self.rt, self.rt.settings
        keys = [rt.keys.merge_turn(turn_id)]
        args = [field, value, settings.turn_ttl_s, now_ms(), settings.republish_after_ms]
        # The script acknowledges an input that leaves nothing more to do (one Redis).
        delivery = riding(settings)
        if delivery:
            keys.append(delivery.stream)
            args += [delivery.group, delivery.message_id]
        result = await rt.scripts.merge_add(keys=keys, args=args)
        if result[0] in ("complete", "republish"):
            await self._reply(turn_id, _fields(result[1:]))
        elif delivery:
            delivery.acked = True

    async def expire(self, turn_id: str) -> None:
        """The turn's deadline passed: compose its partial reply (or republish a completed
        one whose publisher died), unless it completed just now elsewhere."""
        rt = self.rt
        grace = rt.settings.republish_after_ms
        member = rt.keys.qualified(turn_id)
        result = await rt.scripts.merge_expire(
            keys=[rt.keys.merge_turn(turn_id)], args=[now_ms(), grace]
        )
        if result[0] == "wait":  # completed just now elsewhere: look again after the grace
            await rt.redis.zadd(rt.keys.merge_deadlines(turn_id), {member: now_ms() + grace})
            return
        if result[0] in ("expired", "republish"):
            fields = _fields(result[1:])
            # No message brought this reply: it continues the trace the gateway stored with
            # the turn (tracing on).
            trace = fields.get(tracing.MERGE_TRACE)
            with tracing.resumed(trace, "merge deadline", turn_id=turn_id):
                await self._reply(turn_id, fields)
        await rt.redis.zrem(rt.keys.merge_deadlines(turn_id), member)

    async def _reply(self, turn_id: str, fields: dict[str, str]) -> None:
        merged = reply_of(fields, self.config, self.rt.pack, "merger")
        reply = merged.reply
        rt = self.rt
        merge_key = rt.keys.merge_turn(turn_id)
        # The reply ends the handler: on one Redis the delivery's acknowledgement rides in the
        # same round trip, inside MULTI/EXEC so that a command Redis refuses up front (out of
        # memory) aborts the whole, acknowledgement included.
        delivery = riding(rt.settings)
        async with rt.redis.pipeline(transaction=delivery is not None) as pipe:
            await rt.bus.publish(
                rt.keys.route(rt.keys.outbound, reply.conversation_id), reply, pipeline=pipe
            )
            pipe.hset(merge_key, "_published", "1")
            # A notice can outlive its turn's hash (it carries the hash): the mark must not
            # leave a hash without a TTL behind.
            pipe.expire(merge_key, rt.settings.turn_ttl_s)
            pipe.zrem(rt.keys.merge_deadlines(turn_id), rt.keys.qualified(turn_id))
            rt.store.queue_journal(pipe, reply.conversation_id, *merged.carried, merged.entry)
            if delivery:
                pipe.xack(delivery.stream, delivery.group, delivery.message_id)
            errors = [
                r for r in await pipe.execute(raise_on_error=False) if isinstance(r, Exception)
            ]
        if delivery:
            delivery.acked = True
        if errors:
            # Perhaps not published: undo the marks, so a redelivery of this message or the
            # deadline sweep hands the turn out again once the grace period passed (the
            # gateway delivers a turn's reply once, so a second publish is harmless). With the
            # acknowledgement riding, only the sweep does.
            await rt.redis.hdel(merge_key, "_published")
            await rt.redis.zadd(
                rt.keys.merge_deadlines(turn_id), {rt.keys.qualified(turn_id): now_ms()}
            )
            raise errors[0]


def _fields(flat: list[str]) -> dict[str, str]:
    """A merge hash from a script's flat answer (field, value, ...)."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


async def expire_due(rt: Runtime, mergers: Lookup) -> int:
    """Compose a partial reply for up to a batch of turns whose deadline passed, each by its
    tenant's merger; a turn of a tenant this process does not serve is left to a process
    that does, and read past (``shared/sweep.py``). Returns how many were expired."""
    expired = 0
    for key in rt.keys.all_merge_deadlines():
        served = await due_members(
            rt.redis, key, now_ms(), lambda tenant: mergers(tenant) is not None, BATCH
        )
        for due in served:
            await mergers(due.tenant).expire(due.id)
        expired += len(served)
    return expired


async def deadlines(rt: Runtime, mergers: Lookup) -> None:
    """Expire what is due, then wake at the next deadline (at most every 250 ms; at once
    while a full batch was expired): one loop per process over one sorted set per partition,
    whatever the number of tenants. A due turn of a tenant not served here does not count as
    the next deadline, or the loop would spin on it. Runs supervised (``shared/loops.py``
    restarts it after a failure, e.g. Redis down)."""
    while True:
        if await expire_due(rt, mergers) >= BATCH:
            continue
        wait = 0.25
        now = time.time()
        for key in rt.keys.all_merge_deadlines():
            nearest = await rt.redis.zrangebyscore(
                key, f"({now_ms()}", "+inf", start=0, num=1, withscores=True
            )
            if nearest:
                wait = min(wait, max(0.0, nearest[0][1] / 1000 - now))
        await asyncio.sleep(wait)


def build(rt: Runtime) -> None:
    merger = Merger(rt)
    rt.bus.subscribe(rt.keys.merge, "merger", merger.on_merge)
    rt.exports["merger"] = merger

    async def watch_deadlines(mergers: Lookup) -> None:
        await deadlines(rt, mergers)

    rt.shared_loops["merger"] = watch_deadlines
