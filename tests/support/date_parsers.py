"""How well each date/time parser reads customers' Portuguese (tests/data/date_expressions.yaml).

Compares the project's rules (``shared.nlu.dates``) with dateparser (``search_dates`` over the
message, ``parse`` of the whole message when search finds nothing; ``languages=["pt"]``,
``RELATIVE_BASE`` = the turn's clock, ``PREFER_DATES_FROM="future"``, ``DATE_ORDER="DMY"``).
dateparser fills a time it was not told with the base's or midnight, so a time equal to either
counts as "no time", and a time alone comes back dated today, which counts as "no date".
An expression is right when its date and its time both match the label.

Run: ``uv run python -m tests.support.date_parsers``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

import yaml

from shared.nlu.dates import resolve_date, resolve_time

DATA = Path(__file__).resolve().parents[1] / "data" / "date_expressions.yaml"
TZ = ZoneInfo("America/Sao_Paulo")

Reading = tuple[str | None, str | None]
Parser = Callable[[str, dt.datetime], Reading]


def rules(text: str, now: dt.datetime) -> Reading:
    found_date = resolve_date(text, now, TZ)
    found_time = resolve_time(text)
    return (
        found_date.isoformat() if found_date else None,
        found_time.strftime("%H:%M") if found_time else None,
    )


def dateparser_reading(text: str, now: dt.datetime) -> Reading:
    import dateparser
    from dateparser.search import search_dates

    base = now.astimezone(TZ).replace(tzinfo=None)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "future", "DATE_ORDER": "DMY"}
    found = search_dates(text, languages=["pt"], settings=settings)
    moments = [moment for _, moment in found] if found else []
    if not moments:
        parsed = dateparser.parse(text, languages=["pt"], settings=settings)
        moments = [parsed] if parsed else []
    if not moments:
        return None, None
    clock = next((m.time() for m in moments if m.time() not in (dt.time(0), base.time())), None)
    first = moments[0]
    # A time alone comes back dated today: that is dateparser saying "no date".
    time_only = first.date() == base.date() and first.time() not in (dt.time(0), base.time())
    found_date = None if time_only else first.date().isoformat()
    return found_date, clock.strftime("%H:%M") if clock else None


def accuracy(parser: Parser, items: list[dict[str, str | None]], now: dt.datetime) -> dict:
    dates = times = both = 0
    misses: list[str] = []
    for item in items:
        found_date, found_time = parser(str(item["text"]), now)
        date_ok, time_ok = found_date == item["date"], found_time == item["time"]
        dates += date_ok
        times += time_ok
        both += date_ok and time_ok
        if not (date_ok and time_ok):
            misses.append(f"{item['text']!r}: got {found_date} {found_time}")
    count = len(items)
    return {
        "date": round(dates / count, 3),
        "time": round(times / count, 3),
        "both": round(both / count, 3),
        "misses": misses,
    }


def load() -> tuple[dt.datetime, list[dict[str, str | None]]]:
    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    return dt.datetime.fromisoformat(data["now"]), data["expressions"]


def main() -> None:
    now, items = load()
    print(f"{len(items)} expressions, now {now.isoformat()}")
    for name, parser in (("rules", rules), ("dateparser", dateparser_reading)):
        result = accuracy(parser, items, now)
        figures = f"date {result['date']:.3f}  time {result['time']:.3f}  both {result['both']:.3f}"
        print(f"{name:<11} {figures}")
        for miss in result["misses"]:
            print(f"    miss {miss}")


if __name__ == "__main__":
    main()
