"""Numbers from samples: percentiles and the summary of one load phase (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by linear interpolation between closest ranks.

    The same definition as numpy's default, so figures can be checked with any tool.
    """
    if not values:
        return math.nan
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class TurnSample:
    """One turn as a simulated person saw it (seconds on the driver's monotonic clock)."""

    started: float
    latency: float
    outcome: str = "reply"
    conversation_id: str = ""
    turn_id: str = ""


@dataclass(frozen=True)
class PhaseSummary:
    """What one load phase measured: throughput over the window and latency in milliseconds."""

    users: int
    turns: int
    seconds: float
    turns_per_s: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    errors: int
    outcomes: dict[str, int]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def summarize(
    samples: Sequence[TurnSample], *, users: int, begin: float, end: float, errors: int = 0
) -> PhaseSummary:
    """Turns that started within ``[begin, end)``: their rate and latency percentiles.

    Counting by start time keeps warm-up turns out and still counts the turns in flight when
    the phase stopped, whose replies the driver waited for.
    """
    if end <= begin:
        raise ValueError("the measured window must have a positive length")
    kept = [s for s in samples if begin <= s.started < end]
    latencies = [s.latency * 1000 for s in kept]
    outcomes: dict[str, int] = {}
    for sample in kept:
        outcomes[sample.outcome] = outcomes.get(sample.outcome, 0) + 1
    seconds = end - begin
    return PhaseSummary(
        users=users,
        turns=len(kept),
        seconds=round(seconds, 3),
        turns_per_s=len(kept) / seconds,
        p50_ms=percentile(latencies, 50),
        p95_ms=percentile(latencies, 95),
        p99_ms=percentile(latencies, 99),
        max_ms=max(latencies) if latencies else math.nan,
        errors=errors,
        outcomes=dict(sorted(outcomes.items())),
    )


def llm_critical_path(
    samples: Sequence[TurnSample], calls: dict[str, dict[str, int]], delay_ms: float
) -> dict[str, float | int]:
    """How long each turn took against the LLM time on its critical path.

    ``calls`` maps a turn id to the LLM calls each service made for it. Triage runs first, then
    the specialists in parallel, so the critical path holds triage's calls plus those of the
    specialist that made the most; each call takes ``delay_ms``. A ratio of 1.0 would mean the
    system adds nothing to the LLM's own time. Turns without an LLM call are left out.
    """
    ratios, critical_ms, latencies = [], [], []
    for sample in samples:
        per_service = calls.get(sample.turn_id)
        if not per_service:
            continue
        specialists = max(per_service.get("trial", 0), per_service.get("faq", 0))
        sequential = per_service.get("triage", 0) + specialists
        if sequential == 0:
            continue
        llm_ms = sequential * delay_ms
        critical_ms.append(llm_ms)
        latencies.append(sample.latency * 1000)
        ratios.append(sample.latency * 1000 / llm_ms)
    return {
        "turns": len(ratios),
        "llm_ms_p50": percentile(critical_ms, 50),
        "latency_ms_p50": percentile(latencies, 50),
        "ratio_p50": percentile(ratios, 50),
        "ratio_p95": percentile(ratios, 95),
    }
