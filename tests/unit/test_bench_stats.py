"""Percentile maths and phase summaries of the benchmark (bench/stats.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.stats import TurnSample, llm_critical_path, percentile, summarize


def test_percentile_interpolates_between_closest_ranks() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 0) == 10.0
    assert percentile(values, 100) == 40.0
    assert percentile(values, 50) == 25.0
    assert percentile(values, 25) == pytest.approx(17.5)


def test_percentile_ignores_input_order_and_handles_one_value() -> None:
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([7.0], 99) == 7.0


def test_percentile_of_nothing_is_nan_and_out_of_range_is_an_error() -> None:
    assert math.isnan(percentile([], 50))
    with pytest.raises(ValueError):
        percentile([1.0], 101)


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50), st.floats(0, 100))
def test_percentile_stays_within_the_data_and_grows_with_q(values: list[float], q: float) -> None:
    found = percentile(values, q)
    assert min(values) <= found <= max(values)
    assert percentile(values, min(100.0, q + 1)) >= found - 1e-9


def test_summary_counts_turns_started_in_the_window_only() -> None:
    samples = [
        TurnSample(started=0.5, latency=0.100),  # warm-up: left out
        TurnSample(started=1.0, latency=0.010, outcome="booked"),
        TurnSample(started=2.0, latency=0.020),
        TurnSample(started=2.9, latency=0.030, outcome="full"),
        TurnSample(started=3.0, latency=0.500),  # started when the phase ended: left out
    ]
    summary = summarize(samples, users=2, begin=1.0, end=3.0, errors=1)
    assert summary.turns == 3
    assert summary.turns_per_s == 1.5
    assert summary.p50_ms == pytest.approx(20.0)
    assert summary.max_ms == pytest.approx(30.0)
    assert summary.outcomes == {"booked": 1, "full": 1, "reply": 1}
    assert summary.errors == 1 and summary.users == 2


def test_summary_needs_a_window() -> None:
    with pytest.raises(ValueError):
        summarize([], users=1, begin=2.0, end=2.0)


def test_llm_critical_path_is_triage_plus_the_slowest_specialist() -> None:
    samples = [
        TurnSample(started=0, latency=1.0, turn_id="a"),  # triage 1 + trial 2 = 900 ms
        TurnSample(started=0, latency=0.6, turn_id="b"),  # triage 1 + max(trial 1, faq 1)
        TurnSample(started=0, latency=0.2, turn_id="c"),  # no LLM call: left out
    ]
    calls = {"a": {"triage": 1, "trial": 2, "faq": 1}, "b": {"triage": 1, "trial": 1, "faq": 1}}
    path = llm_critical_path(samples, calls, 300)
    assert path["turns"] == 2
    assert path["llm_ms_p50"] == pytest.approx(750)  # between 600 and 900
    assert path["ratio_p50"] == pytest.approx((1000 / 900 + 600 / 600) / 2)
