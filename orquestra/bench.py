"""``orquestra bench``: the whole system under load next to its floors (see ``bench/``).

Starts a private Redis and every service (or drives ``--url``), runs the phases of
``bench.run`` and prints the table with the baselines and the targets; ``--json`` prints the
raw results instead, for comparing runs. The ``bench`` package is imported only when the
command runs: it is a development tool, not part of the service image.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

PARTS = ("baselines", "llm", "scaling", "burst")
# What ``--peer`` measures unless told otherwise: the services of a turn's path in one process,
# a replica of it per core, the deployment one machine runs best (the peer is one process on
# the same machine). ``--separate`` measures ``orquestra up``'s default instead.
ONE_MACHINE = "gateway,triage,mode_router,trial,faq,enrollment"


def run(args: argparse.Namespace) -> int:
    from bench.report import render
    from bench.run import Benchmark, Options

    if args.peer:
        return versus(args)
    if args.render:
        results = json.loads(Path(args.render).read_text())
    else:
        options = Options(
            url=args.url,
            redis_url=args.redis_url,
            token=args.token,
            users=args.users,
            seconds=args.seconds,
            llm_delay_ms=args.llm_delay_ms,
            llm_users=args.llm_users,
            llm_workers=args.llm_workers,
            trial_burn_ms=args.trial_burn_ms,
            skip=set(args.skip),
            profile=args.profile,
            redis_cluster=args.redis_cluster,
            partitions=args.partitions,
            together=args.together,
            replicas_together=args.replicas or 1,
        )
        try:
            results = asyncio.run(Benchmark(options).run())
        except KeyboardInterrupt:
            print("orquestra bench: interrupted", file=sys.stderr)
            return 130
        results["command"] = "orquestra bench " + " ".join(sys.argv[2:])
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print(json.dumps(results, indent=2, ensure_ascii=False) if args.json else render(results))
    return 0


def versus(args: argparse.Namespace) -> int:
    """``--peer PATH``: the peer and this system through the same phases, in ``--rounds``
    alternated rounds (peer first, then this system first, ...); the median ratios."""
    from bench.cluster import ROOT
    from bench.peer import Peer, combine, compare, table
    from bench.peer import render as render_versus
    from bench.run import Benchmark, Options

    def options(**kwargs: object) -> Options:
        return Options(users=args.users, seconds=args.seconds, skip=set(PARTS), **kwargs)

    services, replicas = deployment(args)
    shape = f"{','.join(services)} together, {replicas} replica(s)" if services else "separate"

    def run_peer() -> dict[str, Any]:
        peer = Peer(Path(args.peer).resolve(), Path(args.peer_src or ROOT).resolve())
        try:
            peer.start()
            print(f"bench: peer on {peer.url}, Redis {peer.redis_url}", file=sys.stderr, flush=True)
            return asyncio.run(
                Benchmark(
                    options(url=peer.url, redis_url=peer.redis_url, system_pids=peer.pids())
                ).run()
            )
        finally:
            peer.stop()

    def run_ours() -> dict[str, Any]:
        print(f"bench: orquestra's services: {shape}", file=sys.stderr, flush=True)
        return asyncio.run(Benchmark(options(together=services, replicas_together=replicas)).run())

    rounds: list[dict[str, Any]] = []
    try:
        for number in range(args.rounds):
            print(f"bench: round {number + 1} of {args.rounds}", file=sys.stderr, flush=True)
            if number % 2 == 0:
                theirs, ours = run_peer(), run_ours()
            else:
                ours, theirs = run_ours(), run_peer()
            rounds.append({"peer": theirs, "orquestra": ours})
    except KeyboardInterrupt:
        print("orquestra bench: interrupted", file=sys.stderr)
        return 130
    command = "orquestra bench " + " ".join(sys.argv[2:])
    results = {"command": command, "deployment": shape, "rounds": rounds}
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2, ensure_ascii=False))
    tables = [compare(r["peer"], r["orquestra"]) for r in rounds]
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return 0
    for number, (r, targets) in enumerate(zip(rounds, tables, strict=True), start=1):
        print(f"round {number}:\n{render_versus(r['peer'], r['orquestra'], targets)}\n")
    if len(rounds) > 1:
        medians = "\n".join(table(combine(tables)))
        print(f"median of {len(rounds)} rounds (each ratio from its own round):\n{medians}")
    return 0


def deployment(args: argparse.Namespace) -> tuple[tuple[str, ...], int]:
    """The services ``--peer`` runs together (none: each its own process) and the replicas of
    that process: as given, else ``ONE_MACHINE`` with a replica per core."""
    if args.together:
        return args.together, args.replicas or 1
    if args.separate:
        return (), 1
    return together(ONE_MACHINE), args.replicas or os.cpu_count() or 1


def together(value: str) -> tuple[str, ...]:
    """``--together``'s services, each once, in the registry's order (argparse's type: its
    error is the option's)."""
    from services.registry import services_together

    names = [name.strip() for name in value.split(",") if name.strip()]
    try:
        return services_together(names, gateway=True, at_least=2)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "bench", help="load-test the system next to its logic and framework floors"
    )
    parser.add_argument("--url", help="drive a running system instead of starting one")
    parser.add_argument(
        "--peer",
        metavar="PATH",
        help="also run the peer at PATH (PATH/run, e.g. a copy of the LangGraph peer) and "
        "print the ratios against it; this system runs as --together and --separate say",
    )
    parser.add_argument(
        "--peer-src",
        metavar="CHECKOUT",
        help="with --peer: the orquestra checkout the peer imports (ORQ_SRC; default this one)",
    )
    parser.add_argument("--redis-url", help="with --url: its Redis, for commands and memory")
    parser.add_argument(
        "--token",
        default=os.environ.get("ORQ_ADMIN_TOKEN") or os.environ.get("ORQ_API_TOKEN"),
        help="with --url: the bearer token of that gateway (default: ORQ_ADMIN_TOKEN)",
    )
    parser.add_argument("--users", type=int, default=32, help="conversations at max load")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each max-load phase")
    parser.add_argument("--llm-delay-ms", type=int, default=300, help="simulated LLM latency")
    parser.add_argument("--llm-users", type=int, default=64, help="conversations in llm mode")
    parser.add_argument(
        "--llm-workers",
        type=int,
        help="also run llm mode with this ORQ_LLM_WORKERS (handlers per subscription)",
    )
    parser.add_argument(
        "--trial-burn-ms", type=int, default=100, help="CPU per task of the heavy trial"
    )
    parser.add_argument(
        "--profile",
        metavar="SERVICE",
        help="sample this service with py-spy during the max phase (needs py-spy installed)",
    )
    parser.add_argument("--skip", action="append", default=[], choices=PARTS, help="repeatable")
    parser.add_argument(
        "--redis-cluster",
        type=int,
        default=0,
        metavar="MASTERS",
        help="run the system phases on a local Redis Cluster of this many masters (a replica "
        "each) instead of one Redis: commands per node and the partitions' spread",
    )
    parser.add_argument(
        "--partitions", type=int, default=1, help="with --redis-cluster: ORQ_PARTITIONS"
    )
    parser.add_argument(
        "--together",
        type=together,
        default=(),
        metavar="A,B,...",
        help="run these services in one process (python -m services A B ..., or the "
        "gateway's --with)",
    )
    parser.add_argument(
        "--replicas",
        type=int,
        help="with --together: replicas of that process (the gateway's share its port; "
        "default 1, with --peer one per core)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="with --peer: alternated rounds (the peer first, then this system first, ...); "
        "the table gives each round and the medians",
    )
    parser.add_argument(
        "--separate",
        action="store_true",
        help="with --peer: every service its own process, as orquestra up runs them, instead "
        f"of {ONE_MACHINE} together, a replica per core",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--out", help="also write the results as JSON to this file")
    parser.add_argument("--render", metavar="JSON", help="print the table of a saved run")
    parser.set_defaults(func=run)
