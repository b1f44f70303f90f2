"""Consumer-group lag and pending counts of the bus, as Prometheus gauges.

A custom collector runs ``XINFO GROUPS`` on every stream of the topology (``Keys.groups``) when
Prometheus scrapes, so the numbers are as fresh as the scrape and nothing polls Redis between
scrapes. Per (stream, group):

- ``orq_consumer_group_lag``: entries not yet delivered to the group (Redis 7's ``lag``; absent
  when Redis cannot tell, e.g. right after a trim or on Redis < 7);
- ``orq_consumer_group_pending``: entries delivered but not acknowledged (in a handler, or left
  by a dead replica until they are reclaimed);
- ``orq_consumer_group_consumers``: consumers registered in the group;
- ``orq_lag_collector_up``: 1 when Redis answered this scrape, else 0.

Stream labels drop the key prefix (``turns``, ``tasks.trial``), so one dashboard fits every
deployment. Wire it once per process next to the metrics server::

    register_lag_collector(rt.settings.redis_url, rt.keys)

Every process exports the same series; dashboards aggregate with ``max by (stream, group)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import redis
from prometheus_client.core import REGISTRY, CollectorRegistry, GaugeMetricFamily
from prometheus_client.registry import Collector
from redis.cluster import RedisCluster

from shared.keys import Keys

LABELS = ["stream", "group"]


# On Redis < 7 the lag is counted; past this many entries it is reported as this many.
LAG_COUNT_LIMIT = 10_000


@dataclass(frozen=True)
class GroupLag:
    stream: str
    group: str
    lag: int | None
    pending: int
    consumers: int


def group_lags(
    stream: str, groups: Iterable[Mapping[str, Any]], wanted: set[str], prefix: str
) -> list[GroupLag]:
    """The ``XINFO GROUPS`` reply of one stream, as rows for the groups of the topology."""
    label = stream.removeprefix(prefix)
    rows = []
    for info in groups:
        name = str(info.get("name"))
        if name not in wanted:
            continue
        lag = info.get("lag")
        rows.append(
            GroupLag(
                stream=label,
                group=name,
                lag=int(lag) if lag is not None else None,
                pending=int(info.get("pending") or 0),
                consumers=int(info.get("consumers") or 0),
            )
        )
    return rows


def families(rows: Iterable[GroupLag], up: bool) -> list[GaugeMetricFamily]:
    """The gauges of one scrape."""
    lag = GaugeMetricFamily(
        "orq_consumer_group_lag", "Stream entries not yet delivered to the group", labels=LABELS
    )
    pending = GaugeMetricFamily(
        "orq_consumer_group_pending", "Entries delivered but not acknowledged", labels=LABELS
    )
    consumers = GaugeMetricFamily(
        "orq_consumer_group_consumers", "Consumers registered in the group", labels=LABELS
    )
    for row in rows:
        labels = [row.stream, row.group]
        if row.lag is not None:
            lag.add_metric(labels, row.lag)
        pending.add_metric(labels, row.pending)
        consumers.add_metric(labels, row.consumers)
    status = GaugeMetricFamily("orq_lag_collector_up", "1 when Redis answered the lag scrape")
    status.add_metric([], 1 if up else 0)
    return [lag, pending, consumers, status]


class ConsumerLagCollector(Collector):
    """Reads the lag of every consumer group of the bus at scrape time."""

    def __init__(
        self, redis_url: str, keys: Keys, timeout_s: float = 2.0, *, cluster: bool = False
    ) -> None:
        self.keys = keys
        # On a cluster, each XINFO goes to the node holding that stream (partition).
        client_class = RedisCluster if cluster else redis.Redis
        self.client = client_class.from_url(
            redis_url,
            decode_responses=True,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
        )
        # The entries themselves are FastStream's binary format, not text: counted (Redis < 7)
        # through a client that does not decode them.
        self.raw = client_class.from_url(
            redis_url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )

    def rows(self) -> list[GroupLag]:
        """One ``XINFO GROUPS`` per stream (a stream not created yet has no rows)."""
        wanted: dict[str, set[str]] = {}
        for stream, group in self.keys.groups():
            wanted.setdefault(stream, set()).add(group)
        rows: list[GroupLag] = []
        for stream, groups in wanted.items():
            try:
                infos = self.client.xinfo_groups(stream)
            except redis.ResponseError:
                continue
            rows += group_lags(stream, [self._with_lag(stream, i) for i in infos], groups,
                               self.keys.prefix)  # fmt: skip
        return rows

    def _with_lag(self, stream: str, info: Mapping[str, Any]) -> Mapping[str, Any]:
        """Redis 7 reports ``lag``; before it (the embedded 6.2), count what is after the
        group's last delivered entry (up to LAG_COUNT_LIMIT)."""
        if info.get("lag") is not None:
            return info
        after = self.raw.xrange(
            stream, min=f"({info['last-delivered-id']}", max="+", count=LAG_COUNT_LIMIT
        )
        return {**info, "lag": len(after or [])}

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            rows, up = self.rows(), True
        except redis.RedisError:
            rows, up = [], False
        yield from families(rows, up)

    def describe(self) -> Iterator[GaugeMetricFamily]:
        # Without describe, registering would call collect (and Redis) right away.
        yield from families([], True)


def register_lag_collector(
    redis_url: str, keys: Keys, registry: CollectorRegistry = REGISTRY, *, cluster: bool = False
) -> ConsumerLagCollector:
    """Add the collector to ``registry`` (the process's default one, served on its metrics
    port). Call once per process."""
    collector = ConsumerLagCollector(redis_url, keys, cluster=cluster)
    registry.register(collector)
    return collector
