"""Issue 17 end to end: staff's view of the bookings, their attendance and cancellation
commands, and a person's data exported and erased — through the real gateway over HTTP.

Bookings of one session share a store, so each test books its own Tuesday (October and
November 2026, which no other test uses).
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import subprocess
import sys
import time
from datetime import timedelta
from typing import Any

import redis as redis_sync
from faststream.redis import RedisBroker

from shared.contracts import BookingCommand
from shared.keys import Keys
from tests.e2e.journey import PACK, Bus, Chat, assert_said, eventually
from tests.system import ROOT, System

MINUTE = timedelta(minutes=1)


def book(system: System, start: str, details: str) -> tuple[Chat, str]:
    chat = Chat(system, "staff", start)
    chat.say(f"quero agendar uma aula experimental: {details}")
    code = assert_said(chat.say("sim", after=MINUTE), "trial_booked")["codigo"]
    return chat, code


def roster(system: System, start: str, end: str) -> list[dict[str, Any]]:
    response = system.http.get("/v1/bookings", params={"from": start, "to": end})
    assert response.status_code == 200, response.text
    return list(response.json()["classes"])


def booking_in(classes: list[dict[str, Any]], booking_id: str) -> dict[str, Any]:
    [found] = [b for c in classes for b in c["bookings"] if b["booking_id"] == booking_id]
    return dict(found)


def test_the_roster_lists_every_class_of_the_range_with_its_bookings(system: System) -> None:
    chat, code = book(
        system, "2026-10-01T10:00:00-03:00", "sou a Bia, 29 anos, iniciante, 06/10 às 19h"
    )
    # Monday 5 to Sunday 18 October: two Tuesdays, every class of each listed.
    classes = roster(system, "2026-10-05", "2026-10-18")
    times = PACK.sections["trial"]["times"]
    seats = PACK.sections["trial"]["seats_per_slot"]
    assert [(c["date"], c["time"]) for c in classes] == [
        (day, hour) for day in ("2026-10-06", "2026-10-13") for hour in times
    ]
    by_class = {(c["date"], c["time"]): c for c in classes}
    booked_class = by_class[("2026-10-06", "19:00")]
    assert booked_class["capacity"] == seats and booked_class["seats_left"] == seats - 1
    booking = booking_in(classes, code)
    assert booking == {
        "booking_id": code,
        "student_name": "Bia",
        "age": 29,
        "level": "iniciante",
        "conversation_id": chat.id,
        "contact_name": None,
        "status": "booked",
        "booked_at": booking["booked_at"],
        "cancel_reason": None,
        "cancelled_by": None,
    }
    assert booking["booked_at"].startswith("2026-10-01T10:01")
    assert all(c["bookings"] == [] for key, c in by_class.items() if key != ("2026-10-06", "19:00"))
    # "to" is inclusive: a range of one class day lists that day.
    assert {c["date"] for c in roster(system, "2026-10-06", "2026-10-06")} == {"2026-10-06"}


def test_bad_ranges_and_commands_get_a_clear_4xx(system: System) -> None:
    http = system.http
    backwards = http.get("/v1/bookings", params={"from": "2026-10-13", "to": "2026-10-12"})
    assert backwards.status_code == 422 and "before" in backwards.json()["detail"]
    too_long = http.get("/v1/bookings", params={"from": "2026-01-01", "to": "2026-04-01"})
    assert too_long.status_code == 422 and "91 days" in too_long.json()["detail"]
    not_a_date = http.get("/v1/bookings", params={"from": "13/10/2026", "to": "2026-10-20"})
    assert not_a_date.status_code == 422 and "from" in not_a_date.text
    assert http.get("/v1/bookings", params={"from": "2026-10-13"}).status_code == 422

    unknown = http.post("/v1/bookings/AE-NOPE99/attendance", json={"status": "attended"})
    assert unknown.status_code == 404 and unknown.json()["detail"] == "no booking with this id"
    not_a_code = http.post("/v1/bookings/AE%20NOPE/attendance", json={"status": "attended"})
    assert not_a_code.status_code == 422
    assert http.post("/v1/bookings/AE-NOPE99/cancel", json={"reason": "x"}).status_code == 404
    _, code = book(system, "2026-10-15T10:00:00-03:00", "sou o Rui, 41 anos, avançado, 20/10 às 7h")
    wrong = http.post(f"/v1/bookings/{code}/attendance", json={"status": "late"})
    assert wrong.status_code == 422 and "attended" in wrong.text
    blank = http.post(f"/v1/bookings/{code}/cancel", json={"reason": "  "})
    assert blank.status_code == 422 and "reason" in blank.text


def test_attendance_is_a_command_the_trial_service_applies(
    system: System, redis_url: str, prefix: str
) -> None:
    bus = Bus(redis_url, prefix)
    chat, code = book(
        system, "2026-10-22T10:00:00-03:00", "sou o Léo, 33 anos, intermediário, 27/10 às 18h"
    )
    with bus.subscribe(bus.keys.events) as events:
        accepted = system.http.post(f"/v1/bookings/{code}/attendance", json={"status": "no_show"})
        assert accepted.status_code == 202, accepted.text
        command_id = accepted.json()["command_id"]
        event = events.event(chat.id, "booking.attendance")
    assert event["turn_id"] == command_id
    assert event["data"] == {
        "booking_id": code,
        "status": "no_show",
        "conversation_id": chat.id,
        "date": "2026-10-27",
        "time": "18:00",
    }
    assert booking_in(roster(system, "2026-10-27", "2026-10-27"), code)["status"] == "no_show"
    [journaled] = chat.journal("booking.attendance")
    assert journaled["turn_id"] == command_id and journaled["result"] == "marked"


def test_a_staff_cancellation_tells_the_customer_and_frees_the_seat(
    system: System, redis_url: str, prefix: str
) -> None:
    bus = Bus(redis_url, prefix)
    chat, code = book(
        system, "2026-11-01T10:00:00-03:00", "sou a Duda, 25 anos, iniciante, 03/11 às 20h"
    )
    assert bus.seats("2026-11-03", "20:00") == 1
    with bus.subscribe(bus.keys.events) as events:
        accepted = system.http.post(
            f"/v1/bookings/{code}/cancel", json={"reason": "quadra em manutenção"}
        )
        assert accepted.status_code == 202, accepted.text
        event = events.event(chat.id, "booking.cancelled")
    assert event["data"] == {
        "booking_id": code,
        "reason": "quadra em manutenção",
        "by": "staff",
        "conversation_id": chat.id,
        "date": "2026-11-03",
        "time": "20:00",
    }
    told = system.next_reply(chat.id, after=chat.cursor)
    assert_said(
        told["text"],
        "booking_cancelled_by_staff",
        data="terça, 03/11",
        hora="20:00",
        motivo="quadra em manutenção",
    )
    assert bus.seats("2026-11-03", "20:00") == 0
    booking = booking_in(roster(system, "2026-11-03", "2026-11-03"), code)
    assert (booking["status"], booking["cancelled_by"]) == ("cancelled", "staff")
    trial = chat.slice("trial")
    assert trial["booking_id"] is None and trial["stage"] != "booked"
    again = system.http.post(f"/v1/bookings/{code}/cancel", json={"reason": "de novo"})
    assert again.status_code == 409


def test_a_customer_cancellation_is_a_booking_cancelled_by_the_customer(
    system: System, redis_url: str, prefix: str
) -> None:
    bus = Bus(redis_url, prefix)
    with bus.subscribe(bus.keys.events) as events:
        chat, code = book(
            system, "2026-11-05T10:00:00-03:00", "sou o Beto, 50 anos, iniciante, 10/11 às 18h"
        )
        booked = events.event(chat.id, "trial.booked")
        chat.say("cancela minha aula", after=MINUTE)
        chat.say("sim", after=MINUTE)
        cancelled = events.event(chat.id, "booking.cancelled")
    assert booked["data"]["conversation_id"] == chat.id
    assert (booked["data"]["booking_id"], booked["data"]["date"]) == (code, "2026-11-10")
    assert cancelled["data"]["by"] == "customer" and cancelled["data"]["booking_id"] == code
    assert (cancelled["data"]["date"], cancelled["data"]["time"]) == ("2026-11-10", "18:00")


def keys_naming(client: redis_sync.Redis, prefix: str, needle: str) -> list[str]:
    return [
        k.decode() for k in client.scan_iter(match=f"{prefix}*", count=1000) if needle.encode() in k
    ]


def test_export_then_erase_leaves_nothing_of_the_person(
    system: System, redis_url: str, prefix: str
) -> None:
    chat, code = book(
        system, "2026-11-12T10:00:00-03:00", "sou a Zuleica, 37 anos, avançado, 17/11 às 19h"
    )
    chat.say("onde fica a CT?", after=MINUTE)
    exported = system.http.get(f"/v1/conversations/{chat.id}/export")
    assert exported.status_code == 200
    data = exported.json()
    assert data["state"]["trial"]["nome"] == "Zuleica"
    assert any(e["event"] == "turn.started" for e in data["journal"])
    assert [b["booking_id"] for b in data["bookings"]] == [code]
    assert data["bookings"][0]["nome"] == "Zuleica"
    assert "replies" in data["stored"] and data["stored"]["replies"]

    client = redis_sync.Redis.from_url(redis_url)
    try:
        assert keys_naming(client, prefix, chat.id)  # there was something to erase
        schedule = Keys(prefix).sched_index(chat.id)
        deadline = time.monotonic() + 30
        while not client.exists(schedule):  # the scheduler planned the class reminders
            assert time.monotonic() < deadline, "no reminder was scheduled for the booking"
            time.sleep(0.1)
        index = Keys(prefix).conversation_index
        assert client.zscore(index, chat.id) is not None
        erased = system.http.delete(f"/v1/conversations/{chat.id}")
        assert erased.status_code == 200, erased.text
        assert erased.json()["bookings_anonymized"] == [code]

        # What stays: the erase's marks of the turns it had (``privacy.py``), for work still in
        # flight, until the turn TTL; their names carry the conversation id, nothing else does.
        base = Keys(prefix).conv(chat.id, "")
        for key in keys_naming(client, prefix, chat.id):
            rest = key.removeprefix(base)
            assert rest == "erased" or rest.startswith(("out:", "sent:")), key
            assert 0 < client.ttl(key) <= 600, key
            if rest != "erased":
                assert client.get(key) in (b"[]", b"erased"), key
        assert client.zscore(index, chat.id) is None
        for key in client.scan_iter(match=f"{prefix}sched:*", count=1000):
            if client.type(key) == b"zset":
                members = client.zrange(key, 0, -1)
                assert not any(chat.id.encode() in m for m in members), key
        store_keys = [k for k in client.scan_iter(match=f"{prefix}trial:*", count=1000)]
        for key in store_keys:
            if client.type(key) == b"hash":
                values = b" ".join(client.hvals(key))
                assert b"Zuleica" not in values and chat.id.encode() not in values
        digest = hashlib.sha256(chat.id.encode()).hexdigest()
        log = [json.loads(e) for e in client.lrange(f"{prefix}privacy:log", 0, -1)]
        [entry] = [e for e in log if e["conversation_sha256"] == digest]
        assert chat.id not in json.dumps(log)
        assert entry["bookings"] == 1
    finally:
        client.close()

    classes = roster(system, "2026-11-17", "2026-11-17")
    booking = booking_in(classes, code)
    assert booking["student_name"] is None and booking["conversation_id"] is None
    assert booking["status"] == "booked"  # the seat stays counted
    assert {c["time"]: c["seats_left"] for c in classes}["19:00"] == (
        PACK.sections["trial"]["seats_per_slot"] - 1
    )
    for path in ("", "/journal", "/export"):
        response = system.http.get(f"/v1/conversations/{chat.id}{path}")
        assert response.status_code == 404, (path, response.text)
    assert system.http.delete(f"/v1/conversations/{chat.id}").status_code == 404
    never = system.http.get("/v1/conversations/never-seen-anywhere")
    assert never.status_code == 404


def test_asking_to_erase_ones_data_is_explained_and_handed_to_staff(system: System) -> None:
    chat = Chat(system, "privacy", "2026-11-19T10:00:00-03:00")
    chat.say("oi, tudo bem?")
    reply = chat.say("quero que vocês apaguem todos os meus dados", after=MINUTE)
    assert_said(reply, "privacy_request")
    [decided] = [e for e in chat.journal("trial.decided") if e["turn_id"] == chat.last["turn_id"]]
    assert decided["handoff"] == "privacy"
    pending = eventually(
        lambda: [e for e in chat.journal("handoff.pending_human") if e["reason"] == "privacy"]
    )
    assert pending and chat.slice("meta")["handoff"] == "pending_human"


def orquestra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "orquestra.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_bookings_and_erase_commands_work_against_the_gateway(system: System) -> None:
    chat, code = book(
        system, "2026-11-20T10:00:00-03:00", "sou o Otávio, 44 anos, intermediário, 24/11 às 7h"
    )
    url = ("--url", system.base_url)
    table = orquestra("bookings", "--from", "2026-11-23", "--to", "2026-11-29", *url)
    assert table.returncode == 0, table.stderr
    assert "2026-11-24 07:00  1/" in table.stdout
    assert code in table.stdout and "Otávio (44 anos, intermediario)" in table.stdout

    exported = orquestra("bookings", "--from", "2026-11-24", "--csv", *url)
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    times = PACK.sections["trial"]["times"]
    assert len(rows) == len(times)  # one booking, three empty classes: one row each
    [row] = [r for r in rows if r["booking_id"]]
    assert (row["date"], row["time"], row["student_name"], row["status"]) == (
        "2026-11-24",
        "07:00",
        "Otávio",
        "booked",
    )
    assert row["conversation_id"] == chat.id

    bad = orquestra("bookings", "--from", "2026-11-24", "--to", "2026-11-01", *url)
    assert bad.returncode == 1 and "422" in bad.stderr and "before" in bad.stderr

    erased = orquestra("erase", chat.id, "--yes", *url)
    assert erased.returncode == 0, erased.stderr
    assert code in erased.stdout
    assert system.http.get(f"/v1/conversations/{chat.id}").status_code == 404
    again = orquestra("erase", chat.id, "--yes", *url)
    assert again.returncode == 1 and "404" in again.stderr


def drained(client: redis_sync.Redis, stream: str, group: str) -> bool:
    """Every entry of ``stream`` was read and acknowledged by ``group``."""
    [info] = [g for g in client.xinfo_groups(stream) if g["name"].decode() == group]
    if "lag" in info:
        caught_up = info["lag"] == 0
    else:  # Redis before 7 (the embedded server) has no lag: compare the last ids instead
        caught_up = info["last-delivered-id"] == client.xinfo_stream(stream)["last-generated-id"]
    return info["pending"] == 0 and caught_up


def test_a_redelivered_command_changes_and_tells_nothing_twice(
    system: System, redis_url: str, prefix: str
) -> None:
    bus = Bus(redis_url, prefix)
    chat, code = book(
        system, "2026-11-24T10:00:00-03:00", "sou a Íris, 22 anos, iniciante, 01/12 às 18h"
    )
    command = BookingCommand(action="cancel", booking_id=code, reason="professor doente")

    async def publish_twice() -> None:
        broker = RedisBroker(redis_url, logger=None)
        await broker.connect()
        for _ in range(2):
            await broker.publish(
                command.model_dump_json().encode(), stream=bus.keys.commands("trial")
            )
        await broker.stop()

    client = redis_sync.Redis.from_url(redis_url)
    try:
        with bus.subscribe(bus.keys.events) as events:
            asyncio.run(publish_twice())
            first = events.event(chat.id, "booking.cancelled")
            told = system.next_reply(chat.id, after=chat.cursor)
            eventually(lambda: drained(client, bus.keys.commands("trial"), "trial"))
            eventually(lambda: drained(client, bus.keys.outbound, "gateway"))
            cancelled = [
                e
                for e in events.seen
                if e["type"] == "booking.cancelled" and e["data"]["booking_id"] == code
            ]
    finally:
        client.close()
    assert {e["event_id"] for e in cancelled} == {first["event_id"]}  # a replay, not a second
    assert "professor doente" in told["text"]
    assert system.replies(chat.id, after=told["cursor"])["replies"] == []
    [journaled] = chat.journal("booking.cancel")
    assert journaled["turn_id"] == command.command_id and journaled["result"] == "cancelled"
