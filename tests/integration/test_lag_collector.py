"""The bus's lag gauges against a real Redis: what a scrape reads of the consumer groups."""

from __future__ import annotations

import redis as redis_sync

from services.registry import TOPOLOGY
from shared.keys import Keys
from shared.lag import ConsumerLagCollector


def test_the_lag_counted_before_redis_7_reads_binary_entries(
    redis_url: str, unique_prefix: str
) -> None:
    """Redis < 7 (the embedded server) reports no lag: the collector counts the entries after
    the group's last delivered one. Those are FastStream's binary messages, not text, so a
    scrape while one waited failed /metrics with a decoding error; it counts them now."""
    keys = Keys(unique_prefix, topology=TOPOLOGY)
    client = redis_sync.Redis.from_url(redis_url)
    collector = ConsumerLagCollector(redis_url, keys)
    try:
        client.xgroup_create(keys.turns, "triage", id="0", mkstream=True)
        client.xadd(keys.turns, {"__data__": b"\x89\x01\xff\xfe not text"})
        client.xadd(keys.turns, {"__data__": b"\x89\x02\xff\xfe"})
        info = {"name": "triage", "last-delivered-id": "0-0", "pending": 0, "consumers": 0}
        assert collector._with_lag(keys.turns, info)["lag"] == 2
        [row] = [r for r in collector.rows() if (r.stream, r.group) == ("turns", "triage")]
        assert row.lag == 2
    finally:
        collector.client.close()
        collector.raw.close()
        client.close()
