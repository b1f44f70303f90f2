"""``orquestra asyncapi [--out FILE]``: the bus described as an AsyncAPI 3.0 JSON document.

The consumers are read from the real thing: every service's ``build`` runs on a runtime (no
connection is opened) and the subscriptions it made on its FastStream broker are collected —
one operation per (stream, consumer group), the reclaiming twin of each subscriber folded in.
The producers come from the services' specs (what each ``publishes``) and the payloads from
the contracts (``shared/contracts.py``), listed below per stream. Both go on one documentation
broker, and FastStream's specification API writes the document, with every payload's JSON
schema taken from its pydantic model.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from services.registry import SPECS, TOPOLOGY
from shared import contracts
from shared.keys import Keys
from shared.settings import get_settings


@dataclass(frozen=True)
class Produced:
    """What goes on a stream, and who publishes it (from the specs' ``publishes``)."""

    model: Any
    description: str
    producers: str = ""


# The payload of each stream, by the name specs use (every ``tasks.<specialist>`` stream
# carries a ``SpecialistTask``).
PAYLOADS: dict[str, Produced] = {
    "turns": Produced(contracts.Turn, "The messages since the last reply."),
    "merge": Produced(
        contracts.MergeInput,
        "The plan of a turn (triage) and every part of its reply; on one Redis, a producer's "
        "commit adds its input to the turn's merge hash instead, and only the one that "
        "completes the turn sends a MergeReady, which carries that hash, to the outbound "
        "stream.",
    ),
    "outbound": Produced(
        contracts.Outbound,
        "A composed reply, or a scheduled message (reminder, follow-up), for the channel; on "
        "one Redis also a MergeReady, a turn its last producer's commit completed, whose reply "
        "the gateway composes.",
    ),
    "events": Produced(
        contracts.DomainEvent,
        "Business events (trial.booked, booking.cancelled, enrollment.requested…).",
    ),
    "funnel.steps": Produced(
        contracts.FunnelStep,
        "A funnel step a conversation showed for the first time, for the funnel's counters.",
    ),
    "dlq": Produced(contracts.DeadLetter, "Messages that kept failing.", "any service"),
    "commands.trial": Produced(
        contracts.BookingCommand,
        "Staff's attendance marks and cancellations, applied by the trial service.",
    ),
    "faq.unanswered": Produced(contracts.Unanswered, "Questions the FAQ could not answer."),
}


def produced(keys: Keys) -> dict[str, Produced]:
    """Every stream's payload model and producers: a stream a spec publishes names that
    service; one with no payload listed here is an error that names the table."""
    table: dict[str, Produced] = {}
    for name in [*TOPOLOGY.streams, "dlq"]:
        payload = PAYLOADS.get(name)
        if payload is None and name.startswith("tasks."):
            work = f"Work for the {name.removeprefix('tasks.')} specialist."
            payload = Produced(contracts.SpecialistTask, work)
        if payload is None:
            raise KeyError(f"stream {name!r} has no payload in orquestra/asyncapi.py PAYLOADS")
        producers = [spec.name for spec in SPECS if name in spec.publishes]
        who = ", ".join(producers) or payload.producers
        table[keys.stream(name)] = Produced(payload.model, payload.description, who)
    return table


def consumers() -> list[tuple[str, str, str]]:
    """(stream, group, service) of every subscription the services make, in service order."""
    # Imported here: every ``orquestra`` command imports this module, and only this command
    # needs the services (and their LLM client) loaded.
    from shared.service import make_runtime

    found: dict[tuple[str, str], str] = {}
    for spec in SPECS:
        service = spec.name
        rt = make_runtime(spec, topology=TOPOLOGY)
        if spec.out_of(rt.pack):
            # Idle with this pack, but its groups are on the bus all the same: as declared.
            for consumed in spec.consumes:
                for part in rt.keys.parts(rt.keys.stream(consumed.stream)):
                    found.setdefault((part, consumed.group), service)
            continue
        spec.builder()(rt)
        for subscriber in rt.bus.broker.subscribers:
            sub = subscriber.stream_sub
            found.setdefault((sub.name, sub.group or service), service)
    return [(stream, group, service) for (stream, group), service in found.items()]


def _typed_handler(model: Any) -> Any:
    """A do-nothing handler whose annotation gives FastStream the payload schema."""

    async def handler(body: Any) -> None:
        return None

    # Set the annotation object itself: a string annotation would be resolved in this
    # module's globals, not in this closure.
    handler.__annotations__ = {"body": model, "return": None}
    return handler


def without_credentials(url: str) -> str:
    """The Redis URL as the document may show it (no user name or password)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def build_document() -> dict[str, Any]:
    from faststream.redis import RedisBroker, StreamSub
    from faststream.specification import AsyncAPI

    settings = get_settings()
    keys = Keys(settings.prefix)
    table = produced(keys)
    broker = RedisBroker(without_credentials(settings.redis_url), logger=None)
    for stream, group, service in consumers():
        spec = table.get(stream)
        model = spec.model if spec else bytes
        broker.subscriber(
            stream=StreamSub(stream, group=group, consumer=f"{service}-<host>-<pid>"),
            title=f"{stream}/{group}",
            description=f"Consumer group {group!r} ({service}); acknowledged after the handler "
            "succeeds, reclaimed by another replica when idle, dead-lettered after retries.",
        )(_typed_handler(model))
    for stream, spec in table.items():
        broker.publisher(
            stream=stream,
            title=f"{stream}/publish",
            description=f"{spec.description} Published by {spec.producers}.",
            schema=spec.model,
        )
    spec = AsyncAPI(
        broker,
        title="orquestra bus",
        version=str(contracts.SCHEMA_VERSION),
        description="Redis Streams between the orquestra services.",
    ).to_specification()
    return spec.to_jsonable()


def run(args: argparse.Namespace) -> int:
    text = json.dumps(build_document(), ensure_ascii=False, indent=2)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n", encoding="utf-8")
        print(f"orquestra asyncapi: wrote {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("asyncapi", help="the bus as an AsyncAPI JSON document")
    parser.add_argument("--out", help="write to this file instead of stdout")
    parser.set_defaults(func=run)
