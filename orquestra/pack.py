"""``orquestra pack check [PACK]``: load a domain pack and report what is wrong with it.

Contradictions between texts and rules, texts a service may say that are missing, placeholders
nothing fills, and sections their service would refuse (``orquestra.pack_check``). Exit status 1
when anything is found, so CI and the tests fail on an inconsistent pack.
"""

from __future__ import annotations

import argparse

from orquestra.pack_check import check_pack, models_checked
from shared.pack import PACKS_DIR


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
            print(f"{name}: ok")
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
