"""``orquestra docs tables [--check]``: the tables of docs/ARCHITECTURE.md that list the
services and the streams, generated from the service specs (``services/registry.py``).

Each table sits between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``;
the command rewrites what is between them, and with ``--check`` only says whether the file is
current (exit 1 when it drifted), which a test runs.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from shared.spec import ServiceSpec

DOC = Path(__file__).resolve().parent.parent / "docs" / "ARCHITECTURE.md"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _codes(items: Sequence[str]) -> str:
    return ", ".join(f"`{item}`" for item in items) or "—"


def services_table(specs: Sequence[ServiceSpec]) -> str:
    lines = [
        _row(("service", "consumes (stream → group)", "owns slices (model)", "publishes")),
        "|---|---|---|---|",
    ]
    for spec in specs:
        consumes = ", ".join(f"`{c.stream}` → `{c.group}`" for c in spec.consumes) or "—"
        owns = ", ".join(
            f"`{o.slice}` ({o.model.__name__ if o.model else 'Lua scripts'})" for o in spec.owns
        )
        lines.append(_row((f"`{spec.name}`", consumes, owns or "—", _codes(spec.publishes))))
    return "\n".join(lines)


def streams_table(specs: Sequence[ServiceSpec]) -> str:
    streams: dict[str, tuple[list[str], list[str]]] = {}
    for spec in specs:
        for stream in spec.publishes:
            streams.setdefault(stream, ([], []))[0].append(spec.name)
        for consumed in spec.consumes:
            group = consumed.group
            label = group if group == spec.name else f"{group} ({spec.name})"
            streams.setdefault(consumed.stream, ([], []))[1].append(label)
    lines = [_row(("stream", "published by", "consumer groups")), "|---|---|---|"]
    for stream, (producers, groups) in streams.items():
        lines.append(_row((f"`{stream}`", _codes(producers), _codes(groups))))
    return "\n".join(lines)


TABLES: dict[str, Callable[[Sequence[ServiceSpec]], str]] = {
    "services": services_table,
    "streams": streams_table,
}


def render(text: str, specs: Sequence[ServiceSpec]) -> str:
    """``text`` with every generated table replaced by its current content."""
    for name, table in TABLES.items():
        pattern = re.compile(
            rf"(<!-- generated: {name} -->\n)(?:.*?\n)?(<!-- end generated: {name} -->)",
            re.DOTALL,
        )
        if not pattern.search(text):
            raise ValueError(f"{DOC.name} has no <!-- generated: {name} --> block")
        text = pattern.sub(lambda m, t=table: f"{m.group(1)}{t(specs)}\n{m.group(2)}", text)
    return text


def run(args: argparse.Namespace) -> int:
    from services.registry import SPECS

    current = DOC.read_text(encoding="utf-8")
    wanted = render(current, SPECS)
    if args.check:
        if wanted != current:
            print(
                f"orquestra docs: {DOC} is out of date; run `orquestra docs tables`",
                file=sys.stderr,
            )
            return 1
        return 0
    if wanted != current:
        DOC.write_text(wanted, encoding="utf-8")
        print(f"orquestra docs: wrote {DOC}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("docs", help="generated documentation")
    what = parser.add_subparsers(dest="what", required=True)
    tables = what.add_parser("tables", help="the services and streams tables of the docs")
    tables.add_argument("--check", action="store_true", help="exit 1 if the docs drifted")
    tables.set_defaults(func=run)
