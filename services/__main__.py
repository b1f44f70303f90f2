"""``python -m services NAME [NAME ...]``: several services in one process.

Each runs as it would alone (its runtime, consumer group, commits and loops), so the system
behaves the same; what one of them publishes to another is read on write (``shared.bus``): the
commit that adds the message also takes it for the other's group, and this process runs it
without a delivery of its own. The gateway runs on its own (``python -m services.gateway``).
"""

from __future__ import annotations

import argparse
import sys

from services.registry import BY_NAME, SERVICES, TOPOLOGY
from shared.process import run_services


def main() -> None:
    workers = [name for name in SERVICES if name != "gateway"]
    parser = argparse.ArgumentParser(prog="python -m services")
    parser.add_argument("names", nargs="+", metavar="NAME", help=", ".join(workers))
    names = parser.parse_args().names
    wrong = sorted({name for name in names if name not in workers})
    if wrong:
        sys.exit(f"services: no worker service {', '.join(wrong)} (one of {', '.join(workers)})")
    if len(set(names)) != len(names):
        sys.exit("services: a service is named twice")
    run_services([BY_NAME[name] for name in names], TOPOLOGY)


if __name__ == "__main__":
    main()
