"""A person's data: export everything stored about one conversation, or erase it (LGPD).

Every key of a conversation carries its id as the hash tag (``P{id}:...``, see
``shared/keys.py``), so one SCAN finds them all, including keys added later by other features
(history, the scheduler's per-conversation items): export dumps them and erase deletes them
without a list to keep up to date. Bookings are business records kept in the trial service's
store: erase blanks the person's fields and keeps the seat, so the class still counts it.
Records other services keep about a person elsewhere (an enrollment request) are named by
their spec's ``personal_records``: export lists them and erase unlinks them from the person. The
erase is journaled in a global privacy log with only a hash of the id and the time, since the
conversation's own journal is erased too. What stays in streams is explained in
docs/guides/privacy.md.

Work in flight when the erase runs (a turn being decided, an event on its way to the scheduler,
a reply on its way out) must not write the person's data back. So the erase first marks every
turn the conversation had (``_mark``): the turns go into the conversation's ``erased`` set, each
service's outbox of each turn is stored empty (a handler that meets it decides nothing, a commit
that meets it writes nothing: the effectively-once check), and the HTTP channel's delivery of
each is claimed (its reply is a duplicate: nothing written). Then the keys are deleted (those
marks kept, with the turn TTL), then the records anonymized. A service that wrote a record for
a turn before reading its mark (a booking made while the erase ran) reads the ``erased`` set
after writing it and anonymizes it itself (``StateStore.erased``); the scheduler's script and
the other channels' egress read the set before they write.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import APIRouter, Depends, HTTPException
from redis.asyncio import Redis

from services.gateway import auth
from services.gateway.api import ConversationPath
from services.gateway.deps import Deps, GatewayDeps
from shared.contracts import utcnow
from shared.keys import Keys, sched_member
from shared.spec import PersonalRecords
from shared.state import IN_FLIGHT, Outbox, StateStore
from shared.trial.bookings import BookingStore

router = APIRouter(dependencies=[Depends(auth.require_admin)])


def conversation_hash(conversation_id: str) -> str:
    return hashlib.sha256(conversation_id.encode()).hexdigest()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Privacy:
    def __init__(
        self,
        redis: Redis,
        keys: Keys,
        store: StateStore,
        bookings: BookingStore,
        records: Mapping[str, PersonalRecords],
        *,
        services: Sequence[str],
        turn_ttl_s: int,
    ):
        self.redis = redis
        self.keys = keys
        self.store = store
        self.bookings = bookings
        # Other services' records about a person (their spec's ``personal_records``).
        self.records = records
        # Every service that may hold a turn in flight (its outbox marks the turn done).
        self.services = tuple(services)
        self.turn_ttl_s = turn_ttl_s

    async def known(self, conversation_id: str) -> bool:
        """Whether anything is stored for the conversation (its state or its journal)."""
        found = await self.redis.exists(
            self.keys.state(conversation_id), self.keys.journal(conversation_id)
        )
        return bool(found)

    async def _keys(self, conversation_id: str) -> list[str]:
        pattern = self.keys.conversation_pattern(conversation_id)
        return sorted({_text(k) async for k in self.redis.scan_iter(match=pattern, count=1000)})

    async def _dump(self, key: str) -> Any:
        kind = _text(await self.redis.type(key))
        if kind == "string":
            return await self.redis.get(key)
        if kind == "hash":
            return await self.redis.hgetall(key)
        if kind == "list":
            return await self.redis.lrange(key, 0, -1)
        if kind == "set":
            return sorted(await self.redis.smembers(key))
        if kind == "zset":
            return await self.redis.zrange(key, 0, -1, withscores=True)
        if kind == "stream":
            return [{"id": i, **fields} for i, fields in await self.redis.xrange(key)]
        return None

    async def export(self, conversation_id: str) -> dict[str, Any]:
        """Every datum stored for the person: the state slices and the journal decoded, the
        bookings, and every other key of the conversation as stored (inbox, replies...)."""
        snapshot = await self.store.load(conversation_id)
        journal = await self.store.journal(conversation_id)
        stored: dict[str, Any] = {}
        skip = {self.keys.state(conversation_id), self.keys.journal(conversation_id)}
        base = len(self.keys.conv(conversation_id, ""))
        for key in await self._keys(conversation_id):
            if key not in skip:
                stored[key[base:]] = await self._dump(key)
        # The messages of a turn in flight are a field of the state hash, but no slice.
        if in_flight := await self.store.in_flight(conversation_id):
            stored[IN_FLIGHT] = in_flight
        return {
            "conversation_id": conversation_id,
            "exported_at": utcnow().isoformat(),
            "state": {name: value for name, value in snapshot.slices.items() if value},
            "journal": journal,
            "bookings": await self.bookings.of_conversation(conversation_id),
            "records": {
                name: await records.of_conversation(conversation_id)
                for name, records in self.records.items()
            },
            "stored": stored,
        }

    async def _unschedule(self, conversation_id: str) -> None:
        """Take the conversation's scheduled messages out of the scheduler's shared buckets
        and held list (the items themselves are the conversation's keys, deleted with it)."""
        ids = await self.redis.zrange(self.keys.sched_index(conversation_id), 0, -1)
        if not ids:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for ident in ids:
                pipe.hget(self.keys.sched_item(conversation_id, _text(ident)), "bucket")
            buckets = await pipe.execute()
        async with self.redis.pipeline(transaction=False) as pipe:
            for ident, bucket in zip(ids, buckets, strict=True):
                pipe.zrem(self.keys.sched_held, sched_member(conversation_id, _text(ident)))
                if bucket:
                    # The buckets are every tenant's: their member names this tenant.
                    name = self.keys.sched_bucket_member(conversation_id, _text(ident))
                    pipe.zrem(self.keys.sched_due(_text(bucket)), name)
                    pipe.zrem(self.keys.sched_claimed(_text(bucket)), name)
            await pipe.execute()

    async def _mark(self, conversation_id: str, turn_ids: set[str]) -> set[str]:
        """Mark the conversation's turns erased (see the module's doc); the keys written."""
        k, ttl = self.keys, self.turn_ttl_s
        marks = {k.erased(conversation_id)}
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.sadd(k.erased(conversation_id), *sorted(turn_ids))
            pipe.expire(k.erased(conversation_id), ttl)
            for turn_id in sorted(turn_ids):
                for service in self.services:
                    outbox = k.outbox(conversation_id, turn_id, service)
                    pipe.set(outbox, Outbox().dump(), ex=ttl)
                    marks.add(outbox)
                delivery = k.sent(conversation_id, turn_id)
                pipe.set(delivery, "erased", ex=ttl)
                marks.add(delivery)
            await pipe.execute()
        return marks

    async def erase(self, conversation_id: str) -> dict[str, Any]:
        """Delete every key of the conversation and anonymize its bookings."""
        now = utcnow()
        journal = await self.store.journal(conversation_id)
        turn_ids = {e["turn_id"] for e in journal if e.get("turn_id")}
        marks = await self._mark(conversation_id, turn_ids) if turn_ids else set()
        # A turn's merge record holds its texts; it expires with the turn, but goes now.
        merge_keys = [self.keys.merge_turn(t) for t in turn_ids]
        await self._unschedule(conversation_id)
        keys = [key for key in await self._keys(conversation_id) if key not in marks]
        deleted = 0
        for key in [*keys, *merge_keys]:
            deleted += int(await self.redis.unlink(key))
        # Global indexes name the conversation as a member, not in a key: the tenant's inbox
        # index by its id, the sets every tenant shares by its qualified id.
        member = self.keys.qualified(conversation_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrem(self.keys.conversation_index, conversation_id)
            for shared in (
                self.keys.pending_starts(conversation_id),
                self.keys.waiting_human,
                self.keys.human_owned,
            ):
                pipe.zrem(shared, member)
            await pipe.execute()
        anonymized = await self.bookings.anonymize(conversation_id, now=now)
        unlinked = {
            name: await records.anonymize(conversation_id, now=now)
            for name, records in self.records.items()
        }
        entry = {
            "at": now.isoformat(),
            "event": "conversation.erased",
            "conversation_sha256": conversation_hash(conversation_id),
            "keys": deleted,
            "bookings": len(anonymized),
            "records": {name: len(ids) for name, ids in unlinked.items()},
        }
        await self.redis.rpush(self.keys.privacy_log, json.dumps(entry))
        return {
            "erased": True,
            "keys_deleted": deleted,
            "bookings_anonymized": anonymized,
            "records_anonymized": unlinked,
        }


async def _known(deps: GatewayDeps, conversation_id: str) -> Privacy:
    privacy = deps.privacy
    if not await privacy.known(conversation_id):
        raise HTTPException(status_code=404, detail="no conversation with this id")
    return privacy


@router.get("/v1/conversations/{conversation_id}/export")
async def export_conversation(conversation_id: ConversationPath, deps: Deps) -> dict[str, Any]:
    """Every stored datum of the person of this conversation, as JSON."""
    return await (await _known(deps, conversation_id)).export(conversation_id)


@router.delete("/v1/conversations/{conversation_id}")
async def erase_conversation(conversation_id: ConversationPath, deps: Deps) -> dict[str, Any]:
    """Erase the conversation and anonymize its bookings; afterwards it is unknown (404)."""
    return await (await _known(deps, conversation_id)).erase(conversation_id)
