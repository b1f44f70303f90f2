"""``orquestra eval dialogs [PATHS] [--url URL]``: how whole conversations end.

Runs the dialog corpus (``tests/data/dialogs/`` by default: YAML scenarios with a ``persona``
and a ``goal``) through HTTP API v1, like ``orquestra test`` does — against ``--url`` or a
private system started for the run — but runs every step of every dialog, even after one
failed, several dialogs at a time. Then prints a line per dialog, what went wrong under it,
and the totals (``dialog_figures`` computes them); ``--json`` prints the same as JSON.

Exit status: 0 when the corpus ran (whatever the figures), 2 for a bad path or file, 1 when
the system did not start.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from orquestra.autostart import StartFailed
from orquestra.client import ApiError, Client
from orquestra.dialog_figures import (
    DialogFigures,
    as_json,
    detail_lines,
    dialog_line,
    figures,
    totals,
    totals_lines,
)
from orquestra.scenario_run import REPLY_TIMEOUT_S, Runner
from orquestra.scenario_schema import Scenario
from orquestra.scenarios import find_files, load, selected, target

DEFAULT_PATH = "tests/data/dialogs"


def run_dialog(
    url: str, scenario: Scenario, source: str, *, now: datetime, reply_timeout_s: float
) -> DialogFigures:
    """One dialog, every step, then its figures (the journal read once, at the end)."""
    with Client(url) as client:
        runner = Runner(client, reply_timeout_s=reply_timeout_s, keep_going=True)
        result = runner.run(scenario, source, now=now)
        try:
            entries = client.journal(result.conversation_id)
        except ApiError as exc:
            result.error = result.error or f"cannot read the journal: {exc}"
            entries = []
    return figures(result, entries)


def run_corpus(
    url: str,
    planned: list[tuple[str, Scenario]],
    *,
    jobs: int,
    reply_timeout_s: float,
) -> list[DialogFigures]:
    """Every dialog, ``jobs`` at a time, in the corpus's order."""
    now = datetime.now(UTC)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [
            pool.submit(run_dialog, url, scenario, source, now=now, reply_timeout_s=reply_timeout_s)
            for source, scenario in planned
        ]
        return [future.result() for future in futures]


def report(dialogs: list[DialogFigures], *, details: bool) -> str:
    lines: list[str] = []
    source = None
    for d in dialogs:
        if d.source != source:
            source = d.source
            lines.append(source)
        lines.append(f"  {dialog_line(d)}")
        if details:
            lines += [f"  {line}" for line in detail_lines(d)]
    return "\n".join([*lines, "", *totals_lines(totals(dialogs))])


def run(args: argparse.Namespace) -> int:
    try:
        files = find_files(args.paths or [DEFAULT_PATH])
    except FileNotFoundError as exc:
        print(f"orquestra eval dialogs: {exc}", file=sys.stderr)
        return 2
    loaded, invalid = load(files)
    for source, error in invalid:
        print(f"invalid dialog file {source}:\n  {error}", file=sys.stderr)
    if invalid:
        return 2
    planned = [(f.source, s) for f in loaded for s in f.scenarios if selected(s, args.keyword)]
    if not planned:
        print("orquestra eval dialogs: no dialog selected", file=sys.stderr)
        return 2
    try:
        with target(args.url, "orquestra eval dialogs") as url:
            dialogs = run_corpus(url, planned, jobs=args.jobs, reply_timeout_s=args.timeout)
    except StartFailed as exc:
        print(f"orquestra eval dialogs: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(as_json(dialogs), ensure_ascii=False, indent=2))
    else:
        print(report(dialogs, details=not args.quiet))
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``eval dialogs`` (``eval`` registers them beside triage and faq)."""
    parser.add_argument(
        "--url", default=None, help="dialogs: a running gateway (default: start one)"
    )
    parser.add_argument(
        "-k", dest="keyword", help="dialogs: only those whose name has this, or tag"
    )
    parser.add_argument("-j", "--jobs", type=int, default=4, help="dialogs run at once")
    parser.add_argument(
        "--timeout", type=float, default=REPLY_TIMEOUT_S, help="seconds to wait for a reply"
    )
    parser.add_argument("--json", action="store_true", help="dialogs: print the report as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="dialogs: one line per dialog")
