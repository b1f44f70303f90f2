"""A staff message is never sent twice: the gateway is killed (-9) while the Graph API holds
the send's response, so nobody knows whether WhatsApp got it. The restarted gateway takes the
message again and, instead of sending it a second time, records the delivery as unknown."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from services.gateway.whatsapp.parse import conversation_id
from tests.load import children
from tests.support.fake_graph import FakeGraph, Step, message_webhook
from tests.system import System

TOKEN = "crash-access-token"
NUMBER = "1065403522"


@pytest.fixture
def crashable(redis_url: str, unique_prefix: str) -> Iterator[tuple[System, FakeGraph]]:
    with (
        FakeGraph.running(TOKEN) as graph,
        System.up(
            redis_url,
            unique_prefix,
            WHATSAPP_ACCESS_TOKEN=TOKEN,
            WHATSAPP_GRAPH_BASE_URL=graph.base_url,
            WHATSAPP_TIMEOUT_S="2",
            WHATSAPP_RETRY_MAX_MS="300",
            # Taken again every second, and not dead-lettered while the dead sender's claim
            # (WHATSAPP_TIMEOUT_S + WHATSAPP_RETRY_MAX_MS + 10 s) has not expired.
            ORQ_RECLAIM_IDLE_MS="1000",
            ORQ_MAX_ATTEMPTS="40",
        ) as system,
    ):
        yield system, graph


def journal_event(system: System, conv: str, name: str, timeout_s: float = 60) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            found = [e for e in system.journal(conv) if e["event"] == name]
        except Exception:  # the gateway is restarting: the next look will answer
            found = []
        if found:
            return found[-1]
        system.watcher.wait_for(name, 0.5)  # a bounded wait between looks
    raise AssertionError(f"no {name} in {conv}\n{system.watcher.tail()}")


def test_a_staff_message_is_not_sent_twice_when_the_gateway_dies_mid_send(
    crashable: tuple[System, FakeGraph],
) -> None:
    system, graph = crashable
    sender = f"55119{uuid.uuid4().int % 10**8:08d}"
    conv = conversation_id(NUMBER, sender)
    webhook = message_webhook(NUMBER, sender, f"wamid.IN{uuid.uuid4().hex[:10]}", int(time.time()))
    assert system.http.post("/webhooks/whatsapp", json=webhook).status_code == 200
    journal_event(system, conv, "reply.delivered")

    release = threading.Event()
    accepted = {"messaging_product": "whatsapp", "messages": [{"id": "wamid.AGENT1"}]}
    graph.script(NUMBER, sender, Step(body=accepted, hold=release))
    text = "Oi, aqui é a Maria da recepção!"
    posted = system.http.post(
        f"/v1/conversations/{conv}/agent-messages", json={"agent": "maria", "text": text}
    )
    assert posted.status_code == 202, posted.text
    graph.wait_for(lambda reqs: any(r.body.get("text", {}).get("body") == text for r in reqs), 20)

    gateway = children(system.process.pid)["gateway"][0]
    os.kill(gateway, signal.SIGKILL)
    release.set()

    delivered = journal_event(system, conv, "agent.delivered", timeout_s=90)
    assert delivered["status"] == "unknown"
    sent = [r for r in graph.to(sender, "text") if r.body["text"]["body"] == text]
    assert len(sent) == 1, "the message reached the Graph API exactly once"
