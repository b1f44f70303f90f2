"""``orquestra tenants check [--file PATH]``: the businesses a deployment would serve.

Reads ``ORQ_TENANTS`` (or ``--file``) as every process does at start and says, per tenant, its
pack and whether the pack is consistent (``orquestra pack check``). Exit status 1 when the file
is refused (the deployment would not start) or a tenant's pack has a problem (that tenant would
be disabled, or would answer with texts its rules contradict).
"""

from __future__ import annotations

import argparse

from orquestra.pack_check import check_pack
from shared.settings import get_settings
from shared.tenants import TenantsError, tenants_of


def _check(args: argparse.Namespace) -> int:
    settings = get_settings()
    if args.file:
        settings = settings.model_copy(update={"tenants": args.file})
    if not settings.tenants:
        print("ORQ_TENANTS is not set: one business, pack " + repr(settings.pack))
        return 1 if check_pack(settings.pack) else 0
    try:
        tenants = tenants_of(settings)
    except TenantsError as exc:
        print(f"refused: {exc}")
        return 1
    failed = False
    for tenant in tenants:
        if tenant.problem or tenant.pack is None:
            failed = True
            print(f"{tenant.id}: {tenant.problem}")
            continue
        numbers = len(tenant.whatsapp.phone_number_ids) if tenant.whatsapp else 0
        problems = check_pack(tenant.settings.pack)
        state = f"{len(problems)} problem(s) in its pack" if problems else "ok"
        print(f"{tenant.id}: pack {tenant.pack.name!r}, {numbers} WhatsApp number(s): {state}")
        for problem in problems:
            print(f"  {problem}")
        failed = failed or bool(problems)
    return 1 if failed else 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("tenants", help="check the tenants file (ORQ_TENANTS)")
    commands = parser.add_subparsers(dest="tenants_command", required=True)
    check = commands.add_parser("check", help="load every tenant and its pack, say what is wrong")
    check.add_argument("--file", default=None, help="a tenants file (default: ORQ_TENANTS)")
    check.set_defaults(func=_check)
