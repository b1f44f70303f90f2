"""``orquestra nlu``: what the rules understand of a message, as JSON lines.

Intents with their confidences (triage's rules), the message as triage scores it (normalized,
typos corrected to the pack's vocabulary), and every slot the shared extractors find (nome,
idade, nivel, date and time as ISO strings, yes/no, contact_name and for_someone_else; an hour
without a period is read against the pack's class times, and ``time_candidates`` lists both
readings), for texts given as arguments or as JSON lines ``{"text", "now"}`` on standard input.
``now`` (ISO-8601 with offset; default: the
current time) is the business clock dates like "terça que vem" resolve against.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from services.triage.config import load_config
from services.triage.faq_evidence import faq_knows
from services.triage.rules import classify
from shared.nlu.dates import time_candidates
from shared.nlu.extract import extract_slots
from shared.nlu.fuzzy import pack_vocabulary
from shared.nlu.normalize import normalize
from shared.pack import load_pack
from shared.settings import get_settings
from shared.trial.config import load_trial_config


def understand(text: str, now: datetime, pack_name: str) -> dict[str, Any]:
    pack = load_pack(pack_name)
    tz = ZoneInfo(pack.sections.get("business", {}).get("timezone", "America/Sao_Paulo"))
    config = load_config(pack)
    result = classify(
        text, trial_stage=None, config=config, pack=pack, knows=faq_knows(pack, config)
    )
    class_times = pack.sections.get("trial", {}).get("times") or None
    levels = load_trial_config(pack).levels_by_time if "trial" in pack.sections else ()
    slots = extract_slots(text, now, tz, valid_times=class_times, levels_by_time=levels)
    return {
        "text": text,
        "now": now.isoformat(),
        "corrected": pack_vocabulary(pack).correct(normalize(text)),
        "intents": result.intents,
        "confidences": result.confidences,
        "clarify": result.reason,
        "slots": slots.model_dump(mode="json"),
        "time_candidates": [t.isoformat() for t in time_candidates(text)],
    }


def _inputs(args: argparse.Namespace) -> list[tuple[str, datetime]]:
    default_now = datetime.fromisoformat(args.now) if args.now else datetime.now().astimezone()
    if args.texts:
        return [(text, default_now) for text in args.texts]
    items = []
    for line_no, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            now = datetime.fromisoformat(data["now"]) if data.get("now") else default_now
            items.append((str(data["text"]), now))
        except (ValueError, KeyError, TypeError) as exc:
            message = f"orquestra nlu: line {line_no}: expected {{'text', 'now'?}}: {exc}"
            raise SystemExit(message) from exc
    return items


def run(args: argparse.Namespace) -> int:
    for text, now in _inputs(args):
        if now.tzinfo is None:
            raise SystemExit("orquestra nlu: 'now' needs an offset, e.g. 2026-02-05T10:00-03:00")
        print(json.dumps(understand(text, now, args.pack), ensure_ascii=False))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("nlu", help="print what the rules understand of messages (JSON)")
    parser.add_argument("texts", nargs="*", help="messages (default: JSON lines on stdin)")
    parser.add_argument("--now", help="business time, ISO-8601 with offset (default: now)")
    parser.add_argument("--pack", default=get_settings().pack)
    parser.set_defaults(func=run)
