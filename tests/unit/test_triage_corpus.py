"""The labelled corpus and the goals measured on it (rules accuracy, hybrid LLM usage)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.triage.evaluate import DEFAULT_CORPUS, evaluate, load_corpus, main
from shared.pack import load_pack

PACK = load_pack("ctsmash")


@pytest.fixture(scope="module")
def report() -> dict:
    return evaluate(DEFAULT_CORPUS, PACK)


def test_corpus_is_large_and_realistic() -> None:
    corpus = load_corpus(DEFAULT_CORPUS)
    assert len(corpus) >= 150
    assert sum(m.trial_stage not in (None, "booked") for m in corpus) >= 30
    assert sum(len(m.expected) > 1 for m in corpus) >= 10
    assert sum(any(ord(c) >= 0x1F300 for c in m.text) for m in corpus) >= 5  # emojis
    assert sum(m.text.isascii() for m in corpus) >= 100  # typed without accents
    assert {"trial", "faq", "general", "handoff"} <= {i for m in corpus for i in m.expected}


def test_rules_exact_match_goal(report: dict) -> None:
    assert report["exact_match"] >= 0.90, report["misses"]


def test_hybrid_llm_calls_per_turn_goal(report: dict) -> None:
    assert report["hybrid_llm_calls_per_turn"] <= 0.3


def test_every_intent_is_measured(report: dict) -> None:
    for intent in ("trial", "faq", "general", "handoff", "clarify"):
        figures = report["per_intent"][intent]
        assert figures["support"] > 0
        assert 0.0 <= figures["precision"] <= 1.0 and 0.0 <= figures["recall"] <= 1.0


def write_corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.yaml"
    path.write_text(
        "messages:\n"
        "  - {text: 'quero agendar uma aula experimental', expected: [trial]}\n"
        "  - {text: 'onde fica a CT?', expected: [trial]}\n"
        "  - {text: 'sim', trial_stage: ask_date, expected: [trial]}\n"
        "  - {text: 'hmm', expected: []}\n",
        encoding="utf-8",
    )
    return path


def test_metrics_arithmetic(tmp_path: Path) -> None:
    result = evaluate(write_corpus(tmp_path), PACK)
    assert result["messages"] == 4
    assert result["exact_match"] == 0.75
    assert result["per_intent"]["trial"] == {"precision": 1.0, "recall": 0.6667, "support": 3}
    assert result["per_intent"]["faq"] == {"precision": 0.0, "recall": 1.0, "support": 0}
    assert result["per_intent"]["clarify"] == {"precision": 1.0, "recall": 1.0, "support": 1}
    assert result["hybrid_llm_calls_per_turn"] == 0.25
    assert result["misses"] == [
        {
            "text": "onde fica a CT?",
            "trial_stage": None,
            "expected": ["trial"],
            "predicted": ["faq"],
        }
    ]


def test_main_prints_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["--corpus", str(write_corpus(tmp_path))])
    assert json.loads(capsys.readouterr().out)["exact_match"] == 0.75
