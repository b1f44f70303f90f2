"""Issue 17, scheduled messages and the funnel, end to end: real processes (two scheduler
replicas), the HTTP API and a clock moved at run time (``POST /v1/admin/clock``).

Every test runs in a week of its own and moves the shared clock forward only, in file order.
``booking.cancelled`` and ``booking.attendance`` are the staff commands' events; the tests
publish them on the events stream as the trial service does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
import redis as redis_sync

from orquestra.funnel import COLUMNS
from shared.contracts import DomainEvent
from shared.keys import Keys
from shared.lua import SCHED_CLAIM
from shared.scheduled import member
from tests.e2e.journey import Chat, assert_said, eventually
from tests.load import children
from tests.support.fake_graph import CORPUS, FakeGraph, GraphRequest, message_webhook
from tests.system import System

MINUTE = timedelta(minutes=1)
# Conversations a later test looks at again (tests run in file order on one system).
SEEN: dict[str, str] = {}
GRAPH_TOKEN = "scheduler-test-token"
NUMBER = "5511900000001"


@pytest.fixture(scope="module")
def graph() -> Iterator[FakeGraph]:
    with FakeGraph.running(GRAPH_TOKEN) as running:
        yield running


@pytest.fixture(scope="module")
def system(redis_url: str, unique_prefix: str, graph: FakeGraph) -> Iterator[System]:
    with System.up(
        redis_url,
        unique_prefix,
        "--scale",
        "scheduler=2",
        ORQ_TEST_CLOCK="true",
        ORQ_SCHEDULER_CLAIM_MS="2000",
        ORQ_SCHEDULER_TICK_MS="200",
        WHATSAPP_ACCESS_TOKEN=GRAPH_TOKEN,
        WHATSAPP_GRAPH_BASE_URL=graph.base_url,
        WHATSAPP_MARK_READ="false",
    ) as running:
        yield running


@pytest.fixture(scope="module")
def unique_prefix(redis_url: str) -> Iterator[str]:
    import uuid

    value = f"orqtest-{uuid.uuid4().hex[:8]}:"
    yield value
    client = redis_sync.Redis.from_url(redis_url)
    for key in client.scan_iter(match=f"{value}*", count=1000):
        client.delete(key)
    client.close()


def set_clock(system: System, now: str) -> None:
    response = system.http.post("/v1/admin/clock", json={"now": now})
    assert response.status_code == 200, response.text


def scheduled(system: System, conversation_id: str) -> dict[str, dict[str, Any]]:
    response = system.http.get("/v1/scheduled", params={"conversation_id": conversation_id})
    assert response.status_code == 200, response.text
    return {row["kind"]: row for row in response.json()["scheduled"]}


def book(system: System, start: str, text: str, **fields: Any) -> tuple[Chat, str]:
    chat = Chat(system, "sched", start)
    first = system.say(
        chat.id,
        f"quero agendar uma aula experimental: {text}",
        sent_at=chat.now.isoformat(),
        **fields,
    )
    chat.cursor = first["cursor"]
    code = assert_said(chat.say("sim", after=MINUTE), "trial_booked")["codigo"]
    return chat, code


def collect(system: System, chat: Chat, n: int, wait_s: float = 30) -> list[dict[str, Any]]:
    """The next ``n`` replies of a conversation (long-polled), moving its cursor past them."""
    found: list[dict[str, Any]] = []
    deadline = time.monotonic() + wait_s
    while len(found) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{len(found)} of {n} replies within {wait_s}s")
        data = system.replies(chat.id, chat.cursor, min(left, 20))
        found += data["replies"]
        chat.cursor = data["cursor"]
    return found


def scheduled_replies(system: System, conversation_id: str) -> list[dict[str, Any]]:
    replies = system.replies(conversation_id)["replies"]
    return [r for r in replies if r["turn_id"].startswith("sched-")]


def publish(redis_url: str, prefix: str, event: DomainEvent) -> None:
    """Publish a domain event the way services do (FastStream's format on the stream)."""
    import asyncio

    from faststream.redis import RedisBroker

    async def send() -> None:
        broker = RedisBroker(redis_url)
        await broker.connect()
        await broker.publish(event.model_dump_json().encode(), stream=Keys(prefix).events)
        await broker.stop()

    asyncio.run(send())


def test_a_monday_booking_is_reminded_monday_at_the_pack_hour_exactly_once(
    system: System, redis_url: str, unique_prefix: str
) -> None:
    set_clock(system, "2026-02-09T10:00:00-03:00")
    chat, _ = book(
        system,
        "2026-02-09T10:00:00-03:00",
        "sou o Caio, 35 anos, intermediário, 10/02 às 19h",
        origin="campaign:verao",
    )
    SEEN["reminded"] = chat.id
    rows = eventually(lambda: (r := scheduled(system, chat.id)) and len(r) == 2 and r)
    assert rows["day_before"]["status"] == "pending"
    assert datetime.fromisoformat(rows["day_before"]["due_at"]) == datetime.fromisoformat(
        "2026-02-09T18:00:00-03:00"
    )
    # One replica dies outright; another "died" just after claiming the reminder: its claim
    # is taken over once it expires.
    scheduler_pid = children(system.process.pid)["scheduler"][0]
    os.kill(scheduler_pid, signal.SIGKILL)
    keys = Keys(unique_prefix)
    client = redis_sync.Redis.from_url(redis_url, decode_responses=True)
    bucket = "2026020921"
    claim = client.register_script(SCHED_CLAIM)
    due_ms = int(datetime.fromisoformat("2026-02-09T18:00:00-03:00").timestamp() * 1000)
    claimed = claim(
        keys=[keys.sched_due(bucket), keys.sched_claimed(bucket)], args=[due_ms, 2000, 100]
    )
    client.close()
    assert member(chat.id, rows["day_before"]["id"]) in claimed[1:]

    set_clock(system, "2026-02-09T18:00:01-03:00")
    reply = system.next_reply(chat.id, after=chat.cursor, wait=30)
    assert reply["turn_id"] == f"sched-{rows['day_before']['id']}"
    assert_said(
        reply["text"], "reminder_day_before", nome="Caio", data="terça, 10/02", hora="19:00"
    )
    rows = eventually(
        lambda: (r := scheduled(system, chat.id))["day_before"]["status"] == "sent" and r
    )
    assert rows["before_class"]["status"] == "pending"

    # The two-hour reminder on Tuesday; the day-before one was sent once, journaled once.
    set_clock(system, "2026-02-10T17:00:01-03:00")
    second = system.next_reply(chat.id, after=reply["cursor"], wait=30)
    assert_said(second["text"], "reminder_before_class", nome="Caio", hora="19:00")
    sent = [r["turn_id"] for r in scheduled_replies(system, chat.id)]
    assert sorted(sent) == sorted({f"sched-{row['id']}" for row in rows.values()})
    journal = system.journal(chat.id)
    assert [e["kind"] for e in journal if e["event"] == "scheduled.sent"] == [
        "day_before",
        "before_class",
    ]
    delivered = [e for e in journal if e["event"] == "reply.delivered"]
    assert len([e for e in delivered if e["turn_id"].startswith("sched-")]) == 2

    funnel = system.http.get("/v1/funnel", params={"from": "2026-02-09", "to": "2026-02-09"})
    [day] = funnel.json()["days"]
    assert day["booked"] == 1 and day["started"] == 1 and day["trial_asked"] == 1
    assert day["by_source"]["campaign:verao"]["booked"] == 1


def test_attendance_marks_drive_the_follow_ups(
    system: System, redis_url: str, unique_prefix: str
) -> None:
    set_clock(system, "2026-02-23T09:00:00-03:00")
    start = "2026-02-23T09:00:00-03:00"
    came, came_code = book(system, start, "sou o Davi, 31 anos, iniciante, 24/02 às 19h")
    missed, missed_code = book(system, start, "sou a Eva, 26 anos, iniciante, 24/02 às 19h")
    set_clock(system, "2026-02-24T17:00:01-03:00")
    for chat in (came, missed):
        reminders = collect(system, chat, 2)
        assert {r["turn_id"].rsplit("-", 1)[1] for r in reminders} == {"day_before", "before_class"}

    set_clock(system, "2026-02-24T21:00:00-03:00")
    for chat, code, status in ((came, came_code, "attended"), (missed, missed_code, "no_show")):
        publish(
            redis_url,
            unique_prefix,
            DomainEvent(
                type="booking.attendance",
                conversation_id=chat.id,
                at=datetime.fromisoformat("2026-02-24T21:00:00-03:00"),
                data={
                    "booking_id": code,
                    "status": status,
                    "conversation_id": chat.id,
                    "date": "2026-02-24",
                    "time": "19:00",
                },
            ),
        )
    eventually(lambda: "attended" in scheduled(system, came.id))
    eventually(lambda: "no_show" in scheduled(system, missed.id))
    set_clock(system, "2026-02-24T22:00:01-03:00")
    how = system.next_reply(came.id, after=came.cursor, wait=30)
    assert_said(how["text"], "followup_attended", nome="Davi", data="terça, 24/02")
    miss = system.next_reply(missed.id, after=missed.cursor, wait=30)
    assert_said(
        miss["text"],
        "followup_no_show",
        nome="Eva",
        data="terça, 24/02",
        hora="19:00",
        proxima_data="terça, 03/03",
    )
    funnel = system.http.get("/v1/funnel", params={"from": "2026-02-24", "to": "2026-02-24"})
    assert funnel.json()["days"][0]["attended"] == 1


def test_messages_due_while_a_person_owns_the_conversation_are_held_and_listed(
    system: System,
) -> None:
    set_clock(system, "2026-03-02T09:00:00-03:00")
    chat, _ = book(
        system, "2026-03-02T09:00:00-03:00", "sou a Gil, 50 anos, iniciante, 03/03 às 19h"
    )
    eventually(lambda: len(scheduled(system, chat.id)) == 2)
    handed = system.http.post(f"/v1/conversations/{chat.id}/handoff", json={"owner": "human"})
    assert handed.status_code == 200
    set_clock(system, "2026-03-02T18:00:01-03:00")
    rows = eventually(
        lambda: (r := scheduled(system, chat.id))["day_before"]["status"] == "held" and r
    )
    listed = system.http.get("/v1/scheduled", params={"before": "2026-03-02T23:00:00-03:00"})
    assert rows["day_before"]["id"] in {r["id"] for r in listed.json()["scheduled"]}
    assert scheduled_replies(system, chat.id) == []
    assert [e["kind"] for e in system.journal(chat.id) if e["event"] == "scheduled.held"] == [
        "day_before"
    ]


def test_a_cancelled_booking_sends_no_reminder(
    system: System, redis_url: str, unique_prefix: str
) -> None:
    # Not the week of 16-17/02: Tuesday 17/02/2026 is Carnival, the business is closed.
    set_clock(system, "2026-03-09T09:00:00-03:00")
    start = "2026-03-09T09:00:00-03:00"
    by_person, _ = book(system, start, "sou a Bia, 28 anos, iniciante, 10/03 às 19h")
    by_staff, staff_code = book(system, start, "sou o Rui, 40 anos, iniciante, 10/03 às 20h")
    control, _ = book(system, start, "sou a Lia, 33 anos, iniciante, 10/03 às 18h")
    for chat in (by_person, by_staff, control):
        eventually(lambda chat=chat: len(scheduled(system, chat.id)) == 2)

    by_person.say("cancela minha aula", after=MINUTE)
    assert_said(by_person.say("sim", after=MINUTE), "trial_cancelled", hora="19:00")
    publish(
        redis_url,
        unique_prefix,
        DomainEvent(
            type="booking.cancelled",
            conversation_id=by_staff.id,
            at=datetime.fromisoformat("2026-03-09T11:00:00-03:00"),
            data={
                "booking_id": staff_code,
                "reason": "chuva",
                "by": "staff",
                "conversation_id": by_staff.id,
                "date": "2026-03-10",
                "time": "20:00",
            },
        ),
    )
    for chat in (by_person, by_staff):
        eventually(
            lambda chat=chat: all(
                r["status"] == "cancelled" for r in scheduled(system, chat.id).values()
            )
        )

    # The control's reminder is in the same hour bucket, claimed in the same sweep.
    set_clock(system, "2026-03-09T18:00:01-03:00")
    reminder = system.next_reply(control.id, after=control.cursor, wait=30)
    assert reminder["turn_id"].startswith("sched-")
    for chat in (by_person, by_staff):
        assert scheduled_replies(system, chat.id) == []
        cancelled = [e for e in system.journal(chat.id) if e["event"] == "scheduled.cancelled"]
        assert len(cancelled) == 2
        assert {r["status"] for r in scheduled(system, chat.id).values()} == {"cancelled"}


def test_a_click_to_whatsapp_referral_is_kept_and_counted_by_source(
    system: System, redis_url: str, unique_prefix: str
) -> None:
    webhook = json.loads((CORPUS / "cloud_text_ctwa_referral.json").read_text())
    response = system.http.post("/webhooks/whatsapp", json=webhook)
    assert response.status_code == 200, response.text
    conversation = "wa:1122334455667:972987654321"
    meta = eventually(lambda: (system.conversation(conversation).get("meta") or {}) or None)
    assert meta["referral"] == {
        "source_type": "ad or post",
        "source_id": "ADID",
        "source_url": "AD_OR_POST_FB_URL",
        "headline": "AD_TITLE",
        "ctwa_clid": "CTWA_CLID",
    }
    # 1697045000 is 11 October 2023 in São Paulo: the turn's business day.
    day = eventually(
        lambda: (
            (
                d := system.http.get(
                    "/v1/funnel", params={"from": "2023-10-11", "to": "2023-10-11"}
                ).json()["days"][0]
            )["started"]
            and d
        )
    )
    assert day["by_source"] == {
        "ctwa:ADID": {
            "started": 1,
            "trial_asked": 0,
            "booked": 0,
            "attended": 0,
            "plan_interest": 0,
        }
    }


def test_orquestra_funnel_and_explain_show_the_scheduled_turns(system: System) -> None:
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "orquestra.cli",
            "funnel",
            "--url",
            system.base_url,
            "--from",
            "2026-02-09",
            "--to",
            "2026-02-09",
            "--by-source",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = shown.stdout.splitlines()
    assert lines[0].split() == ["dia", "origem", *COLUMNS]
    assert lines[1].split() == ["2026-02-09", "1", "1", "1", "0", "0"]
    assert lines[2].split() == ["campaign:verao", "1", "1", "1", "0", "0"]

    explained = subprocess.run(
        [
            sys.executable,
            "-m",
            "orquestra.cli",
            "explain",
            SEEN["reminded"],
            "--url",
            system.base_url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for row in scheduled(system, SEEN["reminded"]).values():
        assert f"sched-{row['id']}" in explained
    assert "scheduled.sent" in explained


def test_on_whatsapp_with_the_window_closed_the_reminder_goes_as_its_template(
    system: System, graph: FakeGraph, redis_url: str, unique_prefix: str
) -> None:
    sender = "5511987650001"
    conversation = f"wa:{NUMBER}:{sender}"
    # The person's last message is 25 hours old: WhatsApp only delivers templates now.
    webhook = message_webhook(NUMBER, sender, "wamid.SCHED1", int(time.time()) - 25 * 3600)
    assert system.http.post("/webhooks/whatsapp", json=webhook).status_code == 200
    eventually(lambda: (system.conversation(conversation).get("meta") or {}).get("contact"))
    set_clock(system, "2026-03-16T09:00:00-03:00")
    publish(
        redis_url,
        unique_prefix,
        DomainEvent(
            type="trial.booked",
            conversation_id=conversation,
            at=datetime.fromisoformat("2026-03-16T09:00:00-03:00"),
            data={"booking_id": "AE-WA0001", "date": "2026-03-17", "time": "18:00", "nome": "Iara"},
        ),
    )
    eventually(lambda: len(scheduled(system, conversation)) == 2)
    set_clock(system, "2026-03-16T18:00:01-03:00")

    def reminders(requests: list[GraphRequest]) -> list[GraphRequest]:
        return [
            r
            for r in requests
            if r.recipient == sender
            and r.kind == "template"
            and r.body["template"]["name"] == "lembrete_aula_vespera"
        ]

    graph.wait_for(lambda requests: bool(reminders(requests)))
    # (The bot's answer to the old message went out as the re-engagement template.)
    [sent] = reminders(graph.to(sender))
    assert sent.body["template"] == {
        "name": "lembrete_aula_vespera",
        "language": {"code": "pt_BR"},
        "components": [
            {
                "type": "body",
                "parameters": [
                    {"type": "text", "text": "Iara"},
                    {"type": "text", "text": "terça, 17/03"},
                    {"type": "text", "text": "18:00"},
                ],
            }
        ],
    }
    assert [r for r in graph.to(sender) if r.kind == "text"] == []


def test_bad_ranges_and_times_get_a_clear_4xx(system: System) -> None:
    backwards = system.http.get("/v1/funnel", params={"from": "2026-02-10", "to": "2026-02-09"})
    assert backwards.status_code == 422 and "before" in backwards.text
    too_long = system.http.get("/v1/funnel", params={"from": "2024-01-01", "to": "2026-01-01"})
    assert too_long.status_code == 422
    not_a_day = system.http.get("/v1/funnel", params={"from": "ontem"})
    assert not_a_day.status_code == 422
    first_days = system.http.get("/v1/funnel", params={"to": "0001-01-02"})
    assert first_days.status_code == 422
    odd_id = system.http.get("/v1/scheduled", params={"conversation_id": "a b{c}"})
    assert odd_id.status_code == 422
    naive = system.http.get("/v1/scheduled", params={"before": "2026-02-10T10:00:00"})
    assert naive.status_code == 422
    clock = system.http.post("/v1/admin/clock", json={"now": "amanhã"})
    assert clock.status_code == 422
