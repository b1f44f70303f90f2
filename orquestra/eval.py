"""``orquestra eval triage|faq``: the language figures on the labelled sets in the repo.

triage: per-intent precision/recall, exact-match of the intent set in rules mode, and how often
hybrid mode would call the LLM. faq: top-1 accuracy and the false-answer rate on questions the
knowledge base cannot answer.
"""

from __future__ import annotations

import argparse

from services.faq import evaluate as faq_evaluate
from services.triage import evaluate as triage_evaluate


def run(args: argparse.Namespace) -> int:
    if args.what == "triage":
        triage_evaluate.main(["--pack", args.pack])
        return 0
    return faq_evaluate.main([args.pack])


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("eval", help="measure triage or faq on the labelled sets")
    parser.add_argument("what", choices=["triage", "faq"])
    parser.add_argument("--pack", default="ctsmash")
    parser.set_defaults(func=run)
