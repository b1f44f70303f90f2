"""The ratios and targets of ``orquestra bench --peer`` (issue 20's table), and its wiring."""

from __future__ import annotations

import os
from typing import Any

from bench.peer import Target, combine, compare, render
from orquestra.bench import deployment
from orquestra.cli import build_parser


def results(cpu: float, rate: float, p50: float, commands: float) -> dict[str, Any]:
    return {
        "speed_probe_ms": {"system": 50.0},
        "system": {
            "one": {"p50_ms": p50},
            "max": {
                "users": 32,
                "turns_per_s": rate,
                "cpu_ms_per_turn_total": cpu,
                "redis_commands_per_turn": commands,
                "cpu_ms_per_turn": {"peer": cpu},
            },
        },
    }


def test_every_target_met_when_the_ratios_are_within_bounds() -> None:
    peer = results(cpu=10.0, rate=100.0, p50=8.0, commands=37.0)
    ours = results(cpu=9.0, rate=200.0, p50=8.0, commands=60.0)
    assert compare(peer, ours) == [
        Target("CPU ms per turn, max load", 10.0, 9.0, 0.9, "≤ 1.0 × peer", True),
        Target("turns/s, max load", 100.0, 200.0, 2.0, "≥ 1.8 × peer", True),
        Target("p50 ms, one conversation", 8.0, 8.0, 1.0, "≤ 1.0 × peer", True),
        Target("Redis commands per turn, max load", 37.0, 60.0, 1.62, "≤ 60", True),
    ]


def test_targets_missed_and_missing_figures() -> None:
    peer = results(cpu=10.0, rate=100.0, p50=8.0, commands=37.0)
    ours = results(cpu=18.0, rate=150.0, p50=13.0, commands=148.0)
    del ours["system"]["one"]["p50_ms"]
    met = [(t.ratio, t.met) for t in compare(peer, ours)]
    assert met == [(1.8, False), (1.5, False), (None, None), (4.0, False)]


def test_the_table_names_every_figure() -> None:
    peer = results(cpu=10.0, rate=100.0, p50=8.0, commands=37.0)
    ours = results(cpu=9.0, rate=200.0, p50=8.0, commands=60.0)
    table = render(peer, ours, compare(peer, ours))
    assert "| CPU ms per turn, max load | 10 | 9 | 0.9 | ≤ 1.0 × peer | yes |" in table


def test_the_cli_takes_the_peer_and_its_checkout() -> None:
    args = build_parser().parse_args(
        ["bench", "--peer", "/peers/langgraph", "--peer-src", "/tmp/orq", "--seconds", "3"]
    )
    assert (args.peer, args.peer_src, args.seconds) == ("/peers/langgraph", "/tmp/orq", 3.0)


def test_the_peer_is_measured_against_the_one_machine_deployment_unless_told() -> None:
    """``orquestra bench --peer PATH`` alone runs the services of a turn's path together, a
    replica per core; ``--together``/``--replicas`` or ``--separate`` say otherwise."""
    parse = build_parser().parse_args
    path = ("gateway", "triage", "mode_router", "trial", "faq", "enrollment")
    services, replicas = deployment(parse(["bench", "--peer", "/p"]))
    assert set(services) == set(path) and replicas == (os.cpu_count() or 1)
    assert deployment(parse(["bench", "--peer", "/p", "--replicas", "3"]))[1] == 3
    assert deployment(parse(["bench", "--peer", "/p", "--separate"])) == ((), 1)
    given = deployment(parse(["bench", "--peer", "/p", "--together", "gateway,triage"]))
    assert set(given[0]) == {"gateway", "triage"} and given[1] == 1


def test_rounds_combine_into_each_figures_median_ratio() -> None:
    """Alternated rounds: each ratio comes from its own round, the table gives their median;
    the commands' bound is on the figure itself."""
    rounds = [
        compare(results(10.0, 100.0, 8.0, 37.0), results(8.0, 230.0, 6.0, 58.0)),
        compare(results(8.0, 120.0, 6.0, 37.0), results(9.2, 190.0, 7.8, 59.0)),
        compare(results(9.0, 110.0, 7.0, 37.0), results(8.1, 210.0, 6.3, 58.5)),
    ]
    cpu, rate, p50, commands = combine(rounds)
    assert (cpu.ratio, cpu.met) == (0.9, True)  # 0.8, 1.15, 0.9
    assert (rate.ratio, rate.met) == (1.91, True)  # 2.3, 1.58, 1.91
    assert (p50.ratio, p50.met) == (0.9, True)  # 0.75, 1.3, 0.9
    assert (commands.ours, commands.met) == (58.5, True)
    assert (cpu.peer, cpu.ours) == (9.0, 8.1)
    slow = combine([rounds[1], rounds[1], rounds[0]])
    assert [t.met for t in slow] == [False, False, False, True]


def test_the_cli_runs_three_alternated_rounds_unless_told() -> None:
    parse = build_parser().parse_args
    assert parse(["bench", "--peer", "/p"]).rounds == 3
    assert parse(["bench", "--peer", "/p", "--rounds", "1"]).rounds == 1
