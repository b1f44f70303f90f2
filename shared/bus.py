"""The bus: FastStream Redis Streams with consumer groups, reclaim and dead letters.

Every subscription is two FastStream subscribers on one handler: one reads new messages
(``XREADGROUP >``, several handlers at once), the other claims messages another consumer left
pending longer than ``reclaim_idle_ms`` (``XAUTOCLAIM``) — a crashed replica's work is picked
up by the living ones. A message is acknowledged only after its handler succeeds; after
``max_attempts`` deliveries it goes to the dead-letter stream, acknowledged, so one poison
message never blocks a conversation forever.

**Read on write.** When a process publishes to a stream that one of its own subscriptions
reads (services run together, ``python -m services A B``), the commit script that adds the
message also reads it for that subscription's group (``XREADGROUP``, as the group's reader
would), and the process runs it at once: the same delivery, pending under the same consumer
until its handler's commit acknowledges it, reclaimed by another replica if this one dies,
without a read round trip or a wake-up of its own (``Local``). Only on one Redis (a cluster
keeps the streams in other slots than the conversation's keys) and without tracing (a taken
message has no consumer span), and only while the subscription has a free handler.

With several tenants (``shared/tenants.py``) the streams are shared: each tenant's runtime has
a view of the bus (``Bus.for_tenant``) that stamps what it publishes with the tenant (a
``tenant`` header), and a process reads each (stream, group) once and hands every message to
the handler its tenant's runtime subscribed. A deployment of one sends no header.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from faststream import AckPolicy
from faststream.redis import RedisBroker, RedisClusterBroker, StreamSub
from faststream.redis.message import RedisStreamMessage
from pydantic import BaseModel, ValidationError
from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import ResponseError

from shared import lua
from shared.coalesce import Siblings, coalescer, start_handler
from shared.connections import retry_options
from shared.contracts import DeadLetter, stateless
from shared.keys import Keys
from shared.logs import get_logger
from shared.metrics import DEAD_LETTERS, HANDLED, LATENCY, TAKEN_ON_WRITE
from shared.settings import Settings
from shared.state import TakenEntry, taken_of, takers_args
from shared.tracing import active as tracing_active
from shared.tracing import broker_middlewares, with_context

Handler = Callable[[bytes], Awaitable[None]]
TENANT_HEADER = "tenant"

log = get_logger(__name__)


class InjectedFault(RuntimeError):
    """Raised by ``ORQ_FAULT_INJECT`` (fault-injection tests only)."""


class UnknownTenant(RuntimeError):
    """A message of a tenant this process does not serve (disabled, or not in its file):
    retried, so a replica that serves it may take it, and dead-lettered after the attempts."""


@dataclass
class Delivery:
    """The message a handler runs for. Its acknowledgement may ride on the handler's commit
    (``riding``); ``acked`` then tells the bus not to acknowledge it again."""

    stream: str
    group: str
    message_id: str
    acked: bool = False


# The delivery of the handler running in this task (set by the bus around each handler call).
_delivery: ContextVar[Delivery | None] = ContextVar("delivery", default=None)


class Taken:
    """A message a commit script read for one of this process's groups, as ``consume`` reads
    a FastStream message: body, headers, where to acknowledge it, its first delivery."""

    def __init__(self, redis: Redis, entry: TakenEntry, body: bytes, headers: dict[str, Any]):
        self.redis = redis
        self.entry = entry
        self.body = body
        self.headers = headers
        self.raw_message = {"channel": entry.stream, "message_ids": [entry.message_id]}

    async def get_delivery_count(self) -> int:
        return 1  # XREADGROUP just delivered it; a redelivery comes through the claimer

    async def ack(self) -> None:
        await self.redis.xack(self.entry.stream, self.entry.group, self.entry.message_id)


Message = RedisStreamMessage | Taken


@dataclass
class Local:
    """One subscription of this process, for the commit scripts that read on write: its
    consumer, the handler that runs a delivery (``consume``), and its handlers' places.

    ``slots`` holds every handler of the subscription, read or taken, to ``capacity`` at once
    (``Settings.handlers``): FastStream's own limit counts only what its reader delivers.
    ``busy`` counts the handlers running or waiting for a place, and a message taken but not
    yet started, so a commit takes a message only while a place is free."""

    bus: Bus
    consumer: str
    capacity: int
    consume: Callable[[Message], Coroutine[Any, Any, None]]
    slots: asyncio.Semaphore
    busy: int = 0


# stream partition -> group -> this process's subscription (every ``Bus`` of the process).
_LOCAL: dict[str, dict[str, Local]] = {}
# The taken messages being handled, so a stop can cancel them (left pending, reclaimed).
_RUNNING: set[asyncio.Task[None]] = set()


def takers(settings: Settings, stream: str) -> tuple[tuple[str, str], ...]:
    """The (group, consumer) pairs of this process that would take a message added to
    ``stream`` now: subscriptions with a free handler, on one Redis, tracing off."""
    groups = _LOCAL.get(stream)
    if not groups or settings.redis_mode == "cluster" or tracing_active():
        return ()
    return tuple(
        (group, local.consumer)
        for group, local in groups.items()
        if local.busy < local.capacity and local.bus.broker.running
    )


def run_taken(entries: tuple[TakenEntry, ...]) -> None:
    """Run each entry a commit script read for this process, as its subscription would. Two
    or more are siblings: their first script calls go to Redis together (``Siblings``)."""
    siblings = Siblings(len(entries)) if len(entries) > 1 else None
    for entry in entries:
        local = _LOCAL[entry.stream][entry.group]
        body, headers = local.bus.broker.message_format.parse(entry.data)
        TAKEN_ON_WRITE.labels(local.bus.service, entry.stream, headers.get(TENANT_HEADER, "")).inc()
        local.busy += 1  # given back by ``consume``
        task = start_handler(local.consume(Taken(local.bus.redis, entry, body, headers)), siblings)
        _RUNNING.add(task)

        def done(task: asyncio.Task[None]) -> None:
            _RUNNING.discard(task)
            if not task.cancelled() and (exc := task.exception()) is not None:
                # ``consume`` logged it and left the delivery pending for the claimer.
                log.debug("taken message left pending", error=repr(exc))

        task.add_done_callback(done)


def running_taken() -> list[asyncio.Task[None]]:
    return list(_RUNNING)


@dataclass(frozen=True)
class Taking:
    """A publish queued on a pipeline that reads its message on write: the pipeline's result
    at ``index`` says what it took; ``run`` runs that once the pipeline has executed."""

    index: int
    data: bytes

    def run(self, results: list[Any]) -> None:
        run_taken(tuple(taken_of(results[self.index], [self.data])))


def riding(settings: Settings) -> Delivery | None:
    """The delivery of the running handler, when the script that ends the handler may
    acknowledge it (and publish the handler's messages): on one Redis only (on a cluster the
    streams are in other slots than the conversation's keys), and once. The script must be the
    handler's last step: nothing after it can leave the delivery pending for a retry."""
    delivery = _delivery.get()
    if settings.redis_mode == "cluster" or delivery is None or delivery.acked:
        return None
    return delivery


class Subscription(StreamSub):
    """A ``StreamSub`` that FastStream copies cheaply. FastStream's ``stream_sub`` property
    deep-copies the subscription on every access (``add_prefix``): several times for each
    ``XREADGROUP`` and once per message for its log context, 2-4 % of every service's CPU under
    load. Every field is a string, number, bool or None, so a shallow copy is the same copy at
    a third of the cost (to raise upstream: copy once, when the prefix is set)."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict[int, Any]) -> Subscription:
        return copy.copy(self)


def _fault(setting: str | None, group: str) -> bytes | None:
    """The text whose messages ``group`` must fail on, from ``GROUP:TEXT``."""
    if not setting:
        return None
    target, _, text = setting.partition(":")
    return text.encode() if target == group and text else None


def _log(service: str, tenant: str) -> Any:
    """The module's logger for a message of ``service`` and ``tenant``: bound with them as a
    runtime's logger is (``shared.service.make_runtime``; the tenant only when there is one),
    so a process running several services says whose message it was."""
    bound = log.bind(service=service)
    return bound.bind(tenant=tenant) if tenant else bound


def _message_id(message: Message) -> str:
    ids = message.raw_message.get("message_ids") or [b""]
    return ids[0].decode() if isinstance(ids[0], bytes) else str(ids[0])


def _channel(message: Message) -> str:
    """The stream key the message was read from (the one to acknowledge it on)."""
    channel = message.raw_message["channel"]
    return channel.decode() if isinstance(channel, bytes) else str(channel)


class _CorrelationIds:
    """A message's correlation id: unique to a message, as FastStream's (a UUID4 each) is,
    without reading randomness per message: a random prefix per process and a count. A
    forked child (the supervisor's replicas) draws a prefix of its own."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.prefix = uuid.uuid4().hex
        self.count = itertools.count()

    def next(self) -> str:
        return f"{self.prefix}-{next(self.count)}"


_correlation = _CorrelationIds()
os.register_at_fork(after_in_child=_correlation.reset)


def correlation_id() -> str:
    return _correlation.next()


def consumer_name(service: str) -> str:
    """Unique per process: host, pid and a random suffix (pids repeat across containers)."""
    return f"{service}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


async def whole_message(message: RedisStreamMessage) -> RedisStreamMessage:
    """A decoder that hands the handler the message itself (body, id, delivery count)."""
    return message


def make_broker(settings: Settings) -> RedisBroker:
    """FastStream's broker. Its pool fails rather than waits when full, so it gets twice
    ``redis_max_connections``: room for the handlers' publishes (at most ``Settings.handlers``
    per subscription at once) and the subscribers' reads and acknowledgements.

    ``apply_types=False``: handlers take the message as their one argument (``whole_message``)
    instead of through dependency injection, which resolves a context parameter by running a
    synchronous lookup in a worker thread on every delivery (a quarter of a busy service's
    CPU in the profile, docs/performance.md).
    """
    options: dict[str, Any] = {
        "max_connections": 2 * settings.redis_max_connections,
        "apply_types": False,
        **retry_options(),
    }
    if not settings.faststream_log:
        options["logger"] = None
    if middlewares := broker_middlewares():
        # Tracing (``shared/tracing.py``): the trace context travels in every message's
        # headers. Only when it is on: the middleware costs on every message.
        options["middlewares"] = middlewares
    if settings.redis_mode == "cluster":
        # The same subscribers and publishes; each XREADGROUP, XACK and XADD goes to the node
        # that holds its stream (``max_connections`` is then per node).
        return RedisClusterBroker(settings.redis_url, **options)
    return RedisBroker(settings.redis_url, **options)


class PartitionChangeRefused(RuntimeError):
    """``ORQ_PARTITIONS`` changed while streams of the old count still hold work."""


async def unfinished_work(redis: Redis, keys: Keys) -> list[str]:
    """What the streams and sorted sets of ``keys``' partition layout still hold: entries
    not delivered to or not acknowledged by a group, conversations waiting for a start,
    turns waiting for their merge deadline."""
    found: list[str] = []
    for stream, group in keys.groups():
        try:
            infos = await redis.xinfo_groups(stream)
        except ResponseError:
            continue  # no such stream
        for info in infos:
            if info["name"] != group:
                continue
            waiting = await redis.xrange(stream, min=f"({info['last-delivered-id']}", count=1)
            if info["pending"] or waiting:
                found.append(f"{stream}/{group}: {info['pending']} pending"
                             + (", more not yet delivered" if waiting else ""))  # fmt: skip
    for key in [*keys.all_pending_starts(), *keys.all_merge_deadlines()]:
        if count := await redis.zcard(key):
            found.append(f"{key}: {count} waiting")
    return found


async def check_partitions(redis: Redis, keys: Keys) -> None:
    """Refuse to start with a partition count other than the one the streams were run with
    while those streams still hold work: a conversation's next turn would go to another
    stream than its unfinished one, and could be answered before it. A drained system
    switches (docs/operations/cluster.md). The count is recorded only once it differs from 1,
    so a single-partition deployment has no extra key."""
    raw = await redis.get(keys.partition_count)
    recorded = int(raw) if raw else 1
    if recorded != keys.partitions:
        previous = replace(keys, partitions=recorded)
        if busy := await unfinished_work(redis, previous):
            log.error("partition count change refused", previous=recorded, now=keys.partitions)
            raise PartitionChangeRefused(
                f"ORQ_PARTITIONS={keys.partitions}, but the streams were last run with "
                f"{recorded} partition(s) and still hold work: {'; '.join(busy[:5])}. Drain "
                f"first (run with ORQ_PARTITIONS={recorded} and no new messages until "
                "every group's lag and pending count are 0), then restart with the new count."
            )
        log.warning("partition count changed", previous=recorded, now=keys.partitions)
    if raw or keys.partitions != 1:
        await redis.set(keys.partition_count, keys.partitions)


async def ensure_groups(redis: Redis, keys: Keys) -> None:
    """Check the partition count, create every stream and consumer group at id 0 and remove
    retired groups (idempotent)."""
    await check_partitions(redis, keys)
    for stream, group in keys.groups():
        try:
            await redis.xgroup_create(stream, group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
    for stream, group in keys.retired_groups():
        if await redis.xgroup_destroy(stream, group):
            log.info("retired consumer group removed", stream=stream, group=group)


class Bus:
    """Publishing and subscribing for one service process."""

    def __init__(
        self, broker: RedisBroker, redis: Redis, settings: Settings, keys: Keys, service: str
    ) -> None:
        self.broker = broker
        self.redis = redis
        self.settings = settings
        self.keys = keys
        self.service = service
        self.consumer = consumer_name(service)
        self.tenant = keys.tenant
        self._headers = {TENANT_HEADER: self.tenant} if self.tenant else None
        # (stream partition, group) -> tenant -> handler, shared by every tenant's view.
        self._routes: dict[tuple[str, str], dict[str, Handler]] = {}
        # FastStream subscribers made after the broker started (a reload's new stream).
        self._unstarted: list[Any] = []
        # A staged view's subscriptions, installed together by ``install``; None: at once.
        self.staged: list[tuple[str, str, Handler]] | None = None
        self._publish = lua.load(redis, lua.PUBLISH)

    def for_tenant(self, keys: Keys) -> Bus:
        """This process's bus as one tenant's runtime sees it: the same broker, consumer and
        subscriptions; what it publishes carries ``keys.tenant``. Its subscriptions are
        staged: ``install`` puts them in place, all at once."""
        view = copy.copy(self)
        view.keys = keys
        view.tenant = keys.tenant
        view._headers = {TENANT_HEADER: keys.tenant} if keys.tenant else None
        view.staged = []
        return view

    async def install(self, view: Bus | None, tenant: str) -> None:
        """``tenant``'s handlers become ``view``'s staged ones on every stream in one step
        (no await in between, so no message sees half of each), and those it no longer has
        are removed (None: every one, the tenant is no longer served here). Streams read for
        the first time get their subscribers started."""
        for handlers in self._routes.values():
            handlers.pop(tenant, None)
        staged = (view.staged or []) if view is not None else []
        for part, group, handler in staged:
            self._route(part, group)[tenant] = handler
        while self._unstarted and self.broker.running:
            await self._unstarted.pop().start()

    async def encode(self, messages: list[tuple[str, str]]) -> list[tuple[str, bytes]]:
        """Each (stream, payload) as FastStream would ``XADD`` it (the broker's own message
        format, with this view's tenant header), for a script that publishes them itself.
        With tracing on, the headers carry the running handler's trace context, as
        FastStream's middleware adds it to what the broker publishes."""
        encode = self.broker.message_format.encode
        headers = with_context(self._headers)
        return [
            (
                stream,
                await encode(
                    message=payload.encode(),
                    reply_to=None,
                    headers=headers,
                    correlation_id=correlation_id(),
                ),
            )
            for stream, payload in messages
        ]

    async def encode_kept(
        self, messages: list[tuple[str, str, object]], taken: list[bool]
    ) -> list[tuple[bytes, bytes]]:
        """Each (stream, payload, its model or None) encoded as its stream keeps it and as a
        taker of this process runs it. A message taken here (``taken``) that carries a state
        goes to its stream without it (``stateless``): the taker runs the whole one, a reader
        elsewhere or a redelivery reads the state itself. Any other is the same twice."""
        whole = [data for _, data in await self.encode([(s, p) for s, p, _ in messages])]
        kept = list(whole)
        slims = [
            (i, slim)
            for i, (_, _, model) in enumerate(messages)
            if taken[i] and (slim := stateless(model)) is not None
        ]
        if slims:
            lean = await self.encode([(messages[i][0], s.model_dump_json()) for i, s in slims])
            for (i, _), (_, data) in zip(slims, lean, strict=True):
                kept[i] = data
        return list(zip(kept, whole, strict=True))

    async def publish(
        self,
        stream: str,
        payload: str | BaseModel,
        *,
        pipeline: Pipeline | None = None,
        taking: list[Taking] | None = None,
    ) -> None:
        """Publish one message; with ``pipeline``, queue it there (sent when it executes).

        A message for a subscription of this process is read on write for it (``takers``):
        at once without ``pipeline``; with one, only when the caller passes ``taking``, where
        it finds what to run once the pipeline has executed (``Taking.run``).

        On a cluster FastStream's broker takes no pipeline (it warns and publishes at once), so
        the message is published now, before the pipeline's other commands: callers that
        need something written before their publish write it first there (``TurnKeeper``)."""
        body = payload.model_dump_json() if isinstance(payload, BaseModel) else payload
        if self.settings.redis_mode == "cluster":
            pipeline = None
        readers = takers(self.settings, stream)
        if readers and (pipeline is None or taking is not None):
            [(kept, data)] = await self.encode_kept([(stream, body, payload)], [True])
            args = [self.settings.stream_maxlen, kept, *takers_args(readers)]
            if pipeline is None or taking is None:
                published = await coalescer.call(self.redis, self._publish, [stream], args)
                run_taken(tuple(taken_of(published, [data])))
            else:
                lua.queue(pipeline, self._publish, keys=[stream], args=args)
                taking.append(Taking(len(pipeline.command_stack) - 1, data))
            return
        await self.broker.publish(
            body.encode(),
            stream=stream,
            maxlen=self.settings.stream_maxlen,
            pipeline=pipeline,
            headers=self._headers,
        )

    async def publish_all(self, messages: list[tuple[str, str]]) -> None:
        """Publish an outbox in one round trip (in order; a failure raises, and the caller's
        redelivery republishes the whole outbox)."""
        if len(messages) == 1:
            await self.publish(*messages[0])
            return
        taking: list[Taking] = []
        async with self.redis.pipeline(transaction=False) as pipe:
            for stream, payload in messages:
                await self.publish(stream, payload, pipeline=pipe, taking=taking)
            results = await lua.execute(pipe)
        for each in taking:
            each.run(results)

    def subscribe(self, stream: str, group: str, handler: Handler) -> None:
        """Consume ``stream`` in ``group``: one subscription per partition of the stream, so
        every partition is read (each conversation's messages stay in order in its own)."""
        for part in self.keys.parts(stream):
            if self.staged is not None:
                self.staged.append((part, group, handler))
            else:
                self._route(part, group)[self.tenant] = handler

    def _route(self, part: str, group: str) -> dict[str, Handler]:
        """The handlers of one partition and group, subscribed to on first use."""
        handlers = self._routes.get((part, group))
        if handlers is None:
            handlers = self._routes[(part, group)] = {}
            self._subscribe(part, group, handlers)
        return handlers

    def _subscribe(self, stream: str, group: str, handlers: dict[str, Handler]) -> None:
        settings = self.settings
        poison = _fault(settings.fault_inject, group)

        async def consume(message: Message) -> None:
            """A delivery, read or taken, in one of the subscription's places."""
            if not isinstance(message, Taken):
                local.busy += 1  # a taken one was counted when it was taken
            try:
                async with local.slots:
                    await handle(message)
            finally:
                local.busy -= 1

        async def handle(message: Message) -> None:
            started = time.perf_counter()
            tenant: str = message.headers.get(TENANT_HEADER, "")
            delivery = Delivery(_channel(message), group, _message_id(message))
            token = _delivery.set(delivery)
            try:
                if poison and poison in message.body:
                    raise InjectedFault(f"injected fault in {group} ({settings.fault_inject})")
                handler = handlers.get(tenant)
                if handler is None:
                    raise UnknownTenant(f"no handler here for tenant {tenant!r} in {group}")
                await handler(message.body)
            except Exception as exc:
                if delivery.acked:
                    # Its script acknowledged it, so no retry comes; what failed after is
                    # recovered by its own means (a turn's lease expiring, the sweeps).
                    HANDLED.labels(self.service, stream, "failed_after_ack", tenant).inc()
                    _log(self.service, tenant).error(
                        "handler failed after its delivery was acknowledged",
                        stream=stream,
                        error=f"{type(exc).__name__}: {exc}",
                    )
                    return
                attempts = await message.get_delivery_count()
                permanent = isinstance(exc, ValidationError)
                if permanent or attempts >= settings.max_attempts:
                    await self._dead_letter(stream, group, message, attempts, exc, tenant)
                    await message.ack()
                    return
                HANDLED.labels(self.service, stream, "retry", tenant).inc()
                _log(self.service, tenant).warning(
                    "handler failed, will retry",
                    stream=stream,
                    attempts=attempts,
                    error=f"{type(exc).__name__}: {exc}",
                )
                raise  # left pending: the claimer redelivers it after ``reclaim_idle_ms``
            finally:
                _delivery.reset(token)
            HANDLED.labels(self.service, stream, "ok", tenant).inc()
            LATENCY.labels(self.service, stream, tenant).observe(time.perf_counter() - started)
            if not delivery.acked:
                await message.ack()

        # Read no more than we can run at once, so replicas share a burst instead of one
        # replica claiming it all.
        reader = Subscription(
            stream,
            group=group,
            consumer=self.consumer,
            polling_interval=1000,
            max_records=settings.handlers,
        )
        claimer = Subscription(
            stream,
            group=group,
            consumer=self.consumer,
            min_idle_time=settings.reclaim_idle_ms,
            polling_interval=max(100, settings.reclaim_idle_ms // 2),
        )
        # ``consume`` acknowledges (unless the handler's commit script did) or leaves the
        # message pending for the claimer.
        policy = AckPolicy.MANUAL
        read = self.broker.subscriber(
            stream=reader, ack_policy=policy, max_workers=settings.handlers, decoder=whole_message
        )
        claim = self.broker.subscriber(stream=claimer, ack_policy=policy, decoder=whole_message)
        claim(read(consume))
        slots = asyncio.Semaphore(settings.handlers)
        local = Local(self, self.consumer, settings.handlers, consume, slots)
        _LOCAL.setdefault(stream, {})[group] = local
        if self.broker.running:
            self._unstarted += [read, claim]

    async def _dead_letter(
        self,
        stream: str,
        group: str,
        message: Message,
        attempts: int,
        exc: BaseException,
        tenant: str,
    ) -> None:
        """Move ``message`` (of ``tenant``, "" for a deployment of one) to the dead-letter
        stream, still carrying its tenant header."""
        letter = DeadLetter(
            stream=stream,
            group=group,
            message_id=_message_id(message),
            attempts=attempts,
            error=f"{type(exc).__name__}: {exc}",
            payload=message.body.decode("utf-8", "replace"),
        )
        body = letter.model_dump_json().encode()
        await self.broker.publish(
            body,
            stream=self.keys.dlq,
            maxlen=self.settings.stream_maxlen,
            headers={TENANT_HEADER: tenant} if tenant else None,
        )
        DEAD_LETTERS.labels(self.service, stream, tenant).inc()
        HANDLED.labels(self.service, stream, "dead_letter", tenant).inc()
        _log(self.service, tenant).error(
            "message moved to dead-letter stream",
            stream=stream,
            group=group,
            attempts=attempts,
            error=f"{type(exc).__name__}: {exc}",
        )
