"""The FAQ meets its goals on the labelled WhatsApp set, measured honestly."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from services.faq.evaluate import DEFAULT_EVAL, evaluate, main
from shared.faq.config import FaqConfig
from shared.nlu.normalize import normalize
from shared.pack import load_pack


@pytest.fixture(scope="module")
def report() -> dict:
    return evaluate("ctsmash", DEFAULT_EVAL)


def test_eval_set_is_large_enough() -> None:
    data = yaml.safe_load(DEFAULT_EVAL.read_text(encoding="utf-8"))
    assert len(data["answerable"]) >= 80
    assert len(data["unanswerable"]) >= 20


def test_eval_questions_are_not_copied_into_the_pack() -> None:
    config = load_pack("ctsmash").section("faq", FaqConfig)
    variants = {normalize(q) for e in config.entries for q in e.questions}
    data = yaml.safe_load(DEFAULT_EVAL.read_text(encoding="utf-8"))
    questions = [item["q"] for item in data["answerable"]] + data["unanswerable"]
    assert not [q for q in questions if normalize(q) in variants]


def test_goals_are_met(report: dict) -> None:
    assert report["top1_accuracy"] >= 0.9, report["misses"]
    assert report["false_answer_rate"] <= 0.1, report["false_answers"]


def test_eval_labels_must_exist_in_the_pack(tmp_path: Path) -> None:
    path = tmp_path / "eval.yaml"
    path.write_text(
        yaml.safe_dump({"answerable": [{"q": "onde fica", "id": "nope"}], "unanswerable": ["x"]})
    )
    with pytest.raises(ValueError, match="nope"):
        evaluate("ctsmash", path)


def test_failures_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "eval.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "answerable": [
                    {"q": "onde fica?", "id": "endereco"},
                    {"q": "onde fica?", "id": "planos"},
                ],
                "unanswerable": ["quanto custa?", "tem wifi?"],
            }
        )
    )
    result = evaluate("ctsmash", path)
    assert result["top1_accuracy"] == 0.5
    assert result["misses"] == [{"q": "onde fica?", "expected": "planos", "got": ["endereco"]}]
    assert result["false_answer_rate"] == 0.5
    assert result["false_answers"] == [{"q": "quanto custa?", "got": ["planos"]}]


def test_main_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ctsmash", str(DEFAULT_EVAL)]) == 0
    out = capsys.readouterr().out
    assert "top-1 accuracy" in out
    assert "false-answer rate" in out
