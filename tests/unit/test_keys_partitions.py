"""Partitioned names (``ORQ_PARTITIONS``): one partition keeps today's names, more spread the
bus streams and hot sorted sets by a stable hash of the conversation (or turn) id."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.registry import TOPOLOGY
from shared.keys import Keys, partition_of


def test_one_partition_keeps_every_name_of_a_single_redis() -> None:
    keys = Keys("orq:", topology=TOPOLOGY)
    assert keys.route(keys.turns, "c1") == "orq:turns"
    assert keys.parts(keys.outbound) == ["orq:outbound"]
    assert keys.pending_starts("c1") == "orq:gw:pending"
    assert keys.merge_deadlines("t1") == "orq:merge:deadlines"
    assert keys.heartbeats("triage|x") == "orq:heartbeats"
    assert ("orq:turns", "triage") in keys.groups()
    single_groups = len(keys.groups())
    assert single_groups >= 8 and len(set(keys.groups())) == single_groups


def test_partitions_hash_tag_each_stream_and_sorted_set() -> None:
    keys = Keys("orq:", 8, topology=TOPOLOGY)
    assert keys.parts(keys.turns) == [f"orq:turns:{{p{p:02d}}}" for p in range(8)]
    assert keys.parts(keys.tasks("faq"))[7] == "orq:tasks.faq:{p07}"
    assert keys.parts(keys.dlq) == ["orq:dlq"]  # rare writes: not partitioned
    single = Keys("orq:", topology=TOPOLOGY).groups()
    partitioned = [(s, g) for s, g in single if len(keys.parts(s)) > 1]
    assert len(keys.groups()) == len(single) + 7 * len(partitioned)  # bus streams x 8
    assert len(keys.all_pending_starts()) == len(keys.all_merge_deadlines()) == 8


@given(st.text(min_size=1, max_size=40), st.integers(min_value=2, max_value=64))
def test_a_conversation_maps_to_one_partition_for_every_stream(conv: str, n: int) -> None:
    keys = Keys("orq:", n, topology=TOPOLOGY)
    part = partition_of(conv, n)
    tag = f"{{p{part:02d}}}"
    assert 0 <= part < n
    for name in (keys.turns, keys.merge, keys.outbound, keys.events, keys.tasks("trial")):
        assert keys.route(name, conv).endswith(tag)
    assert keys.pending_starts(conv).endswith(tag)


def test_the_partition_is_stable_across_processes_and_spreads_conversations() -> None:
    # CRC-32 of the id, not Python's per-process salted hash().
    assert partition_of("x", 16) == 0x8CDC1683 % 16
    counts = [0] * 8
    for i in range(4000):
        counts[partition_of(f"5511{i:09d}", 8)] += 1
    assert min(counts) > 400 and max(counts) < 600, counts


def test_the_sets_a_loop_per_process_watches_are_every_tenants_with_qualified_members() -> None:
    """Pending starts and the handoff sets have one name for every tenant (the single
    business's, unchanged), so one sweep per process reads them; a tenant's conversation is
    in them as ``tenant~id``, the single business's as its id. The staff inbox index, a
    tenant's own listing, stays the tenant's."""
    single = Keys("orq:", 4)
    alpha = Keys("orq:", 4, tenant="alpha")
    assert alpha.pending_starts("c1") == single.pending_starts("c1")
    assert alpha.all_pending_starts() == single.all_pending_starts()
    assert (alpha.waiting_human, alpha.human_owned) == ("orq:handoff:waiting", "orq:handoff:human")
    assert (single.waiting_human, single.human_owned) == (alpha.waiting_human, alpha.human_owned)
    assert (single.qualified("c1"), alpha.qualified("c1")) == ("c1", "alpha~c1")
    assert (single.conversation_index, alpha.conversation_index) == (
        "orq:conversations",
        "orq:alpha:conversations",
    )
