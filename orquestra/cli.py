"""The ``orquestra`` command. Each subcommand lives in its own module under ``orquestra/``
exposing ``register(subparsers)``; this file only lists them."""

from __future__ import annotations

import argparse
import importlib

COMMANDS = [
    "up",
    "health",
    "unanswered",
    "chat",
    "scenarios",
    "explain",
    "asyncapi",
    "bench",
    "nlu",
    "eval",
    "pack",
    "tenants",
    "funnel",
    "bookings",
    "erase",
    "docs",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="orquestra", description="WhatsApp assistant backend on Redis Streams."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"orquestra.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
