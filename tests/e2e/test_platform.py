"""The whole system as real processes (``orquestra up``), driven through the HTTP API."""

from __future__ import annotations

import uuid

import httpx

from orquestra.redis_server import free_port
from services.registry import SERVICES, SLICES
from tests.system import System, service


def conv() -> str:
    return f"e2e-{uuid.uuid4().hex[:10]}"


def events(journal: list[dict], name: str) -> list[dict]:
    return [e for e in journal if e["event"] == name]


def test_message_in_reply_out_composed_from_both_specialists(system: System) -> None:
    cid = conv()
    reply = system.say(cid, "quero agendar e onde fica a CT?")
    assert reply["bubbles"] and reply["text"] == "\n\n".join(reply["bubbles"])
    journal = system.journal(cid)
    merged = events(journal, "merge.complete")
    assert len(merged) == 1 and set(merged[0]["sources"]) >= {"trial", "faq"}
    assert [e["status"] for e in events(journal, "reply.delivered")] == ["sent"]
    state = system.conversation(cid)
    assert state["meta"]["turn_seq"] == 1 and state["meta"]["channel"] == "http"
    assert state["trial"]["stage"]
    assert set(state) == {"conversation_id", *SLICES}
    assert set(SLICES) >= {"meta", "triage", "trial", "context", "mode"}


def test_duplicate_message_id_is_acknowledged_and_processed_once(system: System) -> None:
    cid = conv()
    first = system.post(cid, "oi", message_id="wamid-1")
    assert first.json() == {"accepted": True, "duplicate": False}
    reply = system.next_reply(cid)
    again = system.post(cid, "oi", message_id="wamid-1")
    assert again.status_code == 202 and again.json() == {"accepted": True, "duplicate": True}
    system.post(cid, "onde fica a CT?", message_id="wamid-2")
    system.next_reply(cid, after=reply["cursor"])
    started = events(system.journal(cid), "turn.started")
    assert [e["message_ids"] for e in started] == [["wamid-1"], ["wamid-2"]]


def test_burst_of_messages_becomes_one_turn(system: System) -> None:
    cid = conv()
    for text in ("oi", "quero agendar", "pra terça"):
        assert system.post(cid, text).status_code == 202
    system.next_reply(cid)
    started = events(system.journal(cid), "turn.started")
    assert len(started) == 1
    assert started[0]["messages"] == ["oi", "quero agendar", "pra terça"]


def test_message_during_a_turn_waits_for_the_next_turn(system: System) -> None:
    cid = conv()
    system.post(cid, "quero agendar")
    first = system.next_reply(cid)
    system.post(cid, "onde fica?")
    second = system.next_reply(cid, after=first["cursor"])
    assert second["turn_id"] != first["turn_id"]
    seqs = [e["seq"] for e in events(system.journal(cid), "turn.started")]
    assert seqs == [1, 2]


def test_sent_at_drives_business_time(system: System) -> None:
    cid = conv()
    system.say(cid, "oi", sent_at="2026-02-10T18:00:00-03:00")
    started = events(system.journal(cid), "turn.started")[0]
    assert started["now"] == "2026-02-10T18:00:00-03:00"
    meta = system.conversation(cid)["meta"]
    assert meta["window_expires_at"] is None  # the HTTP channel has no reply window


def test_bad_input_gets_a_clear_422(system: System) -> None:
    http = system.http
    cases = [
        {"conversation_id": "x"},
        {"conversation_id": "x", "text": ""},
        {"conversation_id": "x", "text": "   "},
        {"conversation_id": "", "text": "oi"},
        {"conversation_id": "has space", "text": "oi"},
        {"conversation_id": "x", "text": "oi", "sent_at": "ontem"},
        {"conversation_id": "x", "text": "a" * 4097},
    ]
    for body in cases:
        response = http.post("/v1/messages", json=body)
        assert response.status_code == 422, body
        assert response.json()["detail"], body
    not_json = http.post(
        "/v1/messages", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 422


def test_an_unknown_conversation_is_404_and_has_no_replies(system: System) -> None:
    """As for an erased one (issue 17): the state and journal routes say it is unknown; the
    replies long-poll (which a chat page opens before its first message) is simply empty."""
    cid = conv()
    assert system.replies(cid) == {"replies": [], "cursor": "0-0"}
    assert system.http.get(f"/v1/conversations/{cid}").status_code == 404
    assert system.http.get(f"/v1/conversations/{cid}/journal").status_code == 404


def test_health_and_metrics(system: System) -> None:
    health = system.http.get("/healthz")
    assert health.status_code == 200
    assert health.json()["missing"] == []
    metrics = system.http.get("/metrics")
    assert metrics.status_code == 200 and "orq_inbound_total" in metrics.text


def test_embedded_redis_when_none_is_reachable(prefix: str) -> None:
    """A fresh machine: REDIS_URL points nowhere, so `orquestra up` brings its own Redis."""
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    with System.up(nowhere, prefix) as running:
        assert running.watcher.wait_for("started embedded Redis", 1)
        reply = running.say("fresh-machine", "oi")
        assert reply["text"]
    assert running.process.returncode == 0


def test_health_names_missing_services(redis_url: str, unique_prefix: str) -> None:
    """With only the gateway running, /healthz is 503 and names every missing worker."""
    port = free_port()
    with service("gateway", redis_url, unique_prefix, "--port", str(port)):
        response = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5)
    assert response.status_code == 503
    # Every registered worker (the six of the first release and any added since).
    workers = {s for s in SERVICES if s != "gateway"}
    assert workers >= {"triage", "trial", "faq", "mode_router", "merger", "scheduler"}
    assert set(response.json()["missing"]) == workers
