"""``orquestra funnel``: the sales funnel per business day, as a table (``GET /v1/funnel``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from orquestra.client import DEFAULT_URL, ApiError, Client

COLUMNS = ("started", "trial_asked", "booked", "attended", "plan_interest")


def render(days: list[dict[str, Any]], *, by_source: bool) -> str:
    """The funnel as aligned text: one row per day (and per source under it), totals last."""
    header = f"{'dia':<12}{'origem':<24}" + "".join(f"{c:>14}" for c in COLUMNS)
    lines = [header]
    totals = dict.fromkeys(COLUMNS, 0)
    for day in days:
        lines.append(f"{day['date']:<12}{'':<24}" + "".join(f"{day[c]:>14}" for c in COLUMNS))
        for column in COLUMNS:
            totals[column] += day[column]
        if by_source:
            for source, counts in sorted(day["by_source"].items()):
                row = "".join(f"{counts.get(c, 0):>14}" for c in COLUMNS)
                lines.append(f"{'':<12}{source[:23]:<24}{row}")
    lines.append(f"{'total':<12}{'':<24}" + "".join(f"{totals[c]:>14}" for c in COLUMNS))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        with Client(args.url) as client:
            days = client.funnel(args.first, args.last)
    except ApiError as exc:
        print(f"orquestra funnel: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(days, ensure_ascii=False, indent=2))
        return 0
    print(render(days, by_source=args.by_source))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("funnel", help="the sales funnel per business day")
    parser.add_argument(
        "--from", dest="first", default=None, help="YYYY-MM-DD (default: a week ago)"
    )
    parser.add_argument(
        "--to", dest="last", default=None, help="YYYY-MM-DD, inclusive (default: today)"
    )
    parser.add_argument("--by-source", action="store_true", help="a row per source under each day")
    parser.add_argument("--url", default=DEFAULT_URL, help=f"gateway (default {DEFAULT_URL})")
    parser.add_argument("--json", action="store_true", help="the API's days as JSON")
    parser.set_defaults(func=run)
