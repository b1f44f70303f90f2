"""``python -m services NAME [NAME ...]``: several services in one process.

Each runs as it would alone (its runtime, consumer group, commits and loops), so the system
behaves the same; what one of them publishes to another is read on write (``shared.bus``): the
commit that adds the message also takes it for the other's group, and this process runs it
without a delivery of its own. The gateway runs on its own (``python -m services.gateway``).
"""

from __future__ import annotations

import argparse
import sys

from services.registry import BY_NAME, SERVICES, TOPOLOGY, services_together
from shared.process import run_services


def main() -> None:
    workers = [name for name in SERVICES if name != "gateway"]
    parser = argparse.ArgumentParser(prog="python -m services")
    parser.add_argument("names", nargs="+", metavar="NAME", help=", ".join(workers))
    try:
        names = services_together(parser.parse_args().names, gateway=False)
    except ValueError as exc:
        sys.exit(f"services: {exc}")
    run_services([BY_NAME[name] for name in names], TOPOLOGY)


if __name__ == "__main__":
    main()
