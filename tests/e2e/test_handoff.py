"""Human handoff as an ownership state: bot → pending_human → human → bot (issue 8)."""

from __future__ import annotations

import json
import queue
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tests.e2e.journey import eventually
from tests.system import System

TOKEN = "s3cret-admin"


class Webhook:
    """A local HTTP endpoint that records what the gateway notifies."""

    def __init__(self) -> None:
        self.received: queue.Queue[dict] = queue.Queue()
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["content-length"])
                received.put(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/handoff"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture(scope="module")
def webhook() -> Iterator[Webhook]:
    hook = Webhook()
    yield hook
    hook.server.shutdown()


@pytest.fixture(scope="module")
def guarded(redis_url: str, prefix: str, webhook: Webhook) -> Iterator[System]:
    """The bot with an admin token and a handoff webhook."""
    with System.up(
        redis_url,
        f"{prefix}handoff:",
        ORQ_ADMIN_TOKEN=TOKEN,
        ORQ_HANDOFF_WEBHOOK_URL=webhook.url,
    ) as system:
        system.http.headers["authorization"] = f"Bearer {TOKEN}"
        yield system


def events(system: System, cid: str) -> list[str]:
    return [e["event"] for e in system.journal(cid)]


def test_admin_routes_require_the_token(guarded: System) -> None:
    anonymous = {"authorization": ""}
    for path in ("/v1/conversations/x", "/v1/conversations/x/journal"):
        assert guarded.http.get(path, headers=anonymous).status_code == 401
    wrong = {"authorization": "Bearer nope"}
    response = guarded.http.post(
        "/v1/conversations/x/handoff", json={"owner": "human"}, headers=wrong
    )
    assert response.status_code == 401
    # With the token the route is reached: an id nothing is stored about is unknown.
    assert guarded.http.get("/v1/conversations/x").status_code == 404


def test_asking_for_a_person_notifies_and_a_human_silences_the_bot(
    guarded: System, webhook: Webhook
) -> None:
    cid = f"handoff-{uuid.uuid4().hex[:8]}"
    first = guarded.say(cid, "oi, quero falar com um atendente por favor")
    assert guarded.conversation(cid)["meta"]["handoff"] == "pending_human"
    notified = webhook.received.get(timeout=20)
    assert notified["conversation_id"] == cid
    assert "atendente" in " ".join(notified["summary"]["last_messages"])

    taken = guarded.http.post(
        f"/v1/conversations/{cid}/handoff", json={"owner": "human", "agent": "maria"}
    )
    assert taken.status_code == 200 and taken.json()["meta"]["handoff"] == "human"

    assert guarded.post(cid, "alguém aí?").json() == {"accepted": True, "duplicate": False}
    journal = guarded.journal(cid)
    held = [e for e in journal if e["event"] == "message.held_for_human"]
    assert [e["text"] for e in held] == ["alguém aí?"]
    assert guarded.replies(cid, after=first["cursor"])["replies"] == []

    back = guarded.http.post(f"/v1/conversations/{cid}/handoff", json={"owner": "bot"})
    assert back.json()["meta"]["handoff"] == "bot"
    reply = guarded.say(cid, "onde fica a CT?", after=first["cursor"])
    assert reply["text"]
    names = events(guarded, cid)
    assert names.index("handoff.human") < names.index("handoff.bot")
    started = [e for e in guarded.journal(cid) if e["event"] == "turn.started"]
    assert [e["messages"] for e in started][-1] == ["onde fica a CT?"]


def test_an_answer_after_the_bots_own_handoff_gives_the_conversation_back(
    guarded: System, webhook: Webhook
) -> None:
    # Issue 29: after the bot handed over (two answers it could read nothing from), the
    # person's next answer goes on with the booking, and the staff queue lets the conversation go.
    cid = f"withdrawn-{uuid.uuid4().hex[:8]}"
    said = guarded.say(cid, "quero agendar uma aula experimental, 41 anos, intermediária")
    said = guarded.say(cid, "hmm", after=said["cursor"])
    said = guarded.say(cid, "sei la", after=said["cursor"])
    assert guarded.conversation(cid)["trial"]["stage"] == "handoff_requested"
    assert guarded.conversation(cid)["meta"]["handoff"] == "pending_human"
    assert webhook.received.get(timeout=20)["conversation_id"] == cid
    resumed = guarded.say(cid, "me chamo Bruna", after=said["cursor"])
    assert "Bruna" in resumed["text"]
    assert guarded.conversation(cid)["trial"]["nome"] == "Bruna"
    eventually(
        lambda: guarded.conversation(cid)["meta"]["handoff"] == "bot",
        what="conversation back to the bot",
    )
    assert "handoff.bot" in events(guarded, cid)


@pytest.fixture(scope="module")
def hurried(redis_url: str, prefix: str) -> Iterator[tuple[System, Webhook]]:
    """Slack-format notifications, a reminder after ~1 s and idle staff after ~2 s (wall clock)."""
    hook = Webhook()
    with System.up(
        redis_url,
        f"{prefix}hurried:",
        ORQ_HANDOFF_WEBHOOK_URL=hook.url,
        ORQ_HANDOFF_WEBHOOK_FORMAT="slack",
        ORQ_HANDOFF_REMIND_MIN="0.02",
        ORQ_HUMAN_IDLE_MIN="0.04",
        ORQ_SWEEP_INTERVAL_MS="200",
    ) as system:
        yield system, hook
    hook.server.shutdown()


def test_slack_notification_then_one_reminder(hurried: tuple[System, Webhook]) -> None:
    system, hook = hurried
    cid = f"hurried-{uuid.uuid4().hex[:8]}"
    opened = system.say(cid, "oi, me chamo Joana e quero agendar uma aula experimental")
    system.say(cid, "quero falar com um atendente", after=opened["cursor"])
    first = hook.received.get(timeout=20)
    assert set(first) == {"text"}, "Slack and Discord webhooks take a text"
    assert cid in first["text"] and "Joana" in first["text"]
    reminder = hook.received.get(timeout=20)
    assert cid in reminder["text"] and reminder["text"] != first["text"]
    with pytest.raises(queue.Empty):
        hook.received.get(timeout=1.5)  # once, not every sweep
    notified = [e for e in system.journal(cid) if e["event"] == "handoff.notified"]
    assert [e["reminder"] for e in notified] == [False, True]


def test_an_idle_human_conversation_goes_back_to_the_bot(hurried: tuple[System, Webhook]) -> None:
    system, _ = hurried
    cid = f"idle-{uuid.uuid4().hex[:8]}"
    first = system.say(cid, "onde fica a CT?")
    taken = system.http.post(
        f"/v1/conversations/{cid}/handoff", json={"owner": "human", "agent": "maria"}
    )
    assert taken.json()["meta"]["handoff"] == "human"
    deadline = 20.0
    while system.conversation(cid)["meta"]["handoff"] != "bot":
        assert deadline > 0, "an idle human conversation must go back to the bot"
        system.replies(cid, after=first["cursor"], wait=0.5)  # a bounded wait between looks
        deadline -= 0.5
    back = [e for e in system.journal(cid) if e["event"] == "handoff.bot"]
    assert back and back[-1]["by"] == "idle"
    assert system.say(cid, "tem estacionamento?", after=first["cursor"])["text"]
