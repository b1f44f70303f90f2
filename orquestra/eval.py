"""``orquestra eval triage|faq|dialogs``: the language figures on the labelled sets in the repo.

triage: per-intent precision/recall, exact-match of the intent set in rules mode, and how often
hybrid mode would call the LLM. faq: top-1 accuracy and the false-answer rate on questions the
knowledge base cannot answer. dialogs: whole conversations through the HTTP API — goal reached,
turns to book, loops, questions left unanswered (``eval_dialogs``).
"""

from __future__ import annotations

import argparse
import sys

from orquestra import eval_dialogs
from services.faq import evaluate as faq_evaluate
from services.triage import evaluate as triage_evaluate


def run(args: argparse.Namespace) -> int:
    if args.what == "dialogs":
        return eval_dialogs.run(args)
    if args.paths:
        print(f"orquestra eval {args.what}: takes no paths", file=sys.stderr)
        return 2
    if args.what == "triage":
        triage_evaluate.main(["--pack", args.pack])
        return 0
    return faq_evaluate.main([args.pack])


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("eval", help="measure triage, faq or whole dialogs")
    parser.add_argument("what", choices=["triage", "faq", "dialogs"])
    parser.add_argument(
        "paths", nargs="*", help="dialogs: files or folders (default: tests/data/dialogs)"
    )
    parser.add_argument("--pack", default="ctsmash")
    eval_dialogs.add_arguments(parser)
    parser.set_defaults(func=run)
