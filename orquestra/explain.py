"""``orquestra explain CONVERSATION_ID``: why the bot said what it said, turn by turn.

Reads the conversation's decision journal over the HTTP API and prints it as a timeline
(``orquestra/timeline.py``): the messages merged into each turn, the intents and their source,
each specialist's decision and validation codes, mode decisions, tool-gate injections, the merge
composition, the delivery result and the time of every step. Language: ``--lang``, else
``ORQ_EXPLAIN_LANG``, else Portuguese.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from orquestra.client import DEFAULT_URL, ApiError, Client, NotFound
from orquestra.timeline import LANGS, Lang, render_timeline


def default_lang() -> Lang:
    value = os.environ.get("ORQ_EXPLAIN_LANG", "pt").strip().lower()
    return "en" if value.startswith("en") else "pt"


def run(args: argparse.Namespace) -> int:
    try:
        with Client(args.url) as client:
            entries = client.journal(args.conversation_id)
    except NotFound:
        entries = []  # nothing stored about it (never seen, or erased): an empty timeline
    except ApiError as exc:
        print(f"orquestra explain: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(entries, ensure_ascii=False, indent=2))
        return 0
    lang: Lang = args.lang or default_lang()
    print(render_timeline(args.conversation_id, entries, lang, verbose=args.verbose))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("explain", help="a conversation's decisions, turn by turn")
    parser.add_argument("conversation_id")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"gateway (default {DEFAULT_URL})")
    parser.add_argument(
        "--lang", choices=LANGS, default=None, help="pt or en (default: ORQ_EXPLAIN_LANG or pt)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="every field of every entry")
    parser.add_argument("--json", action="store_true", help="the raw journal entries as JSON")
    parser.set_defaults(func=run)
