"""Summing py-spy's raw stacks into per-function shares (bench/profile.py)."""

from __future__ import annotations

import pytest

from bench.profile import frame_name, summarize_raw

LOOP = "BaseEventLoop.run_forever (/usr/lib/python3.11/asyncio/base_events.py:607)"
RAW = [
    "<module> (services/merger/__main__.py:7);" + LOOP + ";"
    "Merger._add (/work/main/services/merger/app.py:52);"
    "Redis.execute_command (/x/.venv/lib/python3.11/site-packages/redis/asyncio/client.py:700) 6",
    "<module> (services/merger/__main__.py:7);" + LOOP + ";"
    "Merger._add (/work/main/services/merger/app.py:53) 2",
    "<module> (services/merger/__main__.py:7);" + LOOP + ";"
    "run_in_threadpool (/x/.venv/lib/python3.11/site-packages/fast_depends/utils.py:76) 2",
    "<module> (services/merger/__main__.py:3);_find_and_load (<frozen importlib>:1) 50",
    "not a stack line",
]


def test_frame_names_drop_line_numbers_and_environment_paths() -> None:
    assert frame_name("Merger._add (/work/main/services/merger/app.py:52)") == (
        "Merger._add (services/merger/app.py)"
    )
    assert frame_name("f (/x/.venv/lib/python3.11/site-packages/redis/client.py:1)") == (
        "f (redis/client.py)"
    )
    assert frame_name("<unknown>") == "<unknown>"


def test_shares_count_only_stacks_under_the_event_loop() -> None:
    summary = summarize_raw(RAW)
    assert summary.samples == 10  # the 50 import samples are outside the loop
    inclusive = {name: share for share, name in summary.inclusive}
    assert inclusive["Merger._add (services/merger/app.py)"] == pytest.approx(0.8)
    assert inclusive["Redis.execute_command (redis/asyncio/client.py)"] == pytest.approx(0.6)
    self_time = {name: share for share, name in summary.self_time}
    assert self_time["Merger._add (services/merger/app.py)"] == pytest.approx(0.2)
    assert summary.self_time[0] == (0.6, "Redis.execute_command (redis/asyncio/client.py)")


def test_each_sample_goes_to_the_area_of_its_innermost_known_frame() -> None:
    areas = {name: share for share, name in summarize_raw(RAW).areas}
    assert areas["Redis client (redis-py)"] == pytest.approx(0.6)
    assert areas["orquestra code (services/, shared/)"] == pytest.approx(0.2)
    assert areas["thread hop (a sync function run in a worker thread)"] == pytest.approx(0.2)


def test_a_frame_repeated_in_one_stack_counts_once() -> None:
    recursive = [f"{LOOP};f (a.py:1);f (a.py:2);g (b.py:3) 4"]
    summary = summarize_raw(recursive)
    assert dict((n, s) for s, n in summary.inclusive)["f (a.py)"] == 1.0


def test_nothing_sampled_gives_an_empty_summary() -> None:
    assert summarize_raw([]).samples == 0
    assert summarize_raw([]).as_dict()["inclusive"] == []


def test_under_uvloop_the_loop_is_asyncios_runner() -> None:
    """Every service runs on uvloop, whose loop is C: py-spy's stacks go from
    ``Runner.run`` straight to the coroutines (the summary read 0 samples before)."""
    runner = "Runner.run (/usr/lib/python3.11/asyncio/runners.py:118)"
    raw = [
        f"<module> (services/triage/__main__.py:8);{runner};"
        "handle_once (/work/main/shared/service.py:280) 3",
        "<module> (services/triage/__main__.py:3);_find_and_load (<frozen importlib>:1) 9",
    ]
    summary = summarize_raw(raw)
    assert summary.samples == 3
    assert summary.self_time == [(1.0, "handle_once (shared/service.py)")]
