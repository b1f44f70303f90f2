"""``orquestra test [PATHS...]``: run YAML conversation scenarios against a real system.

PATHS are scenario files or folders (searched for ``*.yaml``/``*.yml``; default ``scenarios/``).
With ``--url`` the scenarios run against that gateway; without it, a private system is started
for the run and stopped afterwards. Every scenario uses a fresh conversation. A failure prints
the step, what was said, the reply and a diff of every expectation that did not hold;
``--junit FILE`` also writes JUnit XML for CI. Exit status: 0 all passed, 1 otherwise.

Format: ``orquestra/scenario_schema.py``; matchers: ``orquestra/scenario_check.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from orquestra.autostart import StartFailed, local_system
from orquestra.client import Client
from orquestra.scenario_check import (
    ScenarioResult,
    junit_xml,
    render_result,
    summary_line,
)
from orquestra.scenario_run import REPLY_TIMEOUT_S, Runner
from orquestra.scenario_schema import Scenario, ScenarioFile, parse_scenarios
from orquestra.style import Style, wants_color

SUFFIXES = (".yaml", ".yml")


def find_files(paths: list[str]) -> list[Path]:
    """Scenario files under ``paths`` in a stable order; a missing path is an error."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {raw}")
    return list(dict.fromkeys(files))


def load(files: list[Path]) -> tuple[list[ScenarioFile], list[tuple[str, str]]]:
    """Parsed files, and (file, error) for every file that is not a valid scenario file."""
    loaded, invalid = [], []
    for path in files:
        try:
            loaded.append(parse_scenarios(path.read_text(encoding="utf-8"), str(path)))
        except (ValueError, OSError) as exc:
            invalid.append((str(path), str(exc)))
    return loaded, invalid


def selected(scenario: Scenario, keyword: str | None) -> bool:
    if not keyword:
        return True
    needle = keyword.lower()
    return needle in scenario.name.lower() or any(needle == t.lower() for t in scenario.tags)


@contextmanager
def target(url: str | None, command: str = "orquestra test") -> Iterator[str]:
    """The given gateway, or a private system started for this run."""
    if url:
        yield url
        return
    note = f"{command}: starting a private system (use --url to test a running one)…"
    print(note, file=sys.stderr, flush=True)
    with local_system() as started:
        yield started


def run_all(
    url: str,
    files: list[ScenarioFile],
    keyword: str | None,
    *,
    jobs: int,
    reply_timeout_s: float,
    style: Style,
) -> list[ScenarioResult]:
    """Run every selected scenario (``jobs`` at a time), printing each file's results in order."""
    now = datetime.now(UTC)

    def one(scenario: Scenario, source: str) -> ScenarioResult:
        with Client(url) as client:
            return Runner(client, reply_timeout_s=reply_timeout_s).run(scenario, source, now=now)

    results: list[ScenarioResult] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        planned: list[tuple[str, list[Future[ScenarioResult]]]] = [
            (f.source, [pool.submit(one, s, f.source) for s in f.scenarios if selected(s, keyword)])
            for f in files
        ]
        for source, futures in planned:
            if not futures:
                continue
            print(style.bold(source))
            for future in futures:
                result = future.result()
                results.append(result)
                print("\n".join(render_result(result, style)), flush=True)
    return results


def run(args: argparse.Namespace) -> int:
    style = Style(wants_color(args.color))
    began = time.monotonic()
    try:
        files = find_files(args.paths or ["scenarios"])
    except FileNotFoundError as exc:
        print(f"orquestra test: {exc}", file=sys.stderr)
        return 2
    loaded, invalid = load(files)
    for source, error in invalid:
        print(style.red(f"invalid scenario file {source}:\n  {error}"), file=sys.stderr)
    results: list[ScenarioResult] = []
    if any(selected(s, args.keyword) for f in loaded for s in f.scenarios):
        try:
            with target(args.url) as url:
                results = run_all(
                    url,
                    loaded,
                    args.keyword,
                    jobs=args.jobs,
                    reply_timeout_s=args.timeout,
                    style=style,
                )
        except StartFailed as exc:
            print(f"orquestra test: {exc}", file=sys.stderr)
            return 1
    seconds = time.monotonic() - began
    if args.junit:
        Path(args.junit).parent.mkdir(parents=True, exist_ok=True)
        Path(args.junit).write_text(junit_xml(results, invalid, seconds), encoding="utf-8")
    line = summary_line(results, len(invalid), seconds)
    ok = all(r.passed for r in results) and not invalid
    print(style.green(line) if ok else style.red(line))
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("test", help="run YAML conversation scenarios against the bot")
    parser.add_argument("paths", nargs="*", help="scenario files or folders (default: scenarios/)")
    parser.add_argument("--url", default=None, help="a running gateway (default: start one)")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML results")
    parser.add_argument("-k", dest="keyword", help="only scenarios whose name has this, or tag")
    parser.add_argument("-j", "--jobs", type=int, default=4, help="scenarios run at once")
    parser.add_argument(
        "--timeout", type=float, default=REPLY_TIMEOUT_S, help="seconds to wait for a reply"
    )
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    parser.set_defaults(func=run)
