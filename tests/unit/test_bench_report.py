"""The benchmark's table and targets (bench/report.py) and the simulated LLM's answers."""

from __future__ import annotations

import json
from typing import Any

from bench.llm_server import answer
from bench.pair import per_turn_table
from bench.report import render, targets
from orquestra.forked import service_of
from services.faq.llm import FaqLLMAnswer
from services.triage.models import LLMTriage
from services.trial.llm import PhrasedReply
from services.trial.models import TrialExtraction
from shared.llm import _SCHEMA_INSTRUCTION


def phase(turns_per_s: float, p50: float, p99: float, **extra: Any) -> dict[str, Any]:
    return {"users": 32, "turns_per_s": turns_per_s, "p50_ms": p50, "p95_ms": p99, "p99_ms": p99,
            **extra}  # fmt: skip


def results() -> dict[str, Any]:
    return {
        "machine": {"cpus": 2, "cpu_model": "Test CPU", "python": "3.11", "load_1m_before": 0.1},
        "speed_probe_ms": {"system": 210.4, "baseline_b": 105.0},
        "elapsed_s": 150.0,
        "system": {
            "idle": {"cpu_ms_per_s": {"merger": 9.5}, "cores": 0.03, "redis_commands_per_s": 40},
            "one": phase(80, 12.0, 20.0),
            "max": phase(
                320,
                40.0,
                90.0,
                cpu_ms_per_turn={"gateway": 2.0, "merger": 1.5},
                cpu_ms_per_turn_total=3.5,
                redis_commands_per_turn=60.0,
                redis_top_commands_per_turn={"evalsha": 12.0},
                redis_memory={"used_memory_mb": 12.5, "keys": 300},
            ),
            "half": phase(160, 20.0, 120.0, offered_rate=160.0),
        },
        "baseline_a": {"one": phase(150, 6.0, 9.0), "max": phase(400, 30, 60)},
        "baseline_b": {"one": phase(300, 3.0, 5.0), "max": phase(600, 25, 50, messages_per_s=4800)},
        "llm": {
            "delay_ms": 300,
            "light": {
                **phase(8, 950, 1100, workers=16),
                "users": 8,
                "critical_path": {
                    "turns": 40,
                    "llm_ms_p50": 900,
                    "latency_ms_p50": 950,
                    "ratio_p50": 1.05,
                    "ratio_p95": 1.2,
                },
            },
            "default_workers": phase(
                40,
                1000,
                1500,
                workers=16,
                llm_calls_per_turn=2.5,
                critical_path={
                    "turns": 100,
                    "llm_ms_p50": 900,
                    "latency_ms_p50": 1000,
                    "ratio_p50": 1.1,
                    "ratio_p95": 1.4,
                },
            ),
        },
        "scaling": {
            "burn_ms": 20,
            "rows": [
                {"trial_replicas": n, **phase(rate, 100, 200, cpu_ms_per_turn={"trial": 21.0})}
                for n, rate in ((1, 45.0), (2, 80.0), (3, 82.0))
            ],
        },
        "burst_window": {
            "burst_window_ms": 250,
            "burst_fragment_ms": 2500,
            "one_fragment_off": phase(3.8, 256.0, 263.0),
            "one": phase(3.8, 255.0, 262.0),
            "waits": {"window 250 ms": 14},
        },
    }


def verdicts(found: list) -> dict[str, bool | None]:
    return {t.name: t.met for t in found}


def test_each_target_is_judged_against_its_threshold() -> None:
    found = verdicts(targets(results()))
    assert found["throughput vs framework floor (B)"] is True  # 320 >= 0.5 x 600
    assert found["sustained throughput"] is True  # 320 >= 300
    assert found["p50 latency, one conversation"] is True  # 12 <= 15
    assert found["p99 latency at half the maximum load"] is False  # 120 > 100
    assert found["LLM mode throughput (32 conv., ORQ_LLM_WORKERS=16)"] is False  # 40 < 50
    assert found["LLM turn vs its LLM time (32 conv., ORQ_LLM_WORKERS=16)"] is True  # 1.1 <= 1.2
    assert found["a 2nd replica of the bottleneck (trial) raises throughput"] is True
    # Few people: only the turn's own time is judged, not the throughput.
    assert found["LLM turn vs its LLM time (8 conv., ORQ_LLM_WORKERS=16)"] is True
    assert "LLM mode throughput (8 conv., ORQ_LLM_WORKERS=16)" not in found


def test_targets_missing_from_a_partial_run_are_left_out() -> None:
    partial = {"system": results()["system"]}
    names = {t.name for t in targets(partial)}
    assert "sustained throughput" in names
    assert not any("LLM" in n or "floor" in n or "replica" in n for n in names)


def test_render_shows_every_phase_the_costs_and_the_targets() -> None:
    text = render(results())
    for expected in (
        "system, 1 conversation",
        "system, 32 conversations (max)",
        "half load (160.0 turns/s offered)",
        "burst window 250 ms, fragment 2500 ms",
        "burst window 250 ms, fragment off",
        "the quiet window each turn waited (journal): window 250 ms: 14",
        "A logic floor",
        "B framework floor",
        "C llm mode, 300 ms LLM",
        "4,800 messages/s",
        "gateway 2.00, merger 1.50",
        "idle (no traffic): 0.030 cores",
        "lower = faster): system 210, baseline_b 105",
        "12.5 MB",
        "turn/LLM p50 1.10 x",
        "NOT met",
    ):
        assert expected in text, expected
    scaling = text.split("Scaling:")[1].splitlines()
    assert any(line.split()[:2] == ["2", "80.0"] for line in scaling)


def test_render_of_a_system_only_run_has_no_baseline_rows() -> None:
    text = render({"system": results()["system"], "machine": {}})
    assert "system, 1 conversation" in text
    assert "floor" not in text and "Scaling" not in text


def instruction(model: type) -> dict[str, str]:
    schema = json.dumps(model.model_json_schema(), ensure_ascii=False)
    return {"role": "system", "content": _SCHEMA_INSTRUCTION.format(schema=schema)}


def test_simulated_llm_answers_match_every_schema_the_services_ask_for() -> None:
    user = {"role": "user", "content": "quero agendar e onde fica a CT?"}
    triage = LLMTriage.model_validate_json(answer([user, instruction(LLMTriage)]))
    assert set(triage.intents) == {"trial", "faq"}
    greeting = LLMTriage.model_validate_json(
        answer([{"role": "user", "content": "bom dia"}, instruction(LLMTriage)])
    )
    assert greeting.intents == ["general"] and greeting.general_response
    TrialExtraction.model_validate_json(answer([user, instruction(TrialExtraction)]))
    FaqLLMAnswer.model_validate_json(answer([user, instruction(FaqLLMAnswer)]))
    reference = {
        "role": "user",
        "content": json.dumps({"mensagem_de_referencia": "Confirma 17/02?"}),
    }
    phrased = PhrasedReply.model_validate_json(answer([reference, instruction(PhrasedReply)]))
    assert phrased.text == "Confirma 17/02?"


def test_pair_table_gives_cpu_per_turn_per_service() -> None:
    [old, new] = per_turn_table(
        [("old", {"triage": 0.5, "merger": 1.0}, 100), ("new", {"triage": 0.2}, 0)]
    )
    assert old == "old: 100 turns, 15.00 CPU ms/turn (merger 10.00  triage 5.00)"
    assert new == "new: 0 turns, 200.00 CPU ms/turn (triage 200.00)"


def test_a_service_is_found_by_its_command_line_or_by_a_forked_replicas_title() -> None:
    """``bench.pair`` and the load tests find each service's process from /proc: a replica
    ``orquestra up`` forks carries the service in its title, not after ``-m``."""
    assert service_of(b"/usr/bin/python3\0-m\0services.triage\0") == "triage"
    assert service_of(b"services.gateway --port 8000") == "gateway"
    assert service_of(b"services.trial\0\0\0") == "trial"
    assert service_of(b"/usr/bin/redis-server\0127.0.0.1:6379\0") is None
    # Services run together (``python -m services a b``, or forked with that title).
    assert service_of(b"/usr/bin/python3\0-m\0services\0triage\0trial\0") == "triage+trial"
    assert service_of(b"services triage mode_router\0\0") == "triage+mode_router"
    title = b"services.gateway --port 8000 --with triage,trial --reuse-port"
    assert service_of(title) == "gateway+triage+trial"


def test_render_of_a_cluster_run_shows_commands_by_master_and_turns_by_partition() -> None:
    run = results()
    run["system"]["max"]["redis_commands_per_turn_per_node"] = {"n2:7001": 50.5, "n1:7000": 70.25}
    run["partitions"] = {
        "turns:{p00}": {"turns": 12, "node": "n1:7000"},
        "turns:{p01}": {"turns": 9, "node": "n2:7001"},
    }
    text = render(run)
    assert "commands per turn at max load by master: n1:7000 70.2, n2:7001 50.5" in text
    assert "by partition (master): turns:{p00} 12 (n1:7000), turns:{p01} 9 (n2:7001)" in text
