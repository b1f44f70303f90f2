"""``orquestra tenants check|reload``: the businesses a deployment serves.

``check [--file PATH]`` reads ``ORQ_TENANTS`` (or ``PATH``) as every process does at start and
says, per tenant, its pack and whether the pack is consistent (``orquestra pack check``). Exit
status 1 when the file is refused (the deployment would not start) or a tenant's pack has a
problem (that tenant would be disabled, or would answer with texts its rules contradict).

``reload [--tenant ID]`` makes every running process read the tenants file and the packs again
and rebuild that tenant (every tenant, without ``--tenant``) without a restart
(``shared/process.py``). It checks the file first and then waits until every live process has
applied the request: exit status 1 if one has not within ``--wait`` seconds.
"""

from __future__ import annotations

import argparse
import time

from orquestra.health import Target, live_consumers
from orquestra.pack_check import check_pack
from services.gateway.channels.registry import SECTIONS
from shared.connections import connect_sync
from shared.keys import Keys
from shared.pack import PackError
from shared.settings import get_settings
from shared.tenants import Tenant, TenantsError, tenants_of


def _check(args: argparse.Namespace) -> int:
    settings = get_settings()
    if args.file:
        settings = settings.model_copy(update={"tenants": args.file})
    if not settings.tenants:
        print("ORQ_TENANTS is not set: one business, pack " + repr(settings.pack))
        return 1 if check_pack(settings.pack) else 0
    try:
        tenants = tenants_of(settings, SECTIONS)
    except TenantsError as exc:
        print(f"refused: {exc}")
        return 1
    failed = False
    for tenant in tenants:
        if tenant.problem or tenant.pack is None:
            failed = True
            print(f"{tenant.id}: {tenant.problem}")
            continue
        problems = check_pack(tenant.settings.pack)
        state = f"{len(problems)} problem(s) in its pack" if problems else "ok"
        print(f"{tenant.id}: pack {tenant.pack.name!r}, {channels_of(tenant)}: {state}")
        for problem in problems:
            print(f"  {problem}")
        failed = failed or bool(problems)
    return 1 if failed else 0


def channels_of(tenant: Tenant) -> str:
    """The channels a tenant's entry configures, each with how many route ids it has
    (``whatsapp (1 WhatsApp number)``), or that it has none of its own."""
    said = []
    for name, section in tenant.channels.items():
        spec = SECTIONS[name]
        count = len(list(spec.routes(section)))
        said.append(f"{name} ({count} {spec.label}{'' if count == 1 else '(s)'})")
    return "channels " + ", ".join(said) if said else "no channel of its own"


def _applied(applied: str, entry: str) -> bool:
    """Whether a process's last applied request id is ``entry`` or later (stream ids)."""
    mine = tuple(int(part) for part in applied.split("-"))
    return mine >= tuple(int(part) for part in entry.split("-"))


def _reload(args: argparse.Namespace) -> int:
    settings = get_settings()
    try:
        tenants = tenants_of(settings, SECTIONS)
    except (TenantsError, PackError) as exc:
        print(f"refused, nothing reloaded: {exc}")
        return 1
    if args.tenant is not None and args.tenant not in {tenant.id for tenant in tenants}:
        print(f"no tenant {args.tenant!r} in {settings.tenants or 'this deployment'}")
        return 1
    for tenant in tenants:
        if tenant.problem:
            print(f"warning: {tenant.problem}")
    keys = Keys(settings.prefix, settings.partitions)
    redis = connect_sync(settings, decode_responses=True)
    entry = str(redis.xadd(keys.tenant_reloads, {"tenant": args.tenant or ""}, maxlen=1000))
    deadline = time.monotonic() + args.wait
    while True:
        beating = live_consumers(Target.from_settings(settings), time.time())
        live = [member.split("|", 1) for member in beating]
        applied = redis.hgetall(keys.tenant_reloads_applied)
        waiting = [f"{s}/{c}" for s, c in live if not _applied(applied.get(c, "0-0"), entry)]
        if not waiting:
            print(f"reloaded {args.tenant or 'every tenant'} in {len(live)} process(es)")
            return 0
        if time.monotonic() > deadline:
            print(f"not applied within {args.wait:g} s by: {', '.join(sorted(waiting))}")
            return 1
        time.sleep(0.2)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("tenants", help="check the tenants file (ORQ_TENANTS)")
    commands = parser.add_subparsers(dest="tenants_command", required=True)
    check = commands.add_parser("check", help="load every tenant and its pack, say what is wrong")
    check.add_argument("--file", default=None, help="a tenants file (default: ORQ_TENANTS)")
    check.set_defaults(func=_check)
    reload = commands.add_parser("reload", help="rebuild tenants from the file and their packs")
    reload.add_argument("--tenant", default=None, help="only this tenant (default: every one)")
    reload.add_argument(
        "--wait", type=float, default=30.0, help="seconds to wait for every live process"
    )
    reload.set_defaults(func=_reload)
