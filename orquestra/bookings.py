"""``orquestra bookings``: the week's trial classes and who is coming, as a table or CSV.

Reads ``GET /v1/bookings`` (admin token from ``ORQ_ADMIN_TOKEN``). Without ``--from``/``--to``
it shows the current week, Monday to Sunday, in the pack's time zone.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from orquestra.client import DEFAULT_URL, ApiError, Client
from shared.pack import load_pack
from shared.settings import get_settings

STATUS = {"booked": "marcada", "cancelled": "cancelada", "attended": "veio", "no_show": "faltou"}
CSV_FIELDS = [
    "date",
    "time",
    "capacity",
    "seats_left",
    "booking_id",
    "student_name",
    "age",
    "level",
    "conversation_id",
    "contact_name",
    "status",
    "booked_at",
]


def week_of(day: date) -> tuple[date, date]:
    """Monday and Sunday of ``day``'s week."""
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def today() -> date:
    timezone = load_pack(get_settings().pack).sections.get("business", {}).get("timezone")
    return datetime.now(ZoneInfo(timezone or "America/Sao_Paulo")).date()


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def render_table(classes: list[dict[str, Any]]) -> str:
    """One block per class: its seats, then one line per booking."""
    if not classes:
        return "nenhuma aula no período"
    lines = []
    for c in classes:
        taken = c["capacity"] - c["seats_left"]
        lines.append(f"{c['date']} {c['time']}  {taken}/{c['capacity']} vagas ocupadas")
        for b in c["bookings"]:
            name = b["student_name"] or "(dados apagados)"
            details = ", ".join(
                part
                for part in (
                    f"{b['age']} anos" if b["age"] is not None else "",
                    b["level"] or "",
                    b["contact_name"] or "",
                )
                if part
            )
            status = STATUS.get(b["status"], b["status"])
            lines.append(
                f"  {b['booking_id']}  {status:<9}  {name}" + (f" ({details})" if details else "")
            )
    return "\n".join(lines)


def render_csv(classes: list[dict[str, Any]]) -> str:
    """One row per booking (an empty class is one row without a booking)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for c in classes:
        klass = {k: c[k] for k in ("date", "time", "capacity", "seats_left")}
        for b in c["bookings"] or [{}]:
            writer.writerow({**klass, **{k: _cell(v) for k, v in b.items()}})
    return out.getvalue()


def period(start: date | None, end: date | None, now: date) -> tuple[date, date]:
    """The days asked for: a missing end is a week after the start and a missing start a
    week before the end; neither is ``now``'s week, Monday to Sunday."""
    if start and end:
        return start, end
    if start:
        return start, start + timedelta(days=6)
    if end:
        return end - timedelta(days=6), end
    return week_of(now)


def _day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date YYYY-MM-DD") from None


def run(args: argparse.Namespace) -> int:
    start, end = period(args.start, args.end, today())
    try:
        with Client(args.url) as client:
            classes = client.bookings(start.isoformat(), end.isoformat())
    except ApiError as exc:
        print(f"orquestra bookings: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(render_csv(classes) if args.csv else render_table(classes) + "\n")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("bookings", help="trial classes and their bookings (this week)")
    parser.add_argument(
        "--from", dest="start", type=_day, help="first day, YYYY-MM-DD (default: this Monday)"
    )
    parser.add_argument(
        "--to", dest="end", type=_day, help="last day, inclusive (default: this Sunday)"
    )
    parser.add_argument("--url", default=DEFAULT_URL, help=f"gateway (default {DEFAULT_URL})")
    parser.add_argument("--csv", action="store_true", help="CSV, one row per booking")
    parser.set_defaults(func=run)
