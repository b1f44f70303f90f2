"""Every Redis stream and key name, in one place.

Conversation keys carry the conversation id as a hash tag (``orq:{conv}:inbox``) so that, on
Redis Cluster, one conversation's keys share a slot and its Lua scripts stay single-slot; per-turn
keys do the same with the turn id.

With ``partitions`` > 1 (``ORQ_PARTITIONS``), the bus streams and the hot global sorted sets
(pending starts, merge deadlines, heartbeats) become that many keys hash-tagged by partition
(``orq:turns:{p07}``), spread over the cluster's nodes. A conversation always maps to the
same partition (a stable hash of its id), so its turns stay in order in one stream; a turn's
merge deadline goes by the turn id's hash. With 1 partition every name is today's.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

# Bus streams split into ``partitions`` keys (with every ``tasks.<specialist>`` stream).
PARTITIONED = ("turns", "merge", "outbound", "events", "funnel.steps")


@dataclass(frozen=True)
class Topology:
    """The bus as the registered services declare it (``shared.spec.topology_of``): every
    (stream, consumer group) pair and every stream named, as ``Keys.stream`` takes names.

    Keys carry it so that shared code (group creation, lag, the janitor) needs no list of its
    own: a service added to ``services/registry.py`` is in it, and nothing else is.
    """

    groups: tuple[tuple[str, str], ...] = ()
    streams: tuple[str, ...] = ()


def partition_of(name: str, partitions: int) -> int:
    """A stable partition for ``name`` (CRC-32: the same in every process and version)."""
    return zlib.crc32(name.encode()) % partitions if partitions > 1 else 0


def split_tenant(member: str) -> tuple[str, str]:
    """(tenant, id) of a member of a set every tenant shares (``Keys.qualified``)."""
    tenant, separator, rest = member.partition("~")
    return (tenant, rest) if separator else ("", member)


def sched_member(conversation_id: str, item_id: str) -> str:
    """A scheduled message as a sorted set's member: the conversation (the item's slot) and
    the item. In the buckets every tenant shares the conversation is ``Keys.qualified``
    (``Keys.sched_bucket_member``); in a tenant's own held set it is the bare id."""
    return f"{conversation_id}|{item_id}"


@dataclass(frozen=True)
class Keys:
    prefix: str = "orq:"
    partitions: int = 1
    # The business these keys are for (``shared/tenants.py``): empty for a deployment of one,
    # so no key name changes; with several, every conversation's and turn's hash tag carries it
    # (``{tenant~conversation}``) and every other key of the business names it. Only the bus
    # streams, heartbeats, the few deployment-wide keys and the sorted sets a loop per process
    # watches for every tenant (merge deadlines, pending starts, handoff reminders and idle
    # returns: ``qualified`` members) are shared.
    tenant: str = ""
    # The registry's bus (``services.registry.TOPOLOGY``); only what creates or reads every
    # group needs it, and it says so when it is missing.
    topology: Topology = Topology()

    @property
    def _t(self) -> str:
        return f"{self.tenant}:" if self.tenant else ""

    def qualified(self, conversation_or_turn: str) -> str:
        """A conversation or turn id with its tenant, as hash tags and the members of sets
        every tenant shares carry it (``~`` is in no id; ``split_tenant`` reads it back)."""
        return f"{self.tenant}~{conversation_or_turn}" if self.tenant else conversation_or_turn

    # Partitions
    def partitioned(self, name: str, partition: int) -> str:
        """``name`` in one partition: unchanged with a single partition."""
        return name if self.partitions == 1 else f"{name}:{{p{partition:02d}}}"

    def every(self, name: str) -> list[str]:
        """``name`` in every partition."""
        return [self.partitioned(name, p) for p in range(self.partitions)]

    def route(self, name: str, key: str) -> str:
        """``name`` in the partition of ``key`` (a conversation id, a turn id...)."""
        return self.partitioned(name, partition_of(key, self.partitions))

    def parts(self, stream: str) -> list[str]:
        """Every partition of a bus stream (a stream that is not partitioned: itself)."""
        name = stream.removeprefix(self.prefix)
        partitioned = name in PARTITIONED or name.startswith("tasks.")
        return self.every(stream) if partitioned else [stream]

    @property
    def partition_count(self) -> str:
        """The partition count the streams were last run with (absent: 1)."""
        return f"{self.prefix}partitions"

    # Streams (bus streams are partitioned: publish to ``route(stream, conversation_id)``)
    def stream(self, name: str) -> str:
        """A stream as service specs name it (``"turns"``, ``"tasks.trial"``)."""
        return f"{self.prefix}{name}"

    @property
    def turns(self) -> str:
        return f"{self.prefix}turns"

    def tasks(self, specialist: str) -> str:
        return f"{self.prefix}tasks.{specialist}"

    @property
    def merge(self) -> str:
        return f"{self.prefix}merge"

    @property
    def outbound(self) -> str:
        return f"{self.prefix}outbound"

    @property
    def events(self) -> str:
        return f"{self.prefix}events"

    @property
    def funnel(self) -> str:
        """Funnel steps shown by turns (``FunnelStep``), for the scheduler's counters."""
        return f"{self.prefix}funnel.steps"

    @property
    def dlq(self) -> str:
        return f"{self.prefix}dlq"

    def commands(self, service: str) -> str:
        """Commands for the service that owns the data (e.g. staff marks on trial bookings)."""
        return f"{self.prefix}commands.{service}"

    @property
    def unanswered(self) -> str:
        """Questions the FAQ could not answer (read by ``orquestra unanswered``)."""
        return f"{self.prefix}{self._t}faq.unanswered"

    def all_streams(self) -> list[str]:
        """Every stream of the bus, in every partition, and the dead-letter stream."""
        named = dict.fromkeys([*self._topology().streams, "dlq"])
        return [part for name in named for part in self.parts(self.stream(name))]

    def groups(self) -> list[tuple[str, str]]:
        """The bus topology: every (stream, consumer group) pair, in every partition.

        Created up front at id 0 by whichever process starts first, so a message published
        before its consumer ever ran is still delivered.
        """
        pairs = self._topology().groups
        return [(part, group) for name, group in pairs for part in self.parts(self.stream(name))]

    def _topology(self) -> Topology:
        if not self.topology.groups:
            raise ValueError(
                "these Keys carry no bus topology: build them with the registry's "
                "(Keys(..., topology=services.registry.TOPOLOGY))"
            )
        return self.topology

    def retired_groups(self) -> list[tuple[str, str]]:
        """Groups earlier versions created and nothing reads any more: removed at start-up,
        because the janitor keeps every entry a group has not read (it would never trim). The
        funnel read every turn and every trial task; it now reads only the steps triage
        publishes on its own stream."""
        retired = [(self.turns, "merger"), (self.turns, "funnel"), (self.tasks("trial"), "funnel")]
        return [(part, group) for stream, group in retired for part in self.parts(stream)]

    # Per conversation
    def conv(self, conversation_id: str, name: str) -> str:
        return f"{self.prefix}{{{self.qualified(conversation_id)}}}:{name}"

    def state(self, conversation_id: str) -> str:
        """Hash: one field per state slice (JSON with its version ``_v``)."""
        return self.conv(conversation_id, "state")

    def inbox(self, conversation_id: str) -> str:
        """List of messages waiting for the next turn (``<ts_ms>|<json>``)."""
        return self.conv(conversation_id, "inbox")

    def lease(self, conversation_id: str) -> str:
        """The in-flight turn id, with an expiry."""
        return self.conv(conversation_id, "lease")

    def burst_hold(self, conversation_id: str) -> str:
        """Set while the latest waiting message is a fragment ("oi"), expiring with its longer
        quiet window: releasing the turn in flight does not start the next one meanwhile."""
        return self.conv(conversation_id, "hold")

    def dedupe(self, conversation_id: str, message_id: str) -> str:
        return self.conv(conversation_id, f"seen:{message_id}")

    def journal(self, conversation_id: str) -> str:
        return self.conv(conversation_id, "journal")

    def erased(self, conversation_id: str) -> str:
        """Set: the turns the conversation had when it was erased (LGPD), with the turn TTL.
        What those turns still write afterwards (a service's records, a scheduled message, a
        reply) is dropped, so an erase is not undone by work in flight (``privacy.py``)."""
        return self.conv(conversation_id, "erased")

    def outbox(self, conversation_id: str, turn_id: str, service: str) -> str:
        """What a service published for a turn, replayed on redelivery (effectively-once).
        ``COMMIT`` reads the turn id back from this name (``out:<turn id>:<service>``)."""
        return self.conv(conversation_id, f"out:{turn_id}:{service}")

    def sent(self, conversation_id: str, turn_id: str, index: int | str = "all") -> str:
        """Delivery claim of one reply bubble (or the whole reply)."""
        return f"{self.sent_prefix(conversation_id)}{turn_id}:{index}"

    def sent_prefix(self, conversation_id: str) -> str:
        """What every delivery claim of the conversation starts with (a turn start checks
        whether the turn in flight was delivered, ``shared/lua.py`` TRY_START)."""
        return self.conv(conversation_id, "sent:")

    def history(self, conversation_id: str) -> str:
        """Stream of the conversation's messages in both directions (customer, bot, agent)."""
        return self.conv(conversation_id, "history")

    def history_claim(self, conversation_id: str, turn_id: str) -> str:
        """Marks a reply as written into the history, so a redelivered reply is written once."""
        return self.conv(conversation_id, f"hist:{turn_id}")

    def agent_claim(self, conversation_id: str, client_message_id: str) -> str:
        """An agent message's client id: ``pending`` until published, then ``published``."""
        return self.conv(conversation_id, f"agent:{client_message_id}")

    def replies(self, conversation_id: str) -> str:
        """Stream of replies of the http channel, read back over the API."""
        return self.conv(conversation_id, "replies")

    # Per turn
    def merge_turn(self, turn_id: str) -> str:
        """Hash: the turn, the plan and every part received for it."""
        return f"{self.prefix}turn:{{{self.qualified(turn_id)}}}:merge"

    # A channel's own records (its folder names them: ``tag`` is its short name, e.g. "wa")
    def channel_item(self, tag: str, kind: str, scope: str) -> str:
        """A channel's record of one ``scope`` (a sent message's id, a pacing scope...):
        single-key operations only, so each key is its own hash tag."""
        return f"{self.prefix}{tag}:{kind}:{{{self._t}{scope}}}"

    def channel_global(self, tag: str, kind: str) -> str:
        """A channel's one record of the tenant (its health, events of no conversation)."""
        return f"{self.prefix}{self._t}{tag}:{kind}"

    # Global, partitioned
    def merge_deadlines(self, turn_id: str) -> str:
        """Sorted set: open turns (``qualified`` ids: every tenant's, so one loop per merger
        process watches them all) scored by their merge deadline, in the turn's partition."""
        return self.route(f"{self.prefix}merge:deadlines", turn_id)

    def all_merge_deadlines(self) -> list[str]:
        return self.every(f"{self.prefix}merge:deadlines")

    def pending_starts(self, conversation_id: str) -> str:
        """Sorted set: conversations with waiting messages (``qualified`` ids: every tenant's,
        so one sweep per gateway process visits them all), scored by when to start a turn,
        in the conversation's partition."""
        return self.route(f"{self.prefix}gw:pending", conversation_id)

    def all_pending_starts(self) -> list[str]:
        return self.every(f"{self.prefix}gw:pending")

    def heartbeats(self, member: str) -> str:
        """Sorted set: ``service|consumer`` scored by the last heartbeat (epoch seconds)."""
        return self.route(f"{self.prefix}heartbeats", member)

    def all_heartbeats(self) -> list[str]:
        return self.every(f"{self.prefix}heartbeats")

    # Global

    @property
    def conversation_index(self) -> str:
        """Sorted set: every conversation scored by its latest message (epoch ms, wall clock:
        staff work in real time), newest activity first for the staff inbox; entries older
        than the state's TTL are pruned as messages are stored, at most once a minute per
        gateway process (``TurnKeeper.ingest``)."""
        return f"{self.prefix}{self._t}conversations"

    @property
    def waiting_human(self) -> str:
        """Sorted set: conversations waiting for a person (``qualified`` ids: every tenant's,
        so one reminder loop per gateway process reads them all), scored by when they asked
        (epoch ms, wall clock)."""
        return f"{self.prefix}handoff:waiting"

    @property
    def human_owned(self) -> str:
        """Sorted set: human-owned conversations (``qualified`` ids, every tenant's) scored by
        the last staff message (epoch ms, wall clock); an idle one goes back to the bot."""
        return f"{self.prefix}handoff:human"

    @property
    def privacy_log(self) -> str:
        """List: one entry per erased conversation, with a hash of its id and the time only."""
        return f"{self.prefix}{self._t}privacy:log"

    def owned(self, service: str, name: str) -> str:
        """A key a service keeps outside any conversation (its records, their indexes),
        hash-tagged by the service and the tenant: a script over one service's records
        touches one slot, and tenants never share one."""
        return f"{self.prefix}{{{self._t}{service}}}:{name}"

    def conversation_pattern(self, conversation_id: str) -> str:
        """SCAN pattern of every key of one conversation (glob characters escaped)."""
        escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in conversation_id)
        return f"{self.conv(escaped, '')}*"

    @property
    def tenant_reloads(self) -> str:
        """Stream: reload requests (``orquestra tenants reload``), read by every process."""
        return f"{self.prefix}tenants:reloads"

    @property
    def tenant_reloads_applied(self) -> str:
        """Hash: each process's consumer name -> the last reload request it applied."""
        return f"{self.prefix}tenants:applied"

    @property
    def clock_offset(self) -> str:
        """Milliseconds the test clock runs ahead of the wall clock (``ORQ_TEST_CLOCK`` only)."""
        return f"{self.prefix}clock:offset"

    # Scheduler: due messages in one sorted set per hour bucket, each its own hash tag, so
    # buckets spread over a cluster's nodes and a claim script touches one slot.
    def sched_due(self, bucket: str) -> str:
        """Sorted set: pending messages of every tenant (``sched_bucket_member``), scored by
        due epoch ms; shared so that one loop per scheduler process claims them all."""
        return f"{self.prefix}sched:{{b:{bucket}}}"

    def sched_claimed(self, bucket: str) -> str:
        """Sorted set: claimed members scored by when the claim expires (a dead claimer's work
        is claimed again); shared by every tenant, like ``sched_due``."""
        return f"{self.prefix}sched:{{b:{bucket}}}:claimed"

    @property
    def sched_buckets(self) -> str:
        """Sorted set: buckets that may hold work (any tenant's), scored by the bucket's start
        (epoch ms)."""
        return f"{self.prefix}sched:{{buckets}}"

    def sched_bucket_member(self, conversation_id: str, item_id: str) -> str:
        """A message as a member of the shared buckets: it names its tenant, so the one loop
        finds the tenant's sender and a tenant's listing keeps only its own."""
        return sched_member(self.qualified(conversation_id), item_id)

    @property
    def sched_held(self) -> str:
        """Sorted set: ``conversation_id|item_id`` held while a person owns the conversation.
        The tenant's own: no loop polls it, only that tenant's listing, cancel and erase
        read it."""
        return f"{self.prefix}sched:{{{self._t}held}}"

    def sched_item(self, conversation_id: str, item_id: str) -> str:
        """Hash: one scheduled message (``item`` JSON, ``status``), in the conversation's slot."""
        return self.conv(conversation_id, f"sched:{item_id}")

    def sched_index(self, conversation_id: str) -> str:
        """Sorted set: the conversation's scheduled message ids, scored by due epoch ms."""
        return self.conv(conversation_id, "sched")

    def funnel_seen(self, conversation_id: str) -> str:
        """Hash: funnel steps already counted for the conversation (each counts once)."""
        return self.conv(conversation_id, "funnel")

    def funnel_day(self, day: str) -> str:
        """Hash: the funnel's counters of one business day (``metric`` and ``metric|source``)."""
        return f"{self.prefix}funnel:{{{self._t}d:{day}}}"
