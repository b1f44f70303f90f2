"""The Chatwoot Agent Bot channel end to end: real processes (``orquestra up``), the real gateway
over HTTP, and a fake Chatwoot that records every request the bot makes.

A booking dialog runs through ``POST /webhooks/chatwoot`` and the messages API; a delivery
repeated is one turn and one reply; an unsigned or badly signed webhook is refused and stores
nothing; an agent's message silences the bot until the conversation is ``pending`` again; the
bot's handoff moves the conversation to ``open``; the webhook is answered while its turn is
still being processed (shown by the order of events, not by durations).
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import redis as redis_sync

from tests.e2e.journey import assert_said, eventually
from tests.support.fake_chatwoot import FakeChatwoot, from_agent, incoming, sign, status_changed
from tests.support.fake_http import Step
from tests.system import System

TOKEN = "cw-bot-token-" + uuid.uuid4().hex
SECRET = "cw-webhook-secret-" + uuid.uuid4().hex
ACCOUNT = 7
PATH = "/webhooks/chatwoot"
TUESDAY_MORNING = datetime.fromisoformat("2026-02-03T10:00:00-03:00")
MINUTE = timedelta(minutes=1)
ALL_TIMES = "07:00, 18:00, 19:00 e 20:00"
IDS = itertools.count(int(uuid.uuid4().int % 10**6) * 1000)


@dataclass
class Env:
    system: System
    chatwoot: FakeChatwoot
    redis: redis_sync.Redis
    prefix: str

    def post(
        self, body: dict[str, Any], *, delivery: str | None = None, secret: str | None = SECRET
    ) -> httpx.Response:
        raw = json.dumps(body).encode()
        headers = {"content-type": "application/json"}
        if secret is not None:
            headers.update(sign(raw, secret))
        if delivery is not None:
            headers["x-chatwoot-delivery"] = delivery
        return self.system.http.post(PATH, content=raw, headers=headers)

    def events(self, conv: str, name: str) -> list[dict[str, Any]]:
        response = self.system.http.get(f"/v1/conversations/{conv}/journal")
        if response.status_code == 404:
            return []
        response.raise_for_status()
        return [e for e in response.json()["entries"] if e["event"] == name]


@pytest.fixture(scope="module")
def env(redis_url: str) -> Iterator[Env]:
    prefix = f"orqtest-cw-{uuid.uuid4().hex[:8]}:"
    with FakeChatwoot.running(TOKEN) as chatwoot:
        settings = {
            "CHATWOOT_URL": chatwoot.base_url,
            "CHATWOOT_BOT_TOKEN": TOKEN,
            "CHATWOOT_WEBHOOK_SECRET": SECRET,
            "CHATWOOT_RETRY_BASE_MS": "20",
            "CHATWOOT_RETRY_MAX_MS": "200",
        }
        client = redis_sync.Redis.from_url(redis_url, decode_responses=True)
        try:
            with System.up(redis_url, prefix, **settings) as system:
                yield Env(system, chatwoot, client, prefix)
        finally:
            for key in client.scan_iter(match=f"{prefix}*", count=1000):
                client.delete(key)
            client.close()


@dataclass
class Conversation:
    """One customer's conversation in the bot's Chatwoot inbox, on business time."""

    env: Env
    id: int = field(default_factory=lambda: next(IDS))
    now: datetime = TUESDAY_MORNING
    status: str = "pending"
    replies: int = 0

    @property
    def conv(self) -> str:
        return f"cw:{ACCOUNT}:{self.id}"

    def post(self, text: str, *, delivery: str | None = None) -> httpx.Response:
        body = incoming(ACCOUNT, self.id, next(IDS), text, self.now, status=self.status)
        response = self.env.post(body, delivery=delivery or uuid.uuid4().hex)
        assert response.status_code == 200, response.text
        return response

    def say(self, text: str, *, after: timedelta = timedelta(0)) -> str:
        """Send ``text``; the reply (every message the bot posted for it)."""
        self.now += after
        before = len(self.env.chatwoot.posts(ACCOUNT, self.id))
        self.post(text)
        self.replies += 1
        eventually(
            lambda: len(self.env.events(self.conv, "reply.delivered")) >= self.replies,
            what=f"reply {self.replies} in {self.conv}",
        )
        posts = self.env.chatwoot.posts(ACCOUNT, self.id)[before:]
        return "\n\n".join(str(p.body["content"]) for p in posts)


def test_a_booking_dialog_end_to_end_through_chatwoot(env: Env) -> None:
    chat = Conversation(env)
    reply = chat.say("Oi! Quero agendar uma aula experimental. Me chamo João, 27 anos, iniciante")
    assert_said(reply, "trial_ask_date", nome="João", horarios=ALL_TIMES, proxima="terça, 03/02")
    reply = chat.say("Quero na terça dia 10 de fevereiro", after=MINUTE)
    assert_said(reply, "trial_missing_time", data="terça, 10/02", horarios=ALL_TIMES)
    reply = chat.say("19:00", after=MINUTE)
    assert_said(reply, "trial_ask_confirmation", data="terça, 10/02", hora="19:00")
    reply = chat.say("sim", after=MINUTE)
    assert_said(reply, "trial_booked", nome="João", data="terça, 10/02", hora="19:00")
    assert env.system.conversation(chat.conv)["trial"]["stage"] == "booked"
    posts = env.chatwoot.posts(ACCOUNT, chat.id)
    assert all(p.headers["api_access_token"] == TOKEN for p in posts)
    assert all(p.body["message_type"] == "outgoing" and p.body["content"] for p in posts)
    # The bot's own messages come back as webhooks: ignored, the conversation stays the bot's.
    echo = from_agent(ACCOUNT, chat.id, next(IDS), "x", chat.now, "orquestra")
    echo["sender"] = {"id": 3, "name": "orquestra", "avatar_url": "", "type": "agent_bot"}
    assert env.post(echo).json()["ours"] == 1
    assert not env.events(chat.conv, "chatwoot.ignored")
    assert env.system.conversation(chat.conv)["meta"]["handoff"] == "bot"


def test_a_repeated_delivery_is_one_turn_and_one_reply(env: Env) -> None:
    chat = Conversation(env)
    body = incoming(ACCOUNT, chat.id, next(IDS), "onde fica a CT?", chat.now, status="pending")
    delivery = uuid.uuid4().hex
    assert env.post(body, delivery=delivery).json()["messages"] == 1
    assert env.post(body, delivery=delivery).json() == {"duplicate": 1}
    # The same message again under another delivery id (or none): the message id dedupes it.
    assert env.post(body).json()["duplicates"] == 1
    eventually(lambda: env.events(chat.conv, "reply.delivered"), what="the reply")
    chat.replies = 1
    chat.say("e qual o horário?", after=MINUTE)
    started = env.events(chat.conv, "turn.started")
    assert [t["messages"] for t in started] == [["onde fica a CT?"], ["e qual o horário?"]]
    delivered = env.events(chat.conv, "reply.delivered")
    assert len(env.chatwoot.posts(ACCOUNT, chat.id)) == sum(d["bubbles"] for d in delivered)


@pytest.mark.parametrize("secret", [None, "another-secret"], ids=["unsigned", "other-secret"])
def test_a_webhook_without_the_signature_is_refused_and_stores_nothing(
    env: Env, secret: str | None
) -> None:
    chat = Conversation(env)
    body = incoming(ACCOUNT, chat.id, next(IDS), "oi", chat.now, status="pending")
    assert env.post(body, secret=secret).status_code == 401
    raw = json.dumps(body).encode()
    stale = sign(raw, SECRET, timestamp=int(chat.now.timestamp()))  # a replay of long ago
    response = env.system.http.post(PATH, content=raw, headers=stale)
    assert response.status_code == 401
    assert env.system.http.get(f"/v1/conversations/{chat.conv}/journal").status_code == 404
    assert not list(env.redis.scan_iter(match=f"{env.prefix}*{chat.conv}*"))


def test_an_agent_takes_over_and_the_bot_is_silent_until_pending_again(env: Env) -> None:
    chat = Conversation(env)
    chat.say("oi, vocês abrem sábado?")
    # An agent answers in Chatwoot: a person owns the conversation.
    said = from_agent(
        ACCOUNT, chat.id, next(IDS), "Oi! Aqui é a Ana, da recepção.", chat.now, "Ana"
    )
    assert env.post(said).json()["agents"] == 1
    meta = env.system.conversation(chat.conv)["meta"]
    assert (meta["handoff"], meta["handoff_by"]) == ("human", "chatwoot:Ana")
    posted = len(env.chatwoot.posts(ACCOUNT, chat.id))
    chat.status = "open"
    chat.now += MINUTE
    chat.post("ah que bom, obrigado")
    assert [h["text"] for h in env.events(chat.conv, "message.held_for_human")] == [
        "ah que bom, obrigado"
    ]
    # The team gives it back (pending); the bot answers the next message.
    assert env.post(status_changed(ACCOUNT, chat.id, "pending")).json()["ownership"] == 1
    chat.status = "pending"
    assert chat.say("quanto custa a aula experimental?", after=MINUTE)
    delivered = env.events(chat.conv, "reply.delivered")
    assert len(env.chatwoot.posts(ACCOUNT, chat.id)) == posted + delivered[-1]["bubbles"]
    history = env.system.http.get(f"/v1/conversations/{chat.conv}/messages").json()["messages"]
    texts = [(m["author"], m["text"]) for m in history]
    assert ("agent", "Oi! Aqui é a Ana, da recepção.") in texts
    assert ("customer", "ah que bom, obrigado") in texts


def test_the_conversation_opened_in_chatwoot_is_a_persons(env: Env) -> None:
    chat = Conversation(env)
    chat.say("oi")
    assert env.post(status_changed(ACCOUNT, chat.id, "open")).json()["ownership"] == 1
    assert env.system.conversation(chat.conv)["meta"]["handoff"] == "human"


def test_the_bots_handoff_moves_the_conversation_to_open(env: Env) -> None:
    chat = Conversation(env)
    chat.say("oi, quero falar com um atendente por favor")
    eventually(
        lambda: env.system.conversation(chat.conv)["meta"]["handoff"] == "pending_human",
        what="pending_human",
    )
    env.chatwoot.wait_for(lambda _: bool(env.chatwoot.toggles(ACCOUNT, chat.id)))
    [toggle] = env.chatwoot.toggles(ACCOUNT, chat.id)
    assert toggle.body == {"status": "open"} and toggle.headers["api_access_token"] == TOKEN
    toggled = eventually(lambda: env.events(chat.conv, "chatwoot.toggled"), what="toggled")
    assert toggled[0]["outcome"] == "sent"
    # Chatwoot then tells the bot the conversation is open: a person's from now on.
    env.post(status_changed(ACCOUNT, chat.id, "open"))
    assert env.system.conversation(chat.conv)["meta"]["handoff"] == "human"


def test_the_webhook_is_answered_while_its_turn_is_still_processed(env: Env) -> None:
    """Chatwoot gives a bot 5 s. The bot's reply is held at the fake Chatwoot, so its turn
    cannot end: the webhook's answer came before, and the journal shows the turn going on."""
    chat = Conversation(env)
    release = threading.Event()
    env.chatwoot.script(
        f"/api/v1/accounts/{ACCOUNT}/conversations/{chat.id}/messages", Step(hold=release)
    )
    try:
        answered = chat.post("qual o endereço de vocês?")  # returns: the webhook was answered
        assert answered.json()["messages"] == 1
        env.chatwoot.wait_for(lambda _: bool(env.chatwoot.posts(ACCOUNT, chat.id)))
        names = [e["event"] for e in env.system.journal(chat.conv)]
        assert "turn.started" in names and "reply.delivered" not in names
    finally:
        release.set()
    eventually(lambda: env.events(chat.conv, "reply.delivered"), what="the reply")
    names = [e["event"] for e in env.system.journal(chat.conv)]
    assert names.index("turn.started") < names.index("reply.delivered")


def test_a_429_of_chatwoot_is_retried_and_the_reply_sent_once(env: Env) -> None:
    chat = Conversation(env)
    path = f"/api/v1/accounts/{ACCOUNT}/conversations/{chat.id}/messages"
    env.chatwoot.script(path, Step(429, {"error": "Too many requests"}), Step(502, {}))
    chat.say("oi, tudo bem?")
    [delivered] = env.events(chat.conv, "reply.delivered")
    assert delivered["status"] == "sent"
    assert len(env.chatwoot.posts(ACCOUNT, chat.id)) == delivered["bubbles"] + 2
