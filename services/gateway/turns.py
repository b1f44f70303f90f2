"""Ordering, bursts and leases: how messages become turns.

- ``ingest``: dedupe claim on (conversation, message id), append to the conversation's inbox,
  update the meta slice and the burst hold — one Lua script. Then schedule a turn start after
  the quiet window the message calls for (``burst.py``: control words start at once, a fragment
  such as "oi" waits longer for the rest, anything else waits the short window). A message
  that calls for no window starts its turn in the same script (as ``try_start`` would).
- ``try_start``: if no turn is in flight, take the lease, move the inbox into the in-flight list
  and publish one Turn with every waiting message.
- ``release``: after the reply is handed to the channel, compare-and-delete the lease and start
  the next turn at once if messages waited meanwhile, unless the latest of them is a fragment
  still within its quiet window (the burst hold key, set by ``ingest``).

The sorted set ``pending_starts`` remembers every conversation that may need a start: scored by
the burst deadline while messages wait, and by the lease expiry while a turn is in flight. The
sweeper visits due entries, which recovers bursts whose timer died with another gateway replica
and turns whose lease expired (every consumer of the turn died): the messages still in flight
are taken again. Entries are removed only when a start found nothing to do and the score is
unchanged (a message that arrived meanwhile re-scored it).

Every tenant's conversations are in the same sets (one per partition), as ``Keys.qualified``
members (``tenant~conversation``; the bare id for the single business), so one sweeper per
gateway process (``sweeper``) visits them all and hands each due one to its tenant's
``TurnKeeper``; a member of a tenant the process does not serve stays for one that does. The
member is only ever the set's: every other key and script argument takes the conversation id.

Bad input cannot stop a conversation: ``ingest`` refuses a message whose time is out of bounds
(``MessageRefused``), and a start screens what it took (``screen_entries``): an entry that is
not a usable message (only a writer that bypassed ``ingest`` leaves one) goes to the
dead-letter stream with its reason and is journaled, and the rest of the turn goes on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError
from redis.asyncio import Redis, RedisCluster
from redis.asyncio.client import Pipeline
from redis.exceptions import ConnectionError, TimeoutError
from structlog.typing import FilteringBoundLogger

from services.gateway.burst import Quiet, quiet_after
from services.gateway.history import history_entry
from shared import lua, tracing
from shared.bus import Delivery, Taking, riding
from shared.connections import retryable
from shared.contracts import (
    DeadLetter,
    InboundMessage,
    Reply,
    Turn,
    new_id,
    now_ms,
    sent_at_problem,
    utcnow,
)
from shared.durability import NotReplicated, ReplicaAck, master_of
from shared.keys import Keys
from shared.lua import Scripts
from shared.merge import queue_open
from shared.metrics import TURNS_STARTED
from shared.nlu.fragment import Fragments
from shared.nlu.normalize import normalize
from shared.nlu.starred import with_starred_corrections
from shared.reply_window import window_expires_at
from shared.service import Lookup
from shared.settings import Settings
from shared.state import StateStore, journal_entry, stamp_tenant
from shared.sweep import due_members


class Publish(Protocol):
    """``Bus.publish``: with ``pipeline``, the message goes out when the pipeline executes;
    with ``taking`` too, it may be read on write for a subscription of this process, run
    after the pipeline (``shared.bus.Taking``)."""

    async def __call__(
        self,
        stream: str,
        payload: str | BaseModel,
        *,
        pipeline: Pipeline | None = None,
        taking: list[Taking] | None = None,
    ) -> None: ...


# A channel's answer to a turn it handles itself (WhatsApp media): the reply and a journal entry.
OwnAnswer = Callable[[Turn], tuple[Reply, str] | None]
# A channel's hook when a fragment starts the longer wait (WhatsApp shows "typing...").
OnFragment = Callable[[InboundMessage], None]
# The reply window of a channel, by name (``ChannelSet.reply_window``; None: no window).
ReplyWindow = Callable[[str], timedelta | None]

HELD_FOR_HUMAN = 2  # INGEST's answer when a human owns the conversation
# The http channel's reply stream (``Keys.replies``) lives this long after the TTLs of its
# conversation were last set (``lua.ttl_due``: by a message's ingest, or by a reply).
REPLIES_TTL_S = 7 * 24 * 3600
SWEEP_BATCH = 200  # due conversations started per partition and sweep
INDEX_PRUNE_EVERY_MS = 60_000  # the staff inbox's index, pruned by each process at most this often
START_JOURNAL_ATTEMPTS = 5  # a start's journal entry and replica wait, over broken connections

# Single-key script on the pending set: remove a member only if its score is still `expected`.
ZREM_IF_SCORE = (
    lua.ARG_CHECKS
    + """
need_keys(1)
str_arg(1, 'member')
int_arg(2, 'expected_score', 0)
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
"""
)


class MessageRefused(Exception):
    """A message ``ingest`` does not take: its ``field`` breaks a bound (nothing was stored)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def screen_entries(
    entries: list[str], conversation_id: str, now: datetime, max_future_days: int
) -> tuple[list[InboundMessage], list[tuple[str, str]]]:
    """The in-flight entries a turn can use, as messages, and (entry, reason) for the others:
    not ``<epoch ms>|<message JSON>``, another conversation's message, or a time out of
    bounds (``sent_at_problem``). Pure."""
    messages: list[InboundMessage] = []
    rejected: list[tuple[str, str]] = []
    for entry in entries:
        stamp, bar, body = entry.partition("|")
        if not bar or not (stamp.isascii() and stamp.isdigit()):
            rejected.append((entry, "not an inbox entry (<epoch ms>|<message JSON>)"))
            continue
        try:
            message = InboundMessage.model_validate_json(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "message"
            rejected.append((entry, f"not a valid message: {where}: {first['msg']}"))
            continue
        problem = sent_at_problem(message.sent_at, now, max_future_days)
        if message.conversation_id != conversation_id:
            problem = "a message of another conversation"
        if problem:
            rejected.append((entry, problem))
            continue
        messages.append(message)
    return messages, rejected


def joined_text(messages: list[InboundMessage], unfinished: Callable[[str], bool]) -> str:
    """The texts of a turn's messages, one per line, except that a question with no subject
    yet ("quanto custa") runs on into the next message ("a aula experimental"): one sentence.
    A starred message ("Rafaela*") corrects the word before it instead of following it."""
    texts = with_starred_corrections([m.text for m in messages if m.text])
    joints = (" " if unfinished(before) else "\n" for before in texts)
    return "".join(t + joint for t, joint in zip(texts, joints, strict=True)).rstrip(" \n")


def build_turn(
    turn_id: str,
    conversation_id: str,
    seq: int,
    prev_ms: str,
    messages: list[InboundMessage],
    unfinished: Callable[[str], bool],
    state: dict[str, str] | None = None,
) -> Turn:
    """The Turn for the drained messages: texts in order (see :func:`joined_text`), ``now`` =
    the latest message's time; ``state``: the conversation's state hash as the turn started."""
    latest = max(messages, key=lambda m: m.sent_at)
    previous = datetime.fromtimestamp(int(prev_ms) / 1000, UTC) if prev_ms else None
    return Turn(
        turn_id=turn_id,
        conversation_id=conversation_id,
        channel=latest.channel,
        seq=seq,
        messages=messages,
        text=joined_text(messages, unfinished),
        now=latest.sent_at,
        previous_message_at=previous,
        state=state,
    )


@dataclass(frozen=True)
class ReleaseCall:
    """A turn's release as ``RELEASE`` takes it (its keys and first ten arguments; the journal
    entries follow), for ``TurnKeeper.release`` or a channel's delivery script."""

    conversation_id: str
    turn_id: str
    next_id: str  # the turn the release starts, if messages waited
    keys: list[str]
    args: list[str | int]
    delivery: Delivery | None  # the reply's delivery, acknowledged by the script
    pending: str | None  # on a cluster: the pending starts, read before the release


@dataclass(frozen=True)
class Started:
    """A start script's answer for a turn it started (``lua._START_TURN``)."""

    seq: int
    prev_ms: str
    answered: str
    state: dict[str, str]
    entries: list[str]

    @classmethod
    def of(cls, result: list[Any]) -> Started:
        n = int(result[4])
        flat = result[5 : 5 + n]
        state = dict(zip(flat[::2], flat[1::2], strict=True))
        return cls(int(result[1]), result[2], result[3], state, list(result[5 + n :]))


def _message_id(entry: str) -> str:
    """The message id of an inbox entry, if it has one that can be read."""
    try:
        raw = json.loads(entry.partition("|")[2])
    except ValueError:
        return ""
    found = raw.get("message_id") if isinstance(raw, dict) else None
    return found if isinstance(found, str) else ""


class TurnKeeper:
    """The gateway's side of the turn lifecycle, over Redis."""

    def __init__(
        self,
        redis: Redis,
        scripts: Scripts,
        keys: Keys,
        settings: Settings,
        store: StateStore,
        publish: Publish,
        log: FilteringBoundLogger,
        own_answer: OwnAnswer | None = None,
        fragments: Fragments | None = None,
        on_fragment: OnFragment | None = None,
        reply_window: ReplyWindow | None = None,
        ack: ReplicaAck | None = None,
    ) -> None:
        self.redis = redis
        self.ack = ack or ReplicaAck()
        self.scripts = scripts
        self.keys = keys
        self.settings = settings
        self.store = store
        self.publish = publish
        self.log = log
        self.own_answer = own_answer
        self.fragments = fragments or Fragments([])
        self.on_fragment = on_fragment
        self.reply_window = reply_window
        self.zrem_if_score = redis.register_script(ZREM_IF_SCORE)
        self.control_words = {normalize(w) for w in settings.control_words}
        self._timers: set[asyncio.TimerHandle] = set()
        self._starting: set[asyncio.Task[None]] = set()
        self._index_pruned_ms = 0

    # Ingress -----------------------------------------------------------------------------

    async def ingest(self, message: InboundMessage) -> bool:
        """Store one inbound message; False when it is a duplicate delivery. Raises
        ``MessageRefused`` (nothing stored) when its time is out of bounds.

        With tracing on, the message's span (a child of its request's) is stored with it, for
        its turn to continue (``shared/tracing.py``)."""
        if not tracing.active():
            return await self._ingest(message, None)
        with tracing.span(
            "message ingest",
            channel=message.channel,
            kind=message.kind,
            message_id=message.message_id,
        ):
            return await self._ingest(message, tracing.traceparent())

    async def _ingest(self, message: InboundMessage, trace: str | None) -> bool:
        problem = sent_at_problem(message.sent_at, utcnow(), self.settings.sent_at_max_future_days)
        if problem:
            raise MessageRefused("sent_at", problem)
        conv = message.conversation_id
        ts = int(message.sent_at.timestamp() * 1000)
        window = self.reply_window(message.channel) if self.reply_window else None
        patch = {
            "always": {"channel": message.channel},
            "latest": {
                "last_message_at": message.sent_at.isoformat(),
                # Null for a channel without a reply window (cleared if one was stored).
                "window_expires_at": window_expires_at(message.sent_at, window),
            },
            "first": {
                "origin": message.origin,
                "first_message_at": message.sent_at.isoformat(),
                "handoff": "bot",
            },
        }
        if message.contact:
            patch["always"]["contact"] = message.contact
        if message.campaign_mode:
            patch["first"]["campaign_mode"] = message.campaign_mode
        referral = message.metadata.get("referral")
        if referral:
            # The click-to-WhatsApp ad that brought the person (ctwa_clid, source id,
            # headline): the first one is the conversation's attribution, the latest is kept.
            patch["first"]["referral"] = referral
            patch["latest"]["last_referral"] = referral
        entry = f"{ts}|{tracing.stamp_entry(message.model_dump_json(), trace)}"
        quiet = self.quiet_after(message.text)
        # A message that calls for no quiet window starts its turn in the same script.
        turn_id = new_id() if not quiet.ms else ""
        # On one Redis the script then scores its pending start by the lease, as a published
        # turn's is: a release cannot run between them and take the score off (it found
        # nothing to start) to leave the new turn without one. On a cluster the two are on
        # different nodes: the score goes first, due at once, and the publish scores the
        # turn's again.
        scored = bool(turn_id) and self.settings.redis_mode != "cluster"
        said = history_entry(message.message_id, "customer", message.text, message.sent_at)
        index = self.keys.conversation_index
        keys = [
            self.keys.dedupe(conv, message.message_id),
            self.keys.inbox(conv),
            self.keys.state(conv),
            self.keys.history(conv),
            self.keys.burst_hold(conv),
            self.keys.replies(conv),
        ]
        args: list[str | int] = [
            entry,
            self.settings.dedupe_ttl_s,
            json.dumps(patch),
            ts,
            self._keep_s,
            said,
            self.settings.history_kept,
            self._hold_ms(quiet),
            now_ms(),
            REPLIES_TTL_S,
        ]
        if turn_id:
            k = self.keys
            keys += [k.lease(conv), k.sent_prefix(conv)]
            args += [turn_id, self.settings.lease_ttl_ms, self._max_ts_ms]
            if scored:
                keys.append(k.pending_starts(conv))
                args.append(k.qualified(conv))
        async with self.redis.pipeline(transaction=False) as pipe:
            if not scored:
                due = {self.keys.qualified(conv): now_ms() + quiet.ms}
                pipe.zadd(self.keys.pending_starts(conv), due)
            lua.queue(pipe, self.scripts.ingest, keys=keys, args=args)
            pipe.zadd(index, {conv: now_ms()}, gt=True)
            self._queue_index_prune(pipe)
            # Answered 2xx only once a replica holds the message and the pending start that
            # makes the sweeper come back to it (when replicas are asked for).
            queued = len(pipe)
            waits = self.ack.queue(pipe, self.redis, keys[0], self.keys.pending_starts(conv))
            done = await self.ack.execute(pipe)
        result = done[0 if scored else 1]
        fresh = await self._handled(message, result, turn_id, quiet, scored)
        # A message no replica confirmed is still on the master and handled like any other;
        # the sender is told to retry, and the retry (a duplicate) waits for the replica again.
        if waits:
            what = f"message {message.message_id} of {conv}"
            await self.ack.check(self.redis, waits, done[queued:], what)
        return fresh

    def _queue_index_prune(self, pipe: Pipeline) -> None:
        """The staff inbox forgets conversations whose state expired where its index grows,
        rather than in a loop per tenant: an index nobody writes to does not grow, and the
        listing drops an entry whose state is gone when it meets one. Once a minute per process
        is enough for a TTL counted in days, and costs a turn no command."""
        now = now_ms()
        if now - self._index_pruned_ms < INDEX_PRUNE_EVERY_MS:
            return
        self._index_pruned_ms = now
        forgotten = now - self.settings.state_ttl_days * 86_400_000
        pipe.zremrangebyscore(self.keys.conversation_index, "-inf", forgotten)

    async def _handled(
        self, message: InboundMessage, result: list[Any], turn_id: str, quiet: Quiet, scored: bool
    ) -> bool:
        """Start or schedule the turn of a message ``INGEST`` stored; False for a duplicate."""
        conv = message.conversation_id
        fresh = int(result[0])
        if not fresh:
            return False
        if fresh == HELD_FOR_HUMAN:
            await self.store.append_journal(
                conv,
                journal_entry(
                    "gateway",
                    None,
                    "message.held_for_human",
                    message_id=message.message_id,
                    text=message.text,
                ),
            )
            return True
        if turn_id:
            # Started, or busy: the turn in flight starts the next one as it is released.
            self._run(conv, self._after_start(conv, turn_id, result[1:], None, scored=scored))
        else:
            self._schedule(conv, quiet.ms / 1000)
        if quiet.rule == "fragment" and self.on_fragment:
            self.on_fragment(message)
        return True

    def quiet_after(self, text: str) -> Quiet:
        """The quiet window after a message with ``text`` (the latest message decides)."""
        s = self.settings
        fragment = self._fragment_rule and self.fragments.is_fragment(text)
        return quiet_after(
            control=self._is_control(text),
            fragment=fragment,
            window_ms=s.burst_window_ms,
            fragment_ms=s.burst_fragment_ms,
        )

    def _hold_ms(self, quiet: Quiet) -> int | str:
        """INGEST's burst-hold argument: set for a fragment's window, cleared by any other
        message, untouched ('') when the fragment rule is off."""
        if not self._fragment_rule:
            return ""
        return quiet.ms if quiet.rule == "fragment" else 0

    @property
    def _fragment_rule(self) -> bool:
        """Without a longer fragment wait, telling fragments apart would change nothing."""
        return self.settings.burst_fragment_ms > self.settings.burst_window_ms

    def _is_control(self, text: str) -> bool:
        words = set(normalize(text).split())
        return bool(words & self.control_words)

    def _schedule(self, conversation_id: str, delay_s: float) -> None:
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._timers.discard(handle)
            self._run(conversation_id, self._start_due(conversation_id))

        handle = loop.call_later(delay_s, fire)
        self._timers.add(handle)

    def _run(self, conversation_id: str, start: Coroutine[None, None, None]) -> None:
        """Run a start in its own task (kept until it ends); a failure is logged, and the
        sweeper retries the conversation."""

        async def logged() -> None:
            try:
                await start
            except Exception as exc:  # a timer or ingest has no caller to raise to
                self.log.error(
                    "turn start failed", conversation_id=conversation_id, error=repr(exc)
                )

        task = asyncio.get_running_loop().create_task(logged())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    def cancel_timers(self) -> None:
        for handle in self._timers:
            handle.cancel()
        self._timers.clear()

    # Starting and releasing --------------------------------------------------------------

    async def _start_due(self, conversation_id: str) -> None:
        """Start a turn if the burst window passed; otherwise wait for what remains of it.

        A timer whose pending entry is gone still tries: a release that found the inbox empty
        removes the score it read, and on a cluster that score can be this message's (its
        score and its inbox append run on different nodes, around the release). The start
        finds the message, or nothing to do."""
        found = await self.redis.zscore(
            self.keys.pending_starts(conversation_id), self.keys.qualified(conversation_id)
        )
        score = None
        if found is not None:
            remaining = int(found) - now_ms()
            if remaining > 0:
                self._schedule(conversation_id, remaining / 1000)
                return
            score = int(found)
        await self.try_start(conversation_id, score)

    async def try_start(self, conversation_id: str, score: int | None) -> None:
        turn_id = new_id()
        result = await self.scripts.try_start(
            keys=self._start_keys(conversation_id),
            args=[turn_id, self.settings.lease_ttl_ms, self._max_ts_ms],
        )
        await self._after_start(conversation_id, turn_id, result, score)

    async def release(
        self, conversation_id: str, turn_id: str, *journal: str, acknowledges: bool = False
    ) -> None:
        """Release the turn's lease and start the next turn if messages waited; ``journal``
        entries are written in the same round trip. ``acknowledges``: the release ends the
        handler of the reply's delivery, which its script then acknowledges (one Redis)."""
        call = self._release_call(conversation_id, turn_id, acknowledges)
        args = [*call.args, *self.stamp(*journal)]
        score: float | None = None
        if call.pending is None:
            result = await self.scripts.release(keys=call.keys, args=args)
        else:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zscore(call.pending, self.keys.qualified(conversation_id))
                lua.queue(pipe, self.scripts.release, keys=call.keys, args=args)
                score, result = await lua.execute(pipe)
        await self.released(call, result, score)

    def release_call(self, conversation_id: str, turn_id: str) -> ReleaseCall | None:
        """What a channel's own delivery script needs to release the turn in the same step
        (``lua.DELIVER_RELEASE``), ending the reply's delivery: on one Redis without replicas
        to wait for (a reply a replica does not hold must not be released); None otherwise."""
        if not self._plain:
            return None
        return self._release_call(conversation_id, turn_id, acknowledges=True)

    def stamp(self, *journal: str) -> list[str]:
        """Journal entries as this business's (``stamp_tenant``)."""
        return stamp_tenant(self.keys.tenant, *journal)

    def _release_call(self, conversation_id: str, turn_id: str, acknowledges: bool) -> ReleaseCall:
        delivery = riding(self.settings) if acknowledges else None
        # On one Redis the script itself takes the conversation off the pending starts when it
        # finds nothing to start; on a cluster that set is in another slot (read here first,
        # removed by ``_after_start`` if no message re-scored it since).
        single = self.settings.redis_mode != "cluster"
        pending = self.keys.pending_starts(conversation_id)
        member = self.keys.qualified(conversation_id)
        keys = [
            *self._turn_keys(conversation_id),
            self.keys.burst_hold(conversation_id),
            self.keys.journal(conversation_id),
            *([delivery.stream] if delivery else []),
            *([pending] if single else []),
        ]
        next_id = new_id()
        args: list[str | int] = [
            turn_id,
            next_id,
            self.settings.lease_ttl_ms,
            self._max_ts_ms,
            self.store.journal_max,
            self.store.state_ttl_s,
            *([delivery.group, delivery.message_id] if delivery else ["", ""]),
            member if single else "",
        ]
        return ReleaseCall(
            conversation_id, turn_id, next_id, keys, args, delivery, None if single else pending
        )

    async def released(
        self, call: ReleaseCall, result: list[Any], score: float | None = None
    ) -> None:
        """After a release script's ``result``: the next turn published, if one started."""
        if call.delivery:
            call.delivery.acked = True
        if result[0] == "not_owner":
            self.log.warning("lease no longer held by this turn", turn_id=call.turn_id)
            return
        await self._after_start(call.conversation_id, call.next_id, result, score)

    async def _after_start(
        self,
        conversation_id: str,
        turn_id: str,
        result: list[str],
        score: float | None,
        *,
        scored: bool = False,
    ) -> None:
        """Publish the turn a start script started (``scored``: its pending start already holds
        the lease's expiry, written with the start)."""
        status = result[0]
        if status == "empty":
            await self._answered_before(conversation_id, result[1])
            if score is not None:
                await self.zrem_if_score(
                    keys=[self.keys.pending_starts(conversation_id)],
                    args=[self.keys.qualified(conversation_id), int(score)],
                )
            return
        if status != "started":
            return
        started = Started.of(result)
        entries = started.entries
        await self._answered_before(conversation_id, started.answered)
        messages, rejected = screen_entries(
            entries, conversation_id, utcnow(), self.settings.sent_at_max_future_days
        )
        if rejected:
            await self._dead_letter(conversation_id, turn_id, rejected)
        if not messages:
            # Nothing usable was in flight: give the lease back (the next turn starts at once
            # if messages waited meanwhile).
            await self.release(conversation_id, turn_id)
            return
        seq = started.seq
        with tracing.turn_started(entries, turn_id=turn_id, seq=seq, messages=len(messages)):
            turn = build_turn(
                turn_id,
                conversation_id,
                seq,
                started.prev_ms,
                messages,
                self.fragments.is_unfinished,
                started.state,
            )
            entry = self._started_entry(turn)
            if self._confirms_starts:
                if not await self._confirm_start(conversation_id, turn_id, entry):
                    return
                await self._publish_turn(conversation_id, turn, scored=scored)
            else:
                await self._publish_turn(conversation_id, turn, entry, scored=scored)

    def _started_entry(self, turn: Turn) -> str:
        """The turn's ``turn.started`` journal entry: which messages it took up."""
        # The wait the latest message called for: the one its arrival scheduled.
        quiet = self.quiet_after(turn.messages[-1].text)
        return journal_entry(
            "gateway",
            turn.turn_id,
            "turn.started",
            seq=turn.seq,
            messages=[m.text for m in turn.messages],
            message_ids=[m.message_id for m in turn.messages],
            now=turn.now.isoformat(),
            quiet_ms=quiet.ms,
            quiet_rule=quiet.rule,
        )

    @property
    def _confirms_starts(self) -> bool:
        """Whether a start is journaled and confirmed on its own before the turn goes out.

        With replicas to wait for, a start a replica does not hold could be lost with its
        master and redone by the promoted replica while the first turn is answered too (one
        message, two answers). On a cluster the publish pipeline spans several nodes, and
        one node's broken connection fails it after the others ran theirs: the turn went
        out, its journal entry did not. One Redis without replicas needs neither (its
        pipeline is one connection, retried whole), and keeps the single round trip."""
        return not self._plain

    @property
    def _plain(self) -> bool:
        """One Redis without replicas to wait for: what a script wrote is there as it returns,
        so one step may hold what would otherwise be confirmed between two."""
        return not self.ack.on and self.settings.redis_mode != "cluster"

    async def _confirm_start(self, conversation_id: str, turn_id: str, started: str) -> bool:
        """Journal the turn's start and wait for a replica to hold it, with the start script's
        writes before it, on the conversation's master; True when the turn may go out.

        The journal append and its ``WAIT`` share one connection to the master that ran the
        start (the journal is in the conversation's slot), so the ``WAIT`` covers the start
        too. A dropped connection is retried (a retry may append the entry twice, for the
        same turn id; it is never missing), on the same master only: a slot that moved in a
        failover has a new master that may lack the start. A start no replica confirmed is not
        published: it stays on the master with its lease, and once the lease expires the
        sweeper takes its messages up again, in one turn that is answered once, whichever
        node holds them by then."""
        key = self.keys.journal(conversation_id)
        origin = self._master_name(key)
        for attempt in range(1, START_JOURNAL_ATTEMPTS + 1):
            if attempt > 1 and self._moved(key, origin, conversation_id, turn_id):
                return False
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    self.store.queue_journal(pipe, conversation_id, started)
                    waits = self.ack.queue(pipe, self.redis, key)
                    done = await retryable(self.ack.execute(pipe))
                break
            except (ConnectionError, TimeoutError) as error:
                if attempt == START_JOURNAL_ATTEMPTS:
                    raise
                self.log.warning(
                    "turn start journal write failed; retrying",
                    conversation_id=conversation_id,
                    turn_id=turn_id,
                    attempt=attempt,
                    error=repr(error),
                )
                await asyncio.sleep(0.05 * 2**attempt)  # a retry's backoff, not a wait for an event
        # A cluster pipeline retries a broken connection itself, after refreshing its slot
        # map, and sends the retried WAIT to its default node (the target is not kept): what
        # it confirmed says nothing if the conversation changed masters meanwhile.
        if self._moved(key, origin, conversation_id, turn_id):
            return False
        try:
            await self.ack.check(
                self.redis, waits, done[len(done) - len(waits) :], f"start of turn {turn_id}"
            )
        except NotReplicated as error:
            self.log.warning(
                "turn start not confirmed by a replica; not published, retaken when its lease "
                "expires",
                conversation_id=conversation_id,
                turn_id=turn_id,
                error=str(error),
            )
            return False
        return True

    def _moved(self, key: str, origin: str, conversation_id: str, turn_id: str) -> bool:
        """Whether ``key``'s slot has another master than ``origin`` now (a failover): the new
        master may not have the start, and a WAIT there confirms nothing about it."""
        if self._master_name(key) == origin:
            return False
        self.log.warning(
            "turn start's master changed before a replica confirmed it; not published, "
            "retaken when its lease expires",
            conversation_id=conversation_id,
            turn_id=turn_id,
        )
        return True

    def _master_name(self, key: str) -> str:
        """The master the client sends ``key``'s commands to now ('' on one Redis)."""
        if isinstance(self.redis, RedisCluster):
            return master_of(self.redis, key).name
        return ""

    async def _publish_turn(
        self, conversation_id: str, turn: Turn, *started: str, scored: bool = False
    ) -> None:
        """Publish a started turn (or the channel's own answer to it), open the merger's record
        of it and journal what is given (``started``: its start, unless already journaled by
        ``_confirm_start``), in one round trip; unless ``scored``, the pending start waits for
        the lease."""
        turn_id = turn.turn_id
        journal = list(started)
        answer = self.own_answer(turn) if self.own_answer else None
        body = turn.model_dump_json()
        # The merger's record holds the turn without the state (the reply needs none of it).
        record = turn.model_dump_json(exclude={"state"}) if turn.state is not None else body
        k, settings = self.keys, self.settings
        taking: list[Taking] = []
        async with self.redis.pipeline(transaction=False) as pipe:
            # While the turn is in flight, the sweeper looks again only when its lease expires.
            if not scored:
                pipe.zadd(
                    k.pending_starts(conversation_id),
                    {k.qualified(conversation_id): now_ms() + settings.lease_ttl_ms},
                )
            if answer is None:
                # The merger's record of the turn and its deadline exist before the turn does:
                # in the same round trip on one Redis, which runs a pipeline in order; a
                # cluster runs a pipeline's commands on several nodes at once, so there the
                # record is opened first (the merger would otherwise hold every part of a turn
                # whose record came after them, and answer only at the deadline).
                if settings.redis_mode == "cluster":
                    async with self.redis.pipeline(transaction=False) as first:
                        self._queue_open(first, turn_id, record)
                        await first.execute()
                else:
                    self._queue_open(pipe, turn_id, record)
                await self.publish(
                    k.route(k.turns, conversation_id), body, pipeline=pipe, taking=taking
                )
            else:
                journal.append(answer[1])
                await self.publish(k.route(k.outbound, conversation_id), answer[0], pipeline=pipe)
            if journal:
                # Every turn ends with a script's append (a handler's commit, the reply's
                # delivery and release), which trims the journal.
                self.store.queue_journal(pipe, conversation_id, *journal, trim=False)
            results = await lua.execute(pipe)
        TURNS_STARTED.labels(self.keys.tenant).inc()
        for each in taking:
            each.run(results)

    def _queue_open(self, pipe: Pipeline, turn_id: str, body: str) -> None:
        """Queue the merger's record of the turn and its deadline (``shared/merge.py``), with
        the turn's trace context when tracing is on (a partial reply continues it)."""
        settings = self.settings
        queue_open(
            pipe,
            self.keys,
            turn_id,
            body,
            ttl_s=settings.turn_ttl_s,
            deadline_ms=settings.merge_deadline_ms,
            trace=tracing.traceparent() if tracing.active() else None,
        )

    async def _answered_before(self, conversation_id: str, answered: str) -> None:
        """Journal the messages a start dropped because their turn's reply was delivered and
        only its release was lost (``TRY_START``), so the timeline says why they got one
        answer and no second."""
        if not answered:
            return
        turn_id, entries = json.loads(answered)
        message_ids = [_message_id(entry) for entry in entries]
        self.log.warning(
            "in-flight messages already answered; not taken again",
            conversation_id=conversation_id,
            turn_id=turn_id,
            messages=len(message_ids),
        )
        await self.store.append_journal(
            conversation_id,
            journal_entry(
                "gateway",
                turn_id,
                "turn.answered_before",
                answered_by=turn_id,
                message_ids=message_ids,
            ),
        )

    async def _dead_letter(
        self, conversation_id: str, turn_id: str, rejected: list[tuple[str, str]]
    ) -> None:
        """Take unusable entries out of the turn in flight, into the dead-letter stream (for an
        operator) and the conversation's journal, in one round trip."""
        async with self.redis.pipeline(transaction=False) as pipe:
            lua.queue(
                pipe,
                self.scripts.drop_in_flight,
                keys=[self.keys.state(conversation_id)],
                args=[entry for entry, _ in rejected],
            )
            for entry, reason in rejected:
                letter = DeadLetter(
                    stream=self.keys.inbox(conversation_id),
                    group="gateway",
                    message_id=_message_id(entry),
                    attempts=1,
                    error=reason,
                    payload=entry,
                )
                await self.publish(self.keys.dlq, letter, pipeline=pipe)
                self.log.error(
                    "inbox entry moved to dead-letter stream",
                    conversation_id=conversation_id,
                    reason=reason,
                )
            self.store.queue_journal(
                pipe,
                conversation_id,
                *(
                    journal_entry(
                        "gateway",
                        turn_id,
                        "message.dead_lettered",
                        message_id=_message_id(entry),
                        reason=reason,
                    )
                    for entry, reason in rejected
                ),
            )
            await lua.execute(pipe)

    def _turn_keys(self, conversation_id: str) -> list[str]:
        k = self.keys
        return [
            k.inbox(conversation_id),
            k.lease(conversation_id),
            k.state(conversation_id),
        ]

    def _start_keys(self, conversation_id: str) -> list[str]:
        return [*self._turn_keys(conversation_id), self.keys.sent_prefix(conversation_id)]

    @property
    def _keep_s(self) -> int:
        return self.settings.state_ttl_days * 86400

    @property
    def _max_ts_ms(self) -> int:
        """The latest message time that may move a turn's clock (epoch ms)."""
        return now_ms() + self.settings.sent_at_max_future_days * 86_400_000


async def sweep_once(redis: Redis, keys: Keys, keepers: Lookup) -> int:
    """Try a start for every due pending conversation of every tenant, by its tenant's
    ``TurnKeeper`` (``keepers``; one this process does not serve is left for a process that
    does): one read per partition when nothing is due, whatever the number of tenants.
    Returns how many were tried."""
    count = 0
    for key in keys.all_pending_starts():
        served = [
            (keeper, found)
            for found in await due_members(
                redis, key, now_ms(), lambda tenant: keepers(tenant) is not None, SWEEP_BATCH
            )
            if (keeper := keepers(found.tenant)) is not None
        ]
        for keeper, found in served:
            await keeper.try_start(found.id, int(found.score))
        count += len(served)
    return count


async def sweeper(redis: Redis, keys: Keys, keepers: Lookup, interval_s: float) -> None:
    """Sweep every interval, once per gateway process for all its tenants; runs supervised
    (``shared/loops.py`` restarts it after a failure, e.g. Redis down)."""
    while True:
        await sweep_once(redis, keys, keepers)
        await asyncio.sleep(interval_s)
