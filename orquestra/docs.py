"""``orquestra docs tables|reference [--check]``: the parts of the documentation site that are
generated, so they cannot drift from the code.

- ``tables``: the services and streams tables of ``docs/architecture/index.md``, from the
  service specs (``services/registry.py``).
- ``reference``: the reference pages — configuration (from the pydantic-settings models),
  the CLI (from its argparse parser), the HTTP API (from the gateway's OpenAPI schema) and the
  bus (from the AsyncAPI document of ``orquestra asyncapi``).

Each generated part sits between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME
-->`` in a page whose prose is written by hand; the command rewrites what is between them, and
with ``--check`` only says whether the pages are current (exit 1 when one drifted), which a
test runs.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from shared.spec import ServiceSpec

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DOC = DOCS / "architecture" / "index.md"


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


def fill(text: str, blocks: Mapping[str, Callable[[], str]], name: str) -> str:
    """``text`` with each generated block replaced by what its producer makes now."""
    for block, produce in blocks.items():
        pattern = re.compile(
            rf"(<!-- generated: {re.escape(block)} -->\n)(?:.*?\n)?"
            rf"(<!-- end generated: {re.escape(block)} -->)",
            re.DOTALL,
        )
        if not pattern.search(text):
            raise ValueError(f"{name} has no <!-- generated: {block} --> block")
        content = produce()
        text = pattern.sub(lambda m, c=content: f"{m.group(1)}{c}\n{m.group(2)}", text)
    return text


def render(text: str, specs: Sequence[ServiceSpec]) -> str:
    """``text`` (the architecture page) with every generated table replaced by its current
    content."""
    blocks = {name: (lambda table=table: table(specs)) for name, table in TABLES.items()}
    return fill(text, blocks, DOC.name)


def reference_pages() -> dict[Path, dict[str, Callable[[], str]]]:
    """Every reference page and the producers of its generated blocks. Imported here: the
    producers load the services, the gateway app and the argparse tree."""
    from orquestra import reference

    return {
        DOCS / "reference" / "configuration.md": {
            "settings": reference.settings_tables,
            "tenants-file": reference.tenants_file_table,
        },
        DOCS / "reference" / "cli.md": {"cli": reference.cli_reference},
        DOCS / "reference" / "http-api.md": {"http-api": reference.http_reference},
        DOCS / "reference" / "bus.md": {"bus": reference.bus_reference},
    }


def _update(pages: Mapping[Path, Callable[[str], str]], check: bool) -> int:
    """Rewrite (or with ``check`` only compare) every page; 1 when one drifted."""
    drifted = []
    for path, renderer in pages.items():
        current = path.read_text(encoding="utf-8")
        wanted = renderer(current)
        if wanted == current:
            continue
        drifted.append(path)
        if not check:
            path.write_text(wanted, encoding="utf-8")
            print(f"orquestra docs: wrote {path.relative_to(ROOT)}", file=sys.stderr)
    if check and drifted:
        names = ", ".join(str(path.relative_to(ROOT)) for path in drifted)
        print(f"orquestra docs: out of date: {names}; run `orquestra docs`", file=sys.stderr)
        return 1
    return 0


def run_tables(args: argparse.Namespace) -> int:
    from services.registry import SPECS

    return _update({DOC: lambda text: render(text, SPECS)}, args.check)


def run_reference(args: argparse.Namespace) -> int:
    pages = {
        path: (lambda text, blocks=blocks, path=path: fill(text, blocks, path.name))
        for path, blocks in reference_pages().items()
    }
    return _update(pages, args.check)


def run_all(args: argparse.Namespace) -> int:
    return max(run_tables(args), run_reference(args))


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "docs",
        help="generated documentation",
        description="Regenerate the generated parts of docs/ (all of them without a subcommand).",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the docs drifted")
    parser.set_defaults(func=run_all)
    what = parser.add_subparsers(dest="what")
    tables = what.add_parser("tables", help="the services and streams tables of the docs")
    tables.add_argument("--check", action="store_true", help="exit 1 if the docs drifted")
    tables.set_defaults(func=run_tables)
    ref = what.add_parser(
        "reference", help="the configuration, CLI, HTTP API and bus reference pages"
    )
    ref.add_argument("--check", action="store_true", help="exit 1 if the docs drifted")
    ref.set_defaults(func=run_reference)
