"""Conversation state slices, effectively-once commits and the decision journal.

Each slice is a JSON document with a version ``_v`` in the conversation's state hash, written by
exactly one service. A handler commits everything it decided for a turn at once: its slices
(compare-and-set on the versions it read), its outbox (the messages it is about to publish) and
its journal entries. A redelivered turn finds the outbox and republishes it instead of deciding
again, so a crash between commit and publish loses nothing and does nothing twice.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import from_json, to_json
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from shared import tracing
from shared.coalesce import coalescer
from shared.contracts import MemoryView, MetaView, ModeView, TrialView, now_ms, utcnow
from shared.funnel import DAY_TTL_S, SEEN_TTL_S, Tally
from shared.keys import Keys
from shared.lua import Scripts

M = TypeVar("M", bound=BaseModel)


class StateConflict(RuntimeError):
    """A slice changed between load and commit (another writer, or a late redelivery)."""


class UnregisteredSlice(ValueError):
    """A service wrote a slice its spec does not declare: it would never load it back."""


# The mode router's slice (its ``Owns``): the funnel mode, which other services read.
MODE = "mode"
# The state hash's field of the messages of the turn in flight (``shared/lua.py``'s starts and
# release): a JSON array of inbox entries, no slice.
IN_FLIGHT = "inflight"
# A slice's version as ``encoded_write`` stores it, its last member (``shared.lua``'s
# ``version_of`` reads it the same way).
_LAST_VERSION = re.compile(r'"_v": ?(\d+)}$')
# How many conversations ``committed_here`` remembers (the newest commits), and which slices.
REMEMBERED = 4096
RECALLED = frozenset({MODE})


class CommittedHere:
    """The slices this process's commits of a conversation's latest turn wrote (per state key),
    and its commits of a turn still on their way to Redis: what another service of the same
    process may take of that turn instead of reading it (``recall``).

    The mode router decides a turn beside triage, and the specialist that triage's task
    reaches goes by the mode it decided. Run together, both take the turn at once; triage's
    understanding runs first and sends its commit, then the mode router decides and sends its
    own, so when triage's answer brings the specialist its task, the mode router's commit is
    on its way, or done. The specialist waits for that commit (no round trip of its own) and
    takes the slice as it wrote it. It is as fresh as a read made then would be; like such a
    read, nothing checks it again at the specialist's commit. Anything else (another turn, a
    slice no commit of the turn wrote, a commit that failed, another process's commit) is not
    remembered: the caller reads."""

    def __init__(self, kept: int = REMEMBERED, slices: frozenset[str] = RECALLED) -> None:
        self.kept = kept
        self.slices = slices  # the only ones recalled: nothing else is kept
        self._last: dict[str, tuple[str, dict[str, str]]] = {}
        self._sent: dict[tuple[str, str], list[tuple[frozenset[str], asyncio.Future[None]]]] = {}

    def sending(
        self, state_key: str, turn_id: str, written: Mapping[str, str]
    ) -> Callable[[bool], None] | None:
        """A commit of ``written`` for ``turn_id`` is about to be sent; call what this returns
        with whether it committed, once its answer is in (None: it writes no slice kept)."""
        written = {name: text for name, text in written.items() if name in self.slices}
        if not written:
            return None
        waiters = self._sent.setdefault((state_key, turn_id), [])
        sent = (frozenset(written), asyncio.get_running_loop().create_future())
        waiters.append(sent)

        def answered(committed: bool) -> None:
            waiters.remove(sent)
            if not waiters:
                self._sent.pop((state_key, turn_id), None)
            if committed:
                self.note(state_key, turn_id, written)
            sent[1].set_result(None)

        return answered

    def note(self, state_key: str, turn_id: str, written: Mapping[str, str]) -> None:
        written = {name: text for name, text in written.items() if name in self.slices}
        if not written:
            return
        last = self._last.pop(state_key, None)
        slices = dict(last[1]) if last is not None and last[0] == turn_id else {}
        slices.update(written)
        self._last[state_key] = (turn_id, slices)
        if len(self._last) > self.kept:
            del self._last[next(iter(self._last))]

    async def recall(self, state_key: str, turn_id: str, *names: str) -> Snapshot | None:
        """The named slices as this process's commits of ``turn_id`` wrote them, once those of
        its commits that write any of them and are on their way are answered; None unless
        they wrote every one."""
        loop = asyncio.get_running_loop()
        for written, answer in list(self._sent.get((state_key, turn_id), ())):
            if answer.get_loop() is loop and not written.isdisjoint(names):
                await asyncio.wait([answer])
        last = self._last.get(state_key)
        if last is None or last[0] != turn_id or any(name not in last[1] for name in names):
            return None
        raw = {name: last[1][name] for name in names}
        return Snapshot(Slices(raw), raw)


committed_here = CommittedHere()


class Slices(Mapping[str, "dict[str, Any] | None"]):
    """A state hash's slices as read (``raw``: name -> JSON), each decoded the first time it
    is asked for; ``decoded`` are slices given decoded (None: known to be absent).

    A turn brings every slice of its conversation to each of its handlers, which read a few:
    decoding them all was most of what a handler spent before deciding."""

    def __init__(
        self, raw: Mapping[str, str], decoded: Mapping[str, dict[str, Any] | None] | None = None
    ) -> None:
        self._raw = raw
        self._decoded: dict[str, dict[str, Any] | None] = dict(decoded or {})

    def __getitem__(self, name: str) -> dict[str, Any] | None:
        if name in self._decoded:
            return self._decoded[name]
        value: dict[str, Any] = from_json(self._raw[name])
        self._decoded[name] = value
        return value

    def __iter__(self) -> Iterator[str]:
        yield from self._raw
        yield from (name for name in self._decoded if name not in self._raw)

    def __len__(self) -> int:
        return len(self._raw) + sum(1 for name in self._decoded if name not in self._raw)

    def __repr__(self) -> str:
        return f"Slices({dict(self)!r})"


@dataclass
class Snapshot:
    """All slices of one conversation as loaded, with the versions to compare against."""

    slices: Mapping[str, dict[str, Any] | None]
    # The slices' JSON as read, when the snapshot was read from a state hash (``snapshot_of``):
    # what ``state_after`` passes on for a slice a decision leaves as it was.
    raw: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    def get(self, name: str) -> dict[str, Any] | None:
        return self.slices.get(name)

    def version(self, name: str) -> int:
        text = self.raw.get(name)
        if text is not None and (found := _LAST_VERSION.search(text, max(0, len(text) - 24))):
            return int(found[1])  # written last by ``encoded_write``: read without decoding
        data = self.slices.get(name)
        return int(data.get("_v", 0)) if data else 0

    def model(self, name: str, model: type[M]) -> M | None:
        """The slice as ``model``: the owner's own model, or another slice's public view."""
        data = self.slices.get(name)
        return model.model_validate(data) if data else None

    def mode(self) -> str | None:
        """The conversation's funnel mode (mode_router's slice), if it has one yet."""
        view = self.model(MODE, ModeView)
        return view.mode if view else None

    def trial(self) -> TrialView | None:
        """The trial booking flow (the trial specialist's slice), if it has started."""
        return self.model("trial", TrialView)

    def memory(self) -> MemoryView | None:
        """What the conversation said so far (triage's memory slice), once a turn came in."""
        return self.model("memory", MemoryView)

    def meta(self) -> MetaView | None:
        """Where the conversation happens (the gateway's slice), once a message came in."""
        return self.model("meta", MetaView)


@dataclass(frozen=True)
class ToMerge:
    """An input for the merger that a commit script adds to its turn's merge hash itself: if
    it completes the turn, the script adds ``ready`` (a ``MergeReady`` JSON, which it fills
    with the hash) to the outbound stream, marks the turn published and takes ``deadline``
    (the member of the ``deadlines`` sorted set) off the merge deadlines."""

    key: str
    field: str
    input: str
    ready: str
    deadlines: str
    deadline: str


@dataclass(frozen=True)
class Sent:
    """A message a commit script publishes itself (``StateStore.commit``): ``data`` (encoded
    by FastStream) added to ``stream``; or, with ``merge``, an input for the merger added to
    its turn's hash, and only when that input completes the turn the ``MergeReady`` added to
    ``stream`` (the outbound stream) after ``data`` (FastStream's envelope of an empty body),
    with the merge hash as its ``fields``; or, with ``tally``, a funnel step counted by the
    script itself (nothing is added to ``stream``)."""

    stream: str
    data: bytes
    merge: ToMerge | None = None
    tally: Tally | None = None
    # Consumer groups of this process that take the message as it is added: (group,
    # consumer) pairs the script reads it for (``shared.bus``, "read on write").
    takers: tuple[tuple[str, str], ...] = ()
    # What those takers run when it is not ``data``: the message with the state it carries,
    # which the stream keeps without (``shared.bus.Bus.encode_kept``).
    taken: bytes | None = None


@dataclass(frozen=True)
class TakenEntry:
    """A stream entry a commit script read for one of this process's consumer groups."""

    stream: str
    group: str
    message_id: str
    data: bytes


def takers_args(takers: tuple[tuple[str, str], ...]) -> list[str | int]:
    """A script's takers arguments: their count, then each (group, consumer)."""
    return [len(takers), *(name for taker in takers for name in taker)]


def taken_of(result: Sequence[Any], data: list[bytes]) -> Iterator[TakenEntry]:
    """The entries a script took (``shared/lua.py``'s ``take``, five fields each in one flat
    list: ``flat``): ``data`` are the messages of its items, in order, for an entry it names by
    item (a notice: after its envelope)."""
    for at in range(0, len(result), 5):
        stream, group, entry_id, item, extra = result[at : at + 5]
        # An older entry (item 0) comes whole, hex-encoded; an item's may come with a tail.
        body = data[int(item) - 1] + str(extra).encode() if item else bytes.fromhex(str(extra))
        yield TakenEntry(str(stream), str(group), str(entry_id), body)


@dataclass(frozen=True)
class Committed:
    """What a commit did besides writing: the funnel steps its script counted (``Tally``) and
    the entries it read for this process's groups (``Sent.takers``). ``before``: nothing was
    written, the turn was committed before by a commit that published everything itself (one
    stored no outbox: ``StateStore.commit``'s ``marked``)."""

    counted: tuple[str, ...] = ()
    taken: tuple[TakenEntry, ...] = ()
    before: bool = False


@dataclass
class Outbox:
    """Messages a handler publishes for one turn: (stream, payload JSON) pairs."""

    messages: list[tuple[str, str]] = field(default_factory=list)
    # The models ``add`` serialized, in the same order: read by the commit's publishing
    # (``shared.service.sendable``) rather than parsed back. Not stored with the outbox.
    models: list[BaseModel] = field(default_factory=list, compare=False, repr=False)

    def add(self, stream: str, message: BaseModel) -> None:
        self.messages.append((stream, message.model_dump_json()))
        self.models.append(message)

    def dump(self) -> str:
        return json.dumps(self.messages)

    @classmethod
    def load(cls, raw: str | bytes) -> Outbox:
        return cls([(s, p) for s, p in json.loads(raw)])


def encoded_write(
    snapshot: Snapshot | None, name: str, value: BaseModel | Mapping[str, Any]
) -> str:
    """A slice as a commit on ``snapshot`` stores it: its JSON, one version past the
    snapshot's, as its last member (``shared.lua`` ``version_of`` reads it off the end).

    Encoded by pydantic-core, a model straight from itself: a commit encodes each slice it
    writes, several a turn, and a dump to a dict then ``json.dumps`` cost about four times
    as much."""
    version = (snapshot.version(name) if snapshot else 0) + 1
    if not isinstance(value, BaseModel):
        data = {key: item for key, item in value.items() if key != "_v"}
        data["_v"] = version
        return to_json(data).decode()
    text = value.model_dump_json()
    return f'{text[:-1]},"_v":{version}}}' if text != "{}" else f'{{"_v":{version}}}'


def state_after(snapshot: Snapshot, writes: Mapping[str, Any]) -> dict[str, str]:
    """The state hash as a commit of ``writes`` on ``snapshot`` leaves it (slice name -> its
    JSON): what a turn's next handler may decide on without reading it."""
    raw = snapshot.raw
    state: dict[str, str] = {}
    for name in snapshot.slices:
        if text := raw.get(name):
            state[name] = text  # as read: not decoded to be encoded again
        elif (data := snapshot.slices[name]) is not None:
            state[name] = json.dumps(data, ensure_ascii=False)
    for name, value in writes.items():
        state[name] = encoded_write(snapshot, name, value)
    return state


def snapshot_of(raw: Mapping[Any, Any], newer: Snapshot | None = None) -> Snapshot:
    """The slices of a state hash as read: every field but the messages in flight (the
    gateway's ``IN_FLIGHT``, no slice), each decoded when first asked for (``Slices``, by
    pydantic-core's parser, two to three times as fast as ``json.loads``); the slices of
    ``newer`` in place of those read (a slice it knows absent, absent)."""
    read = {name: value for name, value in raw.items() if name != IN_FLIGHT}
    decoded: dict[str, dict[str, Any] | None] = {}
    if newer is not None:
        for name in newer.slices:
            if name in newer.raw:
                read[name] = newer.raw[name]
            else:
                read.pop(name, None)
                decoded[name] = newer.slices[name]
    return Snapshot(Slices(read, decoded), read)


async def read_slices(redis: Redis, keys: Keys, conversation_id: str, *names: str) -> Snapshot:
    """Only the named slices of a conversation, in one round trip: for a service that reads
    other services' slices (through their views) and commits none of its own."""
    raw = await redis.hmget(keys.state(conversation_id), list(names))
    return Snapshot(
        {name: from_json(value) if value else None for name, value in zip(names, raw, strict=True)}
    )


def journal_entry(service: str, turn_id: str | None, event: str, /, **data: Any) -> str:
    """One journal line; ``data`` adds fields but never replaces the four every entry has. A
    tenant's journal stores it with its tenant too (``stamp_tenant``, by the writers). With
    tracing on, it carries the id of the trace it was written in (``trace_id``): the turn's,
    so an entry leads to the turn's trace and back."""
    entry = {
        **data,
        "at": utcnow().isoformat(),
        "service": service,
        "turn_id": turn_id,
        "event": event,
    }
    if tracing.active() and (trace := tracing.trace_id()):
        entry["trace_id"] = trace
    return json.dumps(entry, default=str, ensure_ascii=False)


def stamp_tenant(tenant: str, *entries: str) -> list[str]:
    """Journal entries as they are stored for ``tenant``: each names it (``"tenant"``, which no
    field of the entry replaces); for a deployment of one (``""``) the entries as they are.

    Stamped by the few writers of journals, which all hold the tenant's keys (``StateStore``,
    ``TurnKeeper.release``, ``ScheduleStore``), rather than by the many callers of
    ``journal_entry``: no caller can forget it, and no caller needs the tenant."""
    if not tenant:
        return list(entries)
    return [
        json.dumps({**json.loads(entry), "tenant": tenant}, ensure_ascii=False) for entry in entries
    ]


class StateStore:
    def __init__(
        self,
        redis: Redis,
        scripts: Scripts,
        keys: Keys,
        *,
        journal_max: int,
        state_ttl_s: int,
        outbox_ttl_s: int,
        owner: str | None = None,
        owns: Collection[str] | None = None,
    ) -> None:
        """``owner`` and ``owns``: the service and the slices its spec declares; a commit of
        any other slice fails at once (``None``: unchecked, for tests of the store itself)."""
        self.redis = redis
        self.owner = owner
        self.owns = None if owns is None else frozenset(owns)
        self.scripts = scripts
        self.keys = keys
        self.journal_max = journal_max
        self.state_ttl_s = state_ttl_s
        self.outbox_ttl_s = outbox_ttl_s

    async def load(self, conversation_id: str) -> Snapshot:
        return snapshot_of(await self.redis.hgetall(self.keys.state(conversation_id)))

    async def load_turn(
        self,
        conversation_id: str,
        turn_id: str,
        service: str,
        marker: tuple[str, str] | None = None,
    ) -> tuple[Outbox | None, Snapshot]:
        """What a handler needs first, in one round trip: its stored outbox for the turn (if it
        committed before) and the conversation's slices. With ``marker`` (a merge hash and the
        field a commit without an outbox is marked by), a commit marked so is found too, as
        an empty outbox: it published everything itself.

        The slices are read first: a commit of this turn by another replica that lands between
        the two reads is then either seen in the outbox, or missing from the slices, so the
        commit of a decision made on them finds the versions moved (``COMMIT`` looks for the
        outbox of the conversation's current turn only then)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.keys.state(conversation_id))
            pipe.get(self.keys.outbox(conversation_id, turn_id, service))
            if marker is not None:
                pipe.hexists(*marker)
            raw_state, raw_outbox, *marked = await pipe.execute()
        outbox = Outbox.load(raw_outbox) if raw_outbox is not None else None
        if outbox is None and marked and marked[0]:
            outbox = Outbox()
        return outbox, snapshot_of(raw_state)

    async def in_flight(self, conversation_id: str) -> list[str]:
        """The inbox entries of the conversation's turn in flight (kept until its release)."""
        raw = await self.redis.hget(self.keys.state(conversation_id), IN_FLIGHT)
        return list(json.loads(raw)) if raw else []

    async def erased(self, conversation_id: str, turn_id: str) -> bool:
        """Whether the conversation was erased while ``turn_id`` was in flight: a record the
        turn wrote meanwhile is the erased person's and must be anonymized too."""
        return bool(await self.redis.sismember(self.keys.erased(conversation_id), turn_id))

    async def outbox(self, conversation_id: str, turn_id: str, service: str) -> Outbox | None:
        raw = await self.redis.get(self.keys.outbox(conversation_id, turn_id, service))
        return Outbox.load(raw) if raw is not None else None

    async def commit(
        self,
        conversation_id: str,
        turn_id: str,
        service: str,
        *,
        snapshot: Snapshot | None,
        writes: dict[str, BaseModel | dict[str, Any]],
        outbox: Outbox,
        journal: list[str],
        publish: Sequence[Sent] = (),
        ack: tuple[str, str, str] | None = None,
        maxlen: int = 1,
        merge_ttl_s: int = 1,
        republish_after_ms: int = 0,
        marked: bool = False,
        encoded: Mapping[str, str] | None = None,
    ) -> Committed | None:
        """Write slices, outbox and journal atomically. None if this turn was committed before
        (its outbox stored: the caller republishes it).

        A turn committed before is found by the versions of the slices it wrote: a snapshot
        from before that commit no longer matches them. A snapshot read after it comes with the
        outbox read after it too (``load_turn``): the caller republishes that outbox instead of
        committing again. (A commit that writes no slice, or of a turn that is not the
        conversation's current one, looks for its outbox first.)

        ``publish`` and ``ack`` (stream, group, message id): on one Redis, the same script
        publishes the outbox and acknowledges the delivery, only when it commits
        (``shared.bus.riding``); ``maxlen``, ``merge_ttl_s`` and ``republish_after_ms`` are the
        settings of those publishes and merge inputs. ``marked`` (with ``ack``, and a merge input
        in ``publish``): no outbox is stored, since the script publishes all of it; the first
        merge input marks the commit instead, which ``COMMIT`` looks for where it would look
        for the outbox. Only for a ``snapshot`` in which no commit of this turn can hide: one
        from before any (the state a turn brings), or one loaded with that mark looked for
        (``load_turn``'s ``marker``). Committed before so: ``Committed(before=True)``.
        ``encoded``: slices of ``writes`` already encoded on ``snapshot`` (``encoded_write``,
        as ``state_after`` did for the state a decision's tasks carry), not encoded again.
        Raises StateConflict when a slice's
        version moved since ``snapshot`` was loaded, and UnregisteredSlice (before any write)
        when a slice is not one the service declares.
        """
        if self.owns is not None:
            undeclared = sorted(name for name in writes if name not in self.owns)
            if undeclared:
                raise UnregisteredSlice(
                    f"{self.owner or service} writes slice(s) {', '.join(undeclared)} that its "
                    f"spec does not declare: add Owns(<slice>, <model>) to "
                    f"services/{self.owner or service}/spec.py (registered in "
                    "services/registry.py)"
                )
        args: list[Any] = [len(writes)]
        written: dict[str, str] = {}
        for name, value in writes.items():
            expected = snapshot.version(name) if snapshot else 0
            data = written[name] = (encoded or {}).get(name) or encoded_write(snapshot, name, value)
            args += [name, expected, data]
        args += ["" if marked else outbox.dump(), self.outbox_ttl_s]
        args += [self.journal_max, self.state_ttl_s]
        args += [ack[1], ack[2]] if ack else ["", ""]
        args += [len(publish), maxlen, merge_ttl_s, now_ms(), republish_after_ms]
        keys = [
            self.keys.state(conversation_id),
            self.keys.outbox(conversation_id, turn_id, service),
            self.keys.journal(conversation_id),
        ]
        for sent in publish:
            if sent.tally is not None:
                t = sent.tally
                args += ["f", t.marker, t.at, t.step, t.source, SEEN_TTL_S, DAY_TTL_S]
                keys += [t.seen, t.day]
            elif (m := sent.merge) is not None:
                args += ["m", m.field, m.input, sent.data, m.ready, m.deadline]
                args += takers_args(sent.takers)
                keys += [m.key, sent.stream, m.deadlines]
            else:
                args += ["x", sent.data, *takers_args(sent.takers)]
                keys.append(sent.stream)
        if ack:
            keys.append(ack[0])
        args += stamp_tenant(self.keys.tenant, *journal)
        answered = committed_here.sending(keys[0], turn_id, written)
        status = None
        try:
            result = await coalescer.call(self.redis, self.scripts.commit, keys, args)
            status = int(result[0])
        finally:
            if answered is not None:
                answered(status == 1)
        if status == 0:
            raise StateConflict(f"slice {result[1]} of {conversation_id} changed concurrently")
        if status == -2:
            return Committed(before=True)
        if status != 1:
            return None
        counted = 2 + int(result[1])
        taken = tuple(taken_of(result[counted:], [sent.taken or sent.data for sent in publish]))
        return Committed(tuple(str(step) for step in result[2:counted]), taken)

    async def append_journal(self, conversation_id: str, *entries: str) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            self.queue_journal(pipe, conversation_id, *entries)
            await pipe.execute()

    def queue_journal(
        self, pipe: Pipeline, conversation_id: str, *entries: str, trim: bool = True
    ) -> None:
        """Append journal entries as part of a caller's pipeline (one round trip for both).
        ``trim=False`` leaves the trim to an append that follows for certain: the scripts'
        appends (``push_list``) trim a journal longer than its maximum."""
        key = self.keys.journal(conversation_id)
        pipe.rpush(key, *stamp_tenant(self.keys.tenant, *entries))
        if trim:
            pipe.ltrim(key, -self.journal_max, -1)
        pipe.expire(key, self.state_ttl_s)

    async def journal(self, conversation_id: str, last: int | None = None) -> list[dict[str, Any]]:
        """The journal in order; with ``last``, only its newest ``last`` entries."""
        start = -last if last else 0
        raw = await self.redis.lrange(self.keys.journal(conversation_id), start, -1)
        return [json.loads(r) for r in raw]
