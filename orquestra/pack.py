"""``orquestra pack check [PACK]``: load a domain pack and report what is wrong with it.

Contradictions between texts and rules, texts a service may say that are missing, placeholders
nothing fills, and sections their service would refuse (``orquestra.pack_check``). Exit status 1
when anything is found, so CI and the tests fail on an inconsistent pack.
"""

from __future__ import annotations

import argparse

from orquestra.pack_check import check_pack, models_checked
from services.registry import SPECS
from shared.pack import PACKS_DIR, load_pack


def _idle(name: str) -> str:
    """The services a consistent pack leaves out of its turns (they start and idle)."""
    pack = load_pack(name)
    out = [f"{spec.name} (no {spec.needs_section})" for spec in SPECS if spec.out_of(pack)]
    return f"; out of its turns: {', '.join(out)}" if out else ""


def _check(args: argparse.Namespace) -> int:
    names = [args.pack] if args.pack else sorted(p.name for p in PACKS_DIR.iterdir() if p.is_dir())
    failed = False
    for name in names:
        problems = check_pack(name)
        if problems:
            failed = True
            print(f"{name}: {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{name}: ok{_idle(name)}")
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("pack", help="check a domain pack")
    actions = parser.add_subparsers(dest="pack_command", required=True)
    check = actions.add_parser(
        "check",
        help="report contradictions, missing texts and unfilled placeholders",
        description=f"Sections validated: {', '.join(models_checked())}.",
    )
    check.add_argument("pack", nargs="?", help="pack name or folder (default: every pack)")
    check.set_defaults(func=_check)
