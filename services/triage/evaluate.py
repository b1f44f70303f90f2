"""Measure rules-mode triage on a labelled corpus.

Reports, for the rules: exact-match accuracy of the intent set, precision and recall per
intent (``clarify`` stands for "nothing placed", i.e. the N1 menu), and how often hybrid mode
would call the LLM (the fraction of messages where ``needs_llm`` is True).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from services.triage.config import load_config
from services.triage.faq_evidence import faq_knows
from services.triage.rules import classify, needs_llm
from shared.pack import Pack, load_pack

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "triage_corpus.yaml"
CLARIFY = "clarify"


class CorpusMessage(BaseModel):
    text: str
    expected: list[str]
    trial_stage: str | None = None


def load_corpus(path: Path) -> list[CorpusMessage]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [CorpusMessage.model_validate(item) for item in data["messages"]]


def _labels(intents: list[str]) -> set[str]:
    return set(intents) or {CLARIFY}


def _ratio(numerator: int, denominator: int) -> float:
    return round(numerator / denominator, 4) if denominator else 1.0


def evaluate(corpus_path: Path, pack: Pack) -> dict[str, Any]:
    """Rules-mode figures over the corpus, with every miss listed for reading."""
    config = load_config(pack)
    corpus = load_corpus(corpus_path)
    knows = faq_knows(pack, config)
    exact = llm_calls = 0
    counts: dict[str, dict[str, int]] = {}
    misses: list[dict[str, Any]] = []
    for message in corpus:
        result = classify(
            message.text, trial_stage=message.trial_stage, config=config, pack=pack, knows=knows
        )
        expected, predicted = _labels(message.expected), _labels(result.intents)
        llm_calls += needs_llm(result, config)
        if expected == predicted:
            exact += 1
        else:
            misses.append(
                {
                    "text": message.text,
                    "trial_stage": message.trial_stage,
                    "expected": sorted(expected),
                    "predicted": sorted(predicted),
                }
            )
        for label in expected | predicted:
            tally = counts.setdefault(label, {"tp": 0, "fp": 0, "fn": 0})
            if label in expected and label in predicted:
                tally["tp"] += 1
            elif label in predicted:
                tally["fp"] += 1
            else:
                tally["fn"] += 1
    per_intent = {
        label: {
            "precision": _ratio(c["tp"], c["tp"] + c["fp"]),
            "recall": _ratio(c["tp"], c["tp"] + c["fn"]),
            "support": c["tp"] + c["fn"],
        }
        for label, c in sorted(counts.items())
    }
    return {
        "messages": len(corpus),
        "exact_match": _ratio(exact, len(corpus)),
        "per_intent": per_intent,
        "hybrid_llm_calls_per_turn": _ratio(llm_calls, len(corpus)),
        "misses": misses,
    }


def main(argv: list[str] | None = None) -> None:
    """Print the figures as JSON (``--pack``, ``--corpus`` to measure something else)."""
    parser = argparse.ArgumentParser(description="Measure rules-mode triage on a corpus.")
    parser.add_argument("--pack", default="ctsmash")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args(argv)
    report = evaluate(args.corpus, load_pack(args.pack))
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
