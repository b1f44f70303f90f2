"""Helpers of the journey tests: a conversation on business time, pack texts, domain events.

A journey test drives the whole system (``orquestra up``) through the HTTP API only; the
business clock is the ``sent_at`` of each message, never the wall clock. Expected replies are
rendered from the domain pack (any variant of a text key, placeholders filled or captured), so
the tests follow the pack instead of copying its sentences.
"""

from __future__ import annotations

import asyncio
import json
import re
import string
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, TypeVar

import redis as redis_sync
from redis.asyncio import Redis

from shared.keys import Keys
from shared.pack import Pack, load_pack
from shared.trial.bookings import BookingStore
from shared.trial.config import load_trial_config
from tests.system import System, decode_entry

PACK: Pack = load_pack("ctsmash")
T = TypeVar("T")


def new_id(tag: str) -> str:
    """A fresh conversation id, so no test sees another's state."""
    return f"{tag}-{uuid.uuid4().hex[:10]}"


def events(journal: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in journal if e["event"] == name]


def variants(key: str) -> list[str]:
    value = PACK.sections["texts"][key]
    return [value] if isinstance(value, str) else list(value)


def _pattern(template: str, known: dict[str, Any]) -> str:
    """A regex for one text template: known placeholders literal, others captured."""
    out: list[str] = []
    captured: set[str] = set()
    for literal, name, _spec, _conv in string.Formatter().parse(template):
        out.append(re.escape(literal))
        if name is None:
            continue
        if name in known:
            out.append(re.escape(str(known[name])))
        elif name in captured:
            out.append(f"(?P={name})")
        else:
            # May be empty: some placeholders say something only when there is something to
            # say ({fechado}: a closed class day before the next one offered).
            out.append(f"(?P<{name}>.*?)")
            captured.add(name)
    return "".join(out)


def said(text: str, key: str, **known: Any) -> dict[str, str] | None:
    """The placeholder values when ``text`` contains some variant of pack text ``key`` (with
    the ``known`` values), else None."""
    for template in variants(key):
        match = re.search(_pattern(template, known), text, flags=re.DOTALL)
        if match:
            return match.groupdict()
    return None


def assert_said(text: str, key: str, **known: Any) -> dict[str, str]:
    values = said(text, key, **known)
    assert values is not None, f"reply is not pack text {key!r} {known}:\n{text}"
    return values


def eventually(probe: Callable[[], T | None], timeout_s: float = 30.0, what: str = "") -> T:
    """Poll ``probe`` until it returns something (bounded), for work that follows a reply or
    an acknowledged webhook and has no long-poll of its own (the mode router's reading of a
    domain event, a delivery status)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what or 'condition'} not met within {timeout_s}s")
        time.sleep(0.05)


def together(*journeys: Callable[[], Any]) -> list[Any]:
    """Run independent conversations at the same time (each one still turn by turn); their
    assertion errors propagate."""
    with ThreadPoolExecutor(len(journeys)) as pool:
        futures = [pool.submit(journey) for journey in journeys]
        return [future.result() for future in futures]


class Chat:
    """One conversation through the HTTP API with its reply cursor and business clock."""

    def __init__(self, system: System, tag: str, start: str) -> None:
        self.system = system
        self.id = new_id(tag)
        self.now = datetime.fromisoformat(start)
        self.cursor = "0-0"
        self.last: dict[str, Any] = {}

    def say(self, text: str, *, after: timedelta = timedelta(0)) -> str:
        """Send ``text`` at the clock plus ``after``; return the reply's text."""
        self.now += after
        reply = self.system.say(self.id, text, after=self.cursor, sent_at=self.now.isoformat())
        self.cursor = reply["cursor"]
        self.last = reply
        return str(reply["text"])

    def state(self) -> dict[str, Any]:
        return self.system.conversation(self.id)

    def slice(self, name: str) -> dict[str, Any]:
        value = self.state()[name]
        assert value is not None, f"no {name} slice"
        return dict(value)

    def journal(self, name: str | None = None) -> list[dict[str, Any]]:
        entries = self.system.journal(self.id)
        return entries if name is None else events(entries, name)

    def decided(self, service: str) -> dict[str, Any]:
        """The journal entry of ``service``'s decision on the last turn."""
        turn_id = self.last["turn_id"]
        found = [
            e
            for e in self.journal(f"{service}.decided")
            if e["turn_id"] == turn_id and e["service"] == service
        ]
        assert len(found) == 1, f"{service} decided {len(found)} times on turn {turn_id}"
        return found[0]


class Subscription:
    """A consumer group of the test's own on one stream, created before the action under test.

    Streams are not an archive: the gateway's janitor trims entries every group has
    acknowledged, so an observer must subscribe like any consumer to see what is published.
    """

    def __init__(self, client: redis_sync.Redis, stream: str, group: str) -> None:
        self.client = client
        self.stream = stream
        self.group = group
        self.seen: list[dict[str, Any]] = []

    def wait(self, match: Callable[[dict[str, Any]], bool], timeout_s: float = 30.0) -> dict:
        """The first record ``match`` accepts, blocking until it arrives (each read blocks at
        most a second: the client's socket timeout is a few seconds)."""
        for record in self.seen:
            if match(record):
                return record
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            block = max(1, min(1000, int(left * 1000)))
            read = self.client.xreadgroup(
                self.group, "journey", {self.stream: ">"}, count=100, block=block
            )
            for _name, entries in read or []:
                for entry_id, fields in entries:
                    self.client.xack(self.stream, self.group, entry_id)
                    record = json.loads(decode_entry(fields))
                    self.seen.append(record)
                    if match(record):
                        return record
        raise AssertionError(f"none of {len(self.seen)} records on {self.stream} matched")

    def read_all(self) -> list[dict[str, Any]]:
        """Every record seen, with those published up to now (no wait): for a check that
        nothing more came, once what could publish it is known done."""
        while read := self.client.xreadgroup(self.group, "journey", {self.stream: ">"}, count=100):
            for _name, entries in read:
                for entry_id, fields in entries:
                    self.client.xack(self.stream, self.group, entry_id)
                    self.seen.append(json.loads(decode_entry(fields)))
        return self.seen

    def event(self, conversation_id: str, kind: str) -> dict[str, Any]:
        """The domain event ``kind`` of a conversation (trial.booked, trial.cancelled...)."""
        return self.wait(lambda e: e["conversation_id"] == conversation_id and e["type"] == kind)


class Bus:
    """The system's Redis as the tests observe it: streams to subscribe to, seats."""

    def __init__(self, redis_url: str, prefix: str) -> None:
        self.redis_url = redis_url
        self.prefix = prefix
        self.keys = Keys(prefix)

    @contextmanager
    def subscribe(self, stream: str) -> Iterator[Subscription]:
        """Everything published on ``stream`` from now on, until the block ends."""
        client = redis_sync.Redis.from_url(self.redis_url)
        group = f"journey-{uuid.uuid4().hex[:8]}"
        client.xgroup_create(stream, group, id="$", mkstream=True)
        try:
            yield Subscription(client, stream, group)
        finally:
            client.xgroup_destroy(stream, group)
            client.close()

    def seats(self, day: str, hour: str) -> int:
        """Seats taken in one trial class, read through the booking store."""

        async def read() -> int:
            client = Redis.from_url(self.redis_url, decode_responses=True)
            try:
                config = load_trial_config(PACK)
                store = BookingStore(
                    client, self.prefix + "trial:", id_prefix=config.booking_id_prefix
                )
                return (await store.seats_taken([day], [hour]))[(day, hour)]
            finally:
                await client.aclose()

        return asyncio.run(read())
