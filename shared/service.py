"""What every service's handlers share: the runtime (connections, bus, state, pack) and the
tail of a decision (commit once, publish, journal).

A service module builds its subscriptions on a ``Runtime`` (``build(rt)``) and its
``__main__`` calls ``run_service(SPEC, TOPOLOGY)`` (``shared/process.py``: its spec and the
registry's bus). Everything a handler needs is on the runtime, passed in explicitly; nothing is
global.

A process serving several tenants (``shared/tenants.py``) builds once per tenant, each on a
runtime with that tenant's pack, keys, settings and view of the bus (``for_tenant``); the Redis
clients, the broker and the subscriptions are the process's, shared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, TypeVar, cast
from zoneinfo import ZoneInfo

from pydantic import BaseModel
from redis.asyncio import Redis
from structlog.typing import FilteringBoundLogger

from shared.bus import Bus, make_broker, riding, run_taken, takers
from shared.connections import connect
from shared.contracts import (
    DomainEvent,
    FunnelStep,
    MergeReady,
    Part,
    SpecialistTask,
    Turn,
    TurnPlan,
)
from shared.funnel import tally
from shared.keys import Keys, Topology
from shared.llm import LLMClient, LLMError, LLMSettings
from shared.logs import get_logger
from shared.lua import Scripts, register
from shared.merge import MERGE_INPUT, merge_field
from shared.metrics import FUNNEL_STEPS, LLM_CALLS
from shared.pack import Pack
from shared.settings import Settings, get_settings
from shared.spec import ServiceSpec
from shared.state import (
    MODE,
    Outbox,
    Sent,
    Snapshot,
    StateConflict,
    StateStore,
    ToMerge,
    committed_here,
    journal_entry,
    read_slices,
    snapshot_of,
    stamp_tenant,
    state_after,
)
from shared.tenants import Tenant, TenantsError, tenants_of

M = TypeVar("M", bound=BaseModel)
# A tenant's object a shared loop works with (``Runtime.exports``), None when this process
# does not serve that tenant.
Lookup = Callable[[str], Any]
SharedLoop = Callable[[Lookup], Awaitable[None]]


@dataclass
class Runtime:
    service: str
    settings: Settings
    keys: Keys
    redis: Redis
    scripts: Scripts
    store: StateStore
    bus: Bus
    pack: Pack
    tz: ZoneInfo
    llm: LLMClient | None = None
    log: FilteringBoundLogger = field(default_factory=get_logger)
    # Long-running loops; each runs under ``shared.loops.supervised`` (restarted after a failure).
    background: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    on_stop: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    owns: tuple[str, ...] = ()
    # Loops that run once per process whatever the number of tenants, over keys every
    # tenant shares (the merger's deadlines): by name, so each tenant's build may declare
    # the same one; each is given ``lookup(tenant)`` -> that tenant's ``exports[name]``.
    shared_loops: dict[str, SharedLoop] = field(default_factory=dict)
    exports: dict[str, Any] = field(default_factory=dict)

    @property
    def tenant(self) -> str:
        return self.keys.tenant


def _store(
    redis: Redis,
    scripts: Scripts,
    keys: Keys,
    settings: Settings,
    owner: str,
    owns: tuple[str, ...],
) -> StateStore:
    return StateStore(
        redis,
        scripts,
        keys,
        journal_max=settings.journal_max,
        state_ttl_s=settings.state_ttl_days * 86400,
        outbox_ttl_s=settings.turn_ttl_s,
        owner=owner,
        owns=owns,
    )


def _timezone(pack: Pack) -> ZoneInfo:
    return ZoneInfo(pack.sections.get("business", {}).get("timezone", "America/Sao_Paulo"))


def make_runtime(
    spec: ServiceSpec,
    settings: Settings | None = None,
    *,
    topology: Topology,
    tenant: Tenant | None = None,
) -> Runtime:
    """A service's runtime; its state store accepts commits only of the slices ``spec`` owns.

    ``topology`` is the registry's bus (``services.registry.TOPOLOGY``): every process creates
    every group up front, so it must know them all, not only its own. ``tenant``: whose
    runtime (default: the one business of ``settings``).
    """
    service = spec.name
    settings = settings or get_settings()
    if tenant is None:
        [tenant] = tenants_of(settings.model_copy(update={"tenants": None}))
    if tenant.pack is None:
        raise TenantsError(tenant.problem or f"tenant {tenant.id!r} has no pack")
    keys = Keys(settings.prefix, settings.partitions, tenant=tenant.id, topology=topology)
    # A cluster client answers every command the services use as a single-node one does.
    redis = cast(Redis, connect(settings))
    scripts = register(redis)
    pack = tenant.pack
    bus = Bus(make_broker(settings), redis, settings, keys, service)
    tz = _timezone(pack)
    llm = None
    if settings.nlu_mode != "rules":
        llm = LLMClient(
            LLMSettings(
                base_url=settings.llm_base_url,
                model=settings.llm_model,
                api_key=settings.llm_api_key,
                timeout_s=settings.llm_timeout_s,
                response_format=settings.llm_response_format,
            )
        )
    # The service bound on every line: a process may run several (``python -m services``).
    log = get_logger(service).bind(service=service)
    log = log.bind(tenant=tenant.id) if tenant.id else log
    store = _store(redis, scripts, keys, settings, service, spec.slices)
    return Runtime(
        service,
        tenant.settings,
        keys,
        redis,
        scripts,
        store,
        bus,
        pack,
        tz,
        llm,
        log,
        owns=spec.slices,
    )


def for_tenant(rt: Runtime, tenant: Tenant) -> Runtime:
    """``rt``'s process as another tenant's runtime: the same clients, broker and consumer;
    that tenant's settings, pack, keys, store and bus view, and loops of its own."""
    if tenant.pack is None:
        raise TenantsError(tenant.problem or f"tenant {tenant.id!r} has no pack")
    keys = replace(rt.keys, tenant=tenant.id)
    return replace(
        rt,
        settings=tenant.settings,
        keys=keys,
        store=_store(rt.redis, rt.scripts, keys, rt.settings, rt.service, rt.owns),
        bus=rt.bus.for_tenant(keys),
        pack=tenant.pack,
        tz=_timezone(tenant.pack),
        log=get_logger(rt.service).bind(service=rt.service, tenant=tenant.id),
        background=[],
        on_stop=[],
        shared_loops={},
        exports={},
    )


@dataclass
class Decision:
    """What a handler decided for one turn: slices to write, messages to publish, journal."""

    writes: dict[str, object] = field(default_factory=dict)
    outbox: Outbox = field(default_factory=Outbox)
    journal: list[str] = field(default_factory=list)
    # ``writes`` as its commit stores them, when already encoded (``TurnDecision.complete``).
    encoded: dict[str, str] = field(default_factory=dict)


@dataclass
class TurnDecision(Decision):
    """A decision about one turn, with the tail every handler shares: the service's part of
    the reply for the merger, the business events the turn caused, its journal entry."""

    rt: Runtime = field(kw_only=True)
    turn: Turn = field(kw_only=True)
    # The specialists this decision hands the turn to (``ask``), added to the outbox by
    # ``complete``.
    tasks: list[SpecialistTask] = field(default_factory=list, kw_only=True)

    def ask(self, task: SpecialistTask) -> None:
        """Hand the turn to the specialist ``task.route`` names (``tasks.<route>``). The task
        goes out with this decision's commit, carrying the state as that commit leaves it
        (``complete``): the specialist decides on it without reading the state again."""
        self.tasks.append(task)

    def complete(self, snapshot: Snapshot) -> None:
        """End the decision made on ``snapshot``: its specialists' tasks join the outbox, each
        with the state this decision's commit leaves (``shared.state.state_after``)."""
        if not self.tasks:
            return
        rt, turn = self.rt, self.turn
        state = state_after(snapshot, self.writes)
        self.encoded = {name: state[name] for name in self.writes}
        carried = turn.model_copy(update={"state": state})
        for task in self.tasks:
            stream = rt.keys.route(rt.keys.tasks(task.route), turn.conversation_id)
            self.outbox.add(stream, task.model_copy(update={"turn": carried}))

    def reply(
        self, text: str | None, *, asks_question: bool = False, data: dict[str, Any] | None = None
    ) -> None:
        """The service's part of the turn's reply (``None``: it has nothing to say)."""
        rt, turn = self.rt, self.turn
        part = Part(
            turn_id=turn.turn_id,
            conversation_id=turn.conversation_id,
            source=rt.service,
            text=text,
            asks_question=asks_question,
            data=data or {},
        )
        self.outbox.add(rt.keys.route(rt.keys.merge, turn.conversation_id), part)

    def emit(self, event_type: str, data: dict[str, Any]) -> None:
        """A business event of this turn, for whoever listens on the events stream."""
        rt, turn = self.rt, self.turn
        event = DomainEvent(
            type=event_type,
            conversation_id=turn.conversation_id,
            turn_id=turn.turn_id,
            at=turn.now,
            data=data,
        )
        self.outbox.add(rt.keys.route(rt.keys.events, turn.conversation_id), event)

    def record(self, event: str, /, **fields: Any) -> None:
        """The journal entry that explains the decision (``orquestra explain`` shows it)."""
        rt, turn = self.rt, self.turn
        self.journal.append(journal_entry(rt.service, turn.turn_id, event, **fields))


TurnHandler = Callable[[Turn, Snapshot, TurnDecision], Awaitable[None]]
TaskHandler = Callable[[SpecialistTask, Snapshot, TurnDecision], Awaitable[None]]


async def decide_turn_once(
    rt: Runtime,
    turn: Turn,
    decide: Callable[[Snapshot, TurnDecision], Awaitable[None]],
    snapshot: Snapshot | None = None,
) -> None:
    """``handle_once`` for a turn: ``decide`` fills a fresh ``TurnDecision`` per attempt. The
    caller's handler must end with it (its commit may acknowledge the delivery)."""

    async def attempt(snapshot: Snapshot) -> Decision:
        decision = TurnDecision(rt=rt, turn=turn)
        await decide(snapshot, decision)
        decision.complete(snapshot)
        return decision

    await handle_once(
        rt, turn.conversation_id, turn.turn_id, attempt, acknowledges=True, snapshot=snapshot
    )


@lru_cache(maxsize=64)
def turn_of(body: bytes) -> tuple[Turn, dict[str, str] | None]:
    """A turn's message as (the turn without its state, the state it brought), decoded once
    for every subscription of this process that takes it: services together, the mode
    router and triage take each turn, each decoding it was 1.7 % of their process's CPU at max
    load. The state becomes each handler's own snapshot (``snapshot_of`` copies it); the turn
    goes on without it, so what a handler forwards (a specialist's task) never carries a state
    from before its commit. Neither is changed by a handler."""
    turn = Turn.model_validate_json(body)
    if turn.state is None:
        return turn, None
    return turn.model_copy(update={"state": None}), turn.state


def on_turns(rt: Runtime, decide: TurnHandler) -> None:
    """Decide on every turn, once in effect, in the service's own consumer group, on the
    state the turn brings (as it started) when it brings one."""

    async def handler(body: bytes) -> None:
        turn, state = turn_of(body)
        brought = snapshot_of(state) if state is not None else None
        await decide_turn_once(rt, turn, lambda snapshot, d: decide(turn, snapshot, d), brought)

    rt.bus.subscribe(rt.keys.turns, rt.service, handler)


def on_tasks(rt: Runtime, decide: TaskHandler) -> None:
    """A specialist's subscription: the tasks triage routes to it (``tasks.<service>``),
    each decided once in effect, on the state as triage's commit left it: the task carries it
    (``TurnDecision.complete``), but for the mode router's slice. The mode router decides the
    same turn beside triage, and a specialist goes by the mode it decided when it did: its
    slice as this process's mode router committed it for the turn (services run together;
    waited for when that commit is on its way: ``committed_here``), or else read. A task
    without a state (from a triage before it carried one) reads it all."""

    async def handler(body: bytes) -> None:
        task = SpecialistTask.model_validate_json(body)
        brought = None
        if (state := task.turn.state) is not None:
            # The handler's turn goes on without it, as ``on_turns``'.
            task = task.model_copy(update={"turn": task.turn.model_copy(update={"state": None})})
            conversation = task.turn.conversation_id
            fresh = await committed_here.recall(
                rt.keys.state(conversation), task.turn.turn_id, MODE
            ) or await read_slices(rt.store.redis, rt.keys, conversation, MODE)
            brought = snapshot_of(state, newer=fresh)
        await decide_turn_once(
            rt, task.turn, lambda snapshot, d: decide(task, snapshot, d), brought
        )

    rt.bus.subscribe(rt.keys.tasks(rt.service), rt.service, handler)


async def handle_once(
    rt: Runtime,
    conversation_id: str,
    turn_id: str,
    decide: Callable[[Snapshot], Awaitable[Decision]],
    attempts: int = 3,
    *,
    acknowledges: bool = False,
    snapshot: Snapshot | None = None,
) -> None:
    """Run ``decide`` for a turn at most once in effect, then publish what it decided.

    A redelivered turn whose decision was already committed republishes the stored outbox
    instead of deciding again (its answer may depend on state it has since changed). A
    version conflict (a concurrent writer) reloads and decides again.

    ``snapshot``: the state the message brought (a turn's, as it started): the first attempt
    decides on it without reading. Its commit still compares versions and finds a decision
    committed before, so a stale snapshot costs a reload and a second decision, and a turn
    decided before gets its stored outbox republished, as above; deciding first only costs the
    decision (a side effect of one, a booking, is idempotent per turn).

    ``acknowledges``: the handler ends here, so on one Redis the commit script also publishes
    the outbox and acknowledges the delivery (``shared.bus.riding``): one round trip for three.
    Such a commit with a merge input stores no outbox when no commit of the turn can hide in
    the snapshot from its checks (``StateStore.commit``'s ``marked``): a brought snapshot, or
    one loaded looking for the mark an earlier attempt's decision named.
    """
    marker: tuple[str, str] | None = None
    for _ in range(attempts):
        checked = snapshot is not None
        if snapshot is None:
            stored, snapshot = await rt.store.load_turn(
                conversation_id, turn_id, rt.service, marker
            )
            if stored is not None:
                await rt.bus.publish_all(stored.messages)
                return
            checked = marker is not None
        decision = await decide(snapshot)
        delivery = riding(rt.settings) if acknowledges else None
        publish, carried = (
            await sendable(rt, conversation_id, decision.outbox, decision.journal)
            if delivery
            else ([], False)
        )
        mark = next(((s.merge.key, s.merge.field) for s in publish if s.merge), None)
        marked = checked and mark is not None and marker in (None, mark)
        marker = marker or mark
        settings = rt.settings
        try:
            committed = await rt.store.commit(
                conversation_id,
                turn_id,
                rt.service,
                snapshot=snapshot,
                writes=decision.writes,  # type: ignore[arg-type]
                outbox=decision.outbox,
                journal=[] if carried else decision.journal,
                publish=publish,
                ack=(delivery.stream, delivery.group, delivery.message_id) if delivery else None,
                maxlen=settings.stream_maxlen,
                merge_ttl_s=settings.turn_ttl_s,
                republish_after_ms=settings.republish_after_ms,
                marked=marked,
                encoded=decision.encoded,
            )
        except StateConflict:
            rt.log.warning("state changed concurrently, deciding again", turn_id=turn_id)
            snapshot = None
            continue
        if committed and committed.before:
            return  # everything went out with that commit; the bus acknowledges the delivery
        if committed:
            for step in committed.counted:
                FUNNEL_STEPS.labels(step, rt.keys.tenant).inc()
            if delivery:
                delivery.acked = True
                run_taken(committed.taken)
            else:
                await rt.bus.publish_all(decision.outbox.messages)
            return
        snapshot = None  # committed before: the next attempt republishes the stored outbox
    raise StateConflict(f"turn {turn_id}: could not commit after {attempts} attempts")


async def sendable(
    rt: Runtime, conversation_id: str, outbox: Outbox, journal: list[str]
) -> tuple[list[Sent], bool]:
    """The outbox as the commit script publishes it (one Redis): each message encoded by
    FastStream; a merger's input added to its turn's merge hash instead, with the
    ``MergeReady`` the script sends to the outbound stream if that input completes the turn; a
    message for a subscription of this process read for it as it is added (``Sent.takers``); a
    funnel step that carries its source counted by the script (``shared.funnel.Tally``)
    instead of delivered. The first merger's input carries the decision's ``journal`` (its
    entries as stored), which whoever ends the turn writes (``shared.merge.Merged.carried``);
    with the list, whether one does."""
    keys = rt.keys
    merge = keys.route(keys.merge, conversation_id)
    outbound = keys.route(keys.outbound, conversation_id)
    funnel = keys.route(keys.funnel, conversation_id)
    messages: list[tuple[str, str, object]] = []  # (stream, payload, its model if any)
    targets: list[ToMerge | None] = []
    tallies: list[Sent] = []
    carried = False
    # Each message's model as the handler added it (parsed back only for one added otherwise).
    models = outbox.models if len(outbox.models) == len(outbox.messages) else None
    for i, (stream, payload) in enumerate(outbox.messages):
        model = models[i] if models else None
        if stream == funnel:
            step = model if isinstance(model, FunnelStep) else None
            step = step or FunnelStep.model_validate_json(payload)
            if step.source is not None:
                tallies.append(Sent(stream, b"", tally=tally(keys, step, step.source, rt.tz)))
                continue
        item = None
        if stream == merge:
            known = isinstance(model, Part | TurnPlan | MergeReady)
            item = model if known else MERGE_INPUT.validate_json(payload)
        if isinstance(item, Part | TurnPlan):
            if journal and not carried:
                stamped = stamp_tenant(keys.tenant, *journal)
                payload = item.model_copy(update={"journal": stamped}).model_dump_json()
                carried = True
            # The script fills the notice's fields in and appends it to an empty body's envelope.
            ready = MergeReady(turn_id=item.turn_id, conversation_id=conversation_id, fields={})
            messages.append((outbound, "", None))
            targets.append(
                ToMerge(
                    keys.merge_turn(item.turn_id),
                    merge_field(item),
                    payload,
                    ready.model_dump_json(),
                    keys.merge_deadlines(item.turn_id),
                    keys.qualified(item.turn_id),
                )
            )
        else:
            messages.append((stream, payload, model))
            targets.append(None)
    readers = [takers(rt.settings, stream) for stream, _, _ in messages]
    encoded = await rt.bus.encode_kept(messages, [bool(r) for r in readers])
    sent = [
        Sent(stream, kept, target, takers=r, taken=whole)
        for (stream, _, _), (kept, whole), target, r in zip(
            messages, encoded, targets, readers, strict=True
        )
    ]
    return [*sent, *tallies], carried


async def ask_llm(
    rt: Runtime,
    messages: list[dict[str, object]],
    model_cls: type[M],
    *,
    turn_id: str,
    purpose: str,
    journal: list[str],
) -> M | None:
    """One structured LLM call; on any failure None (the caller falls back to its rules).

    Success and failure are both journaled, so "why did the bot say that" shows the LLM's part.
    """
    if rt.llm is None:
        return None
    try:
        result = await rt.llm.structured(messages, model_cls)
    except LLMError as exc:
        LLM_CALLS.labels(rt.service, exc.kind, rt.tenant).inc()
        rt.log.warning("llm failed, using rules", purpose=purpose, kind=exc.kind, turn_id=turn_id)
        journal.append(
            journal_entry(rt.service, turn_id, "llm.fallback", purpose=purpose, kind=exc.kind)
        )
        return None
    LLM_CALLS.labels(rt.service, "ok", rt.tenant).inc()
    journal.append(journal_entry(rt.service, turn_id, "llm.used", purpose=purpose))
    return result
