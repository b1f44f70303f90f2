"""Issue 18 end to end: enrollment (matrícula) through the real gateway over HTTP.

After a trial class people ask to join; the enrollment specialist collects a plan, days and
time and a way to pay, makes a request for staff (listed by ``GET /v1/enrollments``) and hands
the conversation over with a summary. It never charges. Trial bookings of these tests use
January 2027, which no other test books.
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import redis as redis_sync
from faststream.redis import RedisBroker

from services.enrollment.config import load_config
from tests.e2e.journey import PACK, Bus, Chat, assert_said, eventually, said
from tests.e2e.test_bookings import drained
from tests.e2e.test_security import ADMIN, API, bearer, lone_gateway
from tests.system import System

MINUTE = timedelta(minutes=1)
CONFIG = load_config(PACK)
THREE = CONFIG.plans["tres_vezes"]


def enrollments(system: System, **params: str) -> list[dict[str, Any]]:
    response = system.http.get("/v1/enrollments", params=params)
    assert response.status_code == 200, response.text
    return list(response.json()["enrollments"])


def of(system: System, conversation_id: str) -> list[dict[str, Any]]:
    return [e for e in enrollments(system) if e["conversation_id"] == conversation_id]


def requested(seen: list[dict[str, Any]], conversation_id: str) -> list[dict[str, Any]]:
    return [
        e
        for e in seen
        if e["type"] == "enrollment.requested" and e["conversation_id"] == conversation_id
    ]


def booked_chat(system: System, start: str, details: str) -> Chat:
    chat = Chat(system, "enroll", start)
    chat.say(f"quero agendar uma aula experimental: {details}")
    assert_said(chat.say("sim", after=MINUTE), "trial_booked")
    return chat


def test_after_a_trial_a_plan_becomes_a_request_for_staff(system: System) -> None:
    chat = booked_chat(
        system, "2027-01-05T10:00:00-03:00", "sou a Lia, 31 anos, iniciante, 12/01 às 19h"
    )
    after_class = timedelta(days=7, hours=11)
    reply = chat.say("quero fechar o plano de 3x", after=after_class)
    assert_said(reply, "enrollment_ask_schedule", plano=THREE.name, preco=f"R$ {THREE.price}")
    assert chat.slice("enrollment")["plan"] == "tres_vezes"

    reply = chat.say("segunda e quarta às 19h", after=MINUTE)
    assert_said(reply, "enrollment_ask_payment", dias="segunda e quarta", horario="às 19:00")

    reply = chat.say("pix", after=MINUTE)
    assert_said(reply, "enrollment_confirm", plano=THREE.name, pagamento="Pix")
    assert [e for e in chat.journal("faq.answered") if e["turn_id"] == chat.last["turn_id"]] == []

    reply = chat.say("sim", after=MINUTE)
    code = assert_said(reply, "enrollment_requested")["codigo"]
    [request] = [e for e in enrollments(system, status="requested") if e["id"] == code]
    assert request == {
        "id": code,
        "conversation_id": chat.id,
        "plan": THREE.name,
        "days": ["segunda", "quarta"],
        "time": "19:00",
        "payment": "Pix",
        "status": "requested",
        "created_at": request["created_at"],
    }
    assert request["created_at"].startswith("2027-01-12T21:0")
    # Staff take it from here: the conversation waits for a person, with the request's summary.
    meta = eventually(lambda: chat.slice("meta") if chat.slice("meta").get("handoff") else None)
    assert meta["handoff"] == "pending_human"
    [handed] = eventually(lambda: chat.journal("handoff.pending_human"))
    assert handed["reason"] == "enrollment" and handed["request_id"] == code
    assert said(handed["summary"], "enrollment_summary", codigo=code, plano=THREE.name)


def test_asking_how_to_enroll_asks_the_plan_first(system: System) -> None:
    chat = Chat(system, "enroll-how", "2027-01-06T10:00:00-03:00")
    reply = chat.say("como faço pra me matricular?")
    assert_said(reply, "enrollment_ask_plan")
    for plan in CONFIG.plans.values():
        assert f"{plan.name}*: R$ {plan.price}" in reply
    assert chat.decided("enrollment")["stage"] == "ask_plan"
    assert chat.slice("mode")["mode"] == "oferta"  # asking to enroll is interest
    # A bare count answers the plan question; days and time may come apart.
    assert_said(chat.say("o de 2", after=MINUTE), "enrollment_ask_schedule", plano="2x por semana")
    assert_said(chat.say("terça e quinta", after=MINUTE), "enrollment_ask_time")
    assert_said(chat.say("às 7h", after=MINUTE), "enrollment_ask_payment", horario="às 07:00")
    reply = chat.say("no cartão", after=MINUTE)
    assert_said(reply, "enrollment_confirm", pagamento="cartão", dias="terça e quinta")
    # "não" asks what to change; a new value is read back for a yes again.
    assert_said(chat.say("não", after=MINUTE), "enrollment_change")
    assert_said(chat.say("pix", after=MINUTE), "enrollment_confirm", pagamento="Pix")
    assert of(system, chat.id) == []  # nothing is requested before the yes


def test_a_plan_and_questions_in_one_message_get_both_answers(system: System) -> None:
    chat = Chat(system, "enroll-faq", "2027-01-07T10:00:00-03:00")
    reply = chat.say("quero fechar o plano de 3x. vcs aceitam cartão? e onde fica a CT?")
    answered = chat.journal("faq.answered")[-1]
    assert {"pagamento", "endereco"} <= set(answered["entry_ids"])
    faq = {e["id"]: e["answer"] for e in PACK.sections["faq"]["entries"]}
    assert faq["endereco"].strip()[:40] in reply
    # The answers first, the enrollment's next question last; a question chooses nothing.
    assert_said(reply, "enrollment_ask_schedule", plano=THREE.name)
    assert reply.index(faq["endereco"].strip()[:40]) < reply.index(THREE.name)
    assert chat.slice("enrollment")["payment"] is None


def test_a_question_left_unanswered_twice_goes_to_staff_with_what_is_known(
    system: System,
) -> None:
    chat = Chat(system, "enroll-stuck", "2027-01-09T10:00:00-03:00")
    chat.say("quero me matricular no plano de 3x, terça e quinta às 18h")
    assert chat.slice("enrollment")["stage"] == "ask_payment"
    assert_said(chat.say("hmm", after=MINUTE), "enrollment_ask_payment")
    assert_said(chat.say("sei lá", after=MINUTE), "enrollment_handoff")
    meta = eventually(lambda: chat.slice("meta") if chat.slice("meta").get("handoff") else None)
    assert meta["handoff"] == "pending_human"
    [handed] = eventually(lambda: chat.journal("handoff.pending_human"))
    assert handed["reason"] == "enrollment"
    summary = said(handed["summary"], "enrollment_partial_summary", plano=THREE.name)
    assert summary is not None and summary["pagamento"] == "—"
    assert of(system, chat.id) == []  # nothing was requested


def test_erasing_the_person_unlinks_their_request_and_keeps_the_business_record(
    system: System,
) -> None:
    chat = Chat(system, "enroll-erase", "2027-01-10T10:00:00-03:00")
    chat.say("quero me matricular no plano de 2x, terça e quinta às 7h, pago no cartão")
    code = assert_said(chat.say("sim", after=MINUTE), "enrollment_requested")["codigo"]
    exported = system.http.get(f"/v1/conversations/{chat.id}/export")
    assert exported.status_code == 200
    assert [r["id"] for r in exported.json()["records"]["enrollment"]] == [code]

    erased = system.http.delete(f"/v1/conversations/{chat.id}")
    assert erased.status_code == 200, erased.text
    assert erased.json()["records_anonymized"] == {"enrollment": [code]}
    [kept] = [e for e in enrollments(system) if e["id"] == code]
    assert kept["conversation_id"] == "" and kept["plan"] == "2x por semana"
    assert chat.id not in json.dumps(enrollments(system))


def test_a_redelivered_request_turn_makes_one_request(
    system: System, redis_url: str, prefix: str
) -> None:
    bus = Bus(redis_url, prefix)
    chat = Chat(system, "enroll-again", "2027-01-08T10:00:00-03:00")
    chat.say("quero me matricular no plano de 3x, segunda, quarta e sexta às 19h, pago no pix")
    tasks = bus.keys.tasks("enrollment")
    with bus.subscribe(tasks) as seen_tasks, bus.subscribe(bus.keys.events) as events:
        code = assert_said(chat.say("sim", after=MINUTE), "enrollment_requested")["codigo"]
        task = seen_tasks.wait(lambda t: t["turn"]["turn_id"] == chat.last["turn_id"])
        first = events.event(chat.id, "enrollment.requested")

        async def redeliver() -> None:
            broker = RedisBroker(redis_url, logger=None)
            await broker.connect()
            for _ in range(2):
                await broker.publish(json.dumps(task).encode(), stream=tasks)
            await broker.stop()

        client = redis_sync.Redis.from_url(redis_url)
        try:
            asyncio.run(redeliver())
            # A delivery is acknowledged by the script that publishes what it decided: once
            # every redelivery is, anything they published is on the stream.
            eventually(lambda: drained(client, tasks, "enrollment"))
        finally:
            client.close()
        again = requested(events.read_all(), chat.id)
    # The request went out with the task's commit, which its part marks: a redelivery finds
    # the turn committed and publishes nothing again (replays of it would be tolerated).
    assert {e["event_id"] for e in again} == {first["event_id"]}
    [request] = of(system, chat.id)
    assert request["id"] == code and request["days"] == ["segunda", "quarta", "sexta"]
    assert len(chat.journal("enrollment.decided")) == 2


def test_the_enrollment_list_is_for_staff_only(redis_url: str, unique_prefix: str) -> None:
    with lone_gateway(redis_url, unique_prefix, ORQ_ADMIN_TOKEN=ADMIN, ORQ_API_TOKEN=API) as (
        http,
        _,
    ):
        assert http.get("/v1/enrollments").status_code == 401
        assert http.get("/v1/enrollments", headers=bearer(API)).status_code == 401
        listed = http.get("/v1/enrollments", headers=bearer(ADMIN))
        assert listed.status_code == 200 and listed.json() == {"enrollments": []}
        refused = http.get("/v1/enrollments", params={"status": "paid"}, headers=bearer(ADMIN))
        assert refused.status_code == 422
