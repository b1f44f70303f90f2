"""Measure the FAQ on a labelled set: how often it answers right, how often it makes things up.

Top-1 accuracy: share of answerable questions whose first answered entry is the labelled one.
False-answer rate: share of unanswerable questions that got any entry instead of an honest
"não sei". Run ``python -m services.faq.evaluate [pack] [eval.yaml]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from services.faq.core import retrieve
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.pack import load_pack

DEFAULT_EVAL = Path(__file__).resolve().parents[2] / "tests" / "data" / "faq_eval.yaml"


class LabelledQuestion(BaseModel):
    q: str
    id: str


class EvalSet(BaseModel):
    answerable: list[LabelledQuestion] = Field(min_length=1)
    unanswerable: list[str] = Field(min_length=1)


def evaluate(pack_name_or_path: str, eval_path: str | Path) -> dict[str, Any]:
    """Top-1 accuracy and false-answer rate of a pack's FAQ on a labelled set."""
    config = load_pack(pack_name_or_path).section("faq", FaqConfig)
    index = FaqIndex(config)
    data = EvalSet.model_validate(yaml.safe_load(Path(eval_path).read_text(encoding="utf-8")))
    unknown_ids = sorted({item.id for item in data.answerable} - {e.id for e in config.entries})
    if unknown_ids:
        raise ValueError(f"eval set labels entries the pack does not have: {unknown_ids}")
    misses: list[dict[str, Any]] = []
    for item in data.answerable:
        got = retrieve(item.q, index=index).entry_ids
        if got[:1] != [item.id]:
            misses.append({"q": item.q, "expected": item.id, "got": got})
    false_answers: list[dict[str, Any]] = []
    for question in data.unanswerable:
        got = retrieve(question, index=index).entry_ids
        if got:
            false_answers.append({"q": question, "got": got})
    answerable, unanswerable = len(data.answerable), len(data.unanswerable)
    return {
        "answerable": answerable,
        "top1_accuracy": (answerable - len(misses)) / answerable,
        "unanswerable": unanswerable,
        "false_answer_rate": len(false_answers) / unanswerable,
        "misses": misses,
        "false_answers": false_answers,
    }


def format_report(report: dict[str, Any]) -> str:
    """The report as a small plain-text table, followed by every failure."""
    rows = [
        ("answerable questions", str(report["answerable"])),
        ("top-1 accuracy", f"{report['top1_accuracy']:.3f}"),
        ("unanswerable questions", str(report["unanswerable"])),
        ("false-answer rate", f"{report['false_answer_rate']:.3f}"),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value:>6}" for name, value in rows]
    lines += [f"miss: {m['q']!r} expected {m['expected']} got {m['got']}" for m in report["misses"]]
    lines += [f"false answer: {f['q']!r} got {f['got']}" for f in report["false_answers"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Evaluate a pack's FAQ on a labelled set.")
    parser.add_argument("pack", nargs="?", default="ctsmash", help="pack name or folder")
    parser.add_argument("eval_path", nargs="?", default=str(DEFAULT_EVAL), help="eval YAML")
    args = parser.parse_args(argv)
    print(format_report(evaluate(args.pack, args.eval_path)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
