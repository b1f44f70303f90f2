"""The Evolution API channel end to end: real processes (``orquestra up``), the real gateway over
HTTP, and a fake Evolution server that records every request.

A booking dialog runs through ``POST /webhooks/evolution`` and ``sendText``; a webhook delivered
twice is one turn and one reply; a webhook without the secret is refused and stores nothing; a
person typing on the business phone silences the bot until staff hand the conversation back,
while the echo of the bot's own message does not; a 500 of Evolution is retried, a 400 is not.
Replies are checked against the pack's texts, never copied.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import redis as redis_sync

from tests.e2e.journey import assert_said, eventually
from tests.support.fake_evolution import CORPUS, FakeEvolution, evolution_jwt, upsert
from tests.support.fake_http import Step
from tests.system import System

API_KEY = "evo-api-key-" + uuid.uuid4().hex
SECRET = "evo-webhook-secret-" + uuid.uuid4().hex
INSTANCE = "ctsmash-recepcao"
PATH = "/webhooks/evolution"
TUESDAY_MORNING = datetime.fromisoformat("2026-02-03T10:00:00-03:00")
MINUTE = timedelta(minutes=1)
ALL_TIMES = "07:00, 18:00, 19:00 e 20:00"


@dataclass
class Env:
    system: System
    evolution: FakeEvolution
    redis: redis_sync.Redis
    prefix: str

    def post(self, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
        given = {"authorization": f"Bearer {evolution_jwt(SECRET)}"} if headers is None else headers
        return self.system.http.post(PATH, json=body, headers=given)

    def events(self, conv: str, name: str) -> list[dict[str, Any]]:
        response = self.system.http.get(f"/v1/conversations/{conv}/journal")
        if response.status_code == 404:
            return []
        response.raise_for_status()
        return [e for e in response.json()["entries"] if e["event"] == name]


@pytest.fixture(scope="module")
def env(redis_url: str) -> Iterator[Env]:
    prefix = f"orqtest-evo-{uuid.uuid4().hex[:8]}:"
    with FakeEvolution.running(API_KEY) as evolution:
        settings = {
            "EVOLUTION_URL": evolution.base_url,
            "EVOLUTION_API_KEY": API_KEY,
            "EVOLUTION_INSTANCE": INSTANCE,
            "EVOLUTION_WEBHOOK_SECRET": SECRET,
            "EVOLUTION_RETRY_BASE_MS": "20",
            "EVOLUTION_RETRY_MAX_MS": "200",
        }
        client = redis_sync.Redis.from_url(redis_url, decode_responses=True)
        try:
            with System.up(redis_url, prefix, **settings) as system:
                yield Env(system, evolution, client, prefix)
        finally:
            for key in client.scan_iter(match=f"{prefix}*", count=1000):
                client.delete(key)
            client.close()


def fresh_number() -> str:
    """A Brazilian mobile number in its old eight-digit form (55 11 8xxxxxxx)."""
    return f"55118{uuid.uuid4().int % 10**7:07d}"


def with_ninth_digit(number: str) -> str:
    return number[:4] + "9" + number[4:]


@dataclass
class Phone:
    """One customer writing to the business's Evolution instance, on business time."""

    env: Env
    number: str = field(default_factory=fresh_number)
    now: datetime = TUESDAY_MORNING
    replies: int = 0

    @property
    def canonical(self) -> str:
        return with_ninth_digit(self.number)

    @property
    def conv(self) -> str:
        return f"evo:{INSTANCE}:{self.canonical}"

    def post(
        self, text: str, *, as_number: str | None = None, message_id: str | None = None
    ) -> str:
        """Post one message; its id."""
        message_id = message_id or f"3EB0{uuid.uuid4().hex[:16].upper()}"
        body = upsert(
            INSTANCE, as_number or self.number, message_id, text, int(self.now.timestamp())
        )
        response = self.env.post(body)
        assert response.status_code == 200, response.text
        return message_id

    def say(self, text: str, *, after: timedelta = timedelta(0), **kwargs: Any) -> str:
        """Send ``text`` and return the reply's text (every bubble Evolution was asked to send)."""
        self.now += after
        before = len(self.env.evolution.sends(self.canonical))
        self.post(text, **kwargs)
        self.replies += 1
        delivered = eventually(
            lambda: len(self.env.events(self.conv, "reply.delivered")) >= self.replies or None,
            what=f"reply {self.replies} in {self.conv}",
        )
        assert delivered
        sends = self.env.evolution.sends(self.canonical)[before:]
        return "\n\n".join(str(s.body["text"]) for s in sends)


def test_a_booking_dialog_end_to_end_through_evolution(env: Env) -> None:
    phone = Phone(env)
    # The first message comes in the old eight-digit form, the others with the ninth digit:
    # one customer, one conversation.
    reply = phone.say("Oi! Quero agendar uma aula experimental. Me chamo João, 27 anos, iniciante")
    assert_said(reply, "trial_ask_date", nome="João", horarios=ALL_TIMES, proxima="terça, 03/02")
    reply = phone.say("Quero na terça dia 10 de fevereiro", after=MINUTE, as_number=phone.canonical)
    assert_said(reply, "trial_missing_time", data="terça, 10/02", horarios=ALL_TIMES)
    reply = phone.say("19:00", after=MINUTE, as_number=phone.canonical)
    assert_said(reply, "trial_ask_confirmation", data="terça, 10/02", hora="19:00")
    reply = phone.say("sim", after=MINUTE)
    assert_said(reply, "trial_booked", nome="João", data="terça, 10/02", hora="19:00")
    state = env.system.conversation(phone.conv)
    assert state["trial"]["stage"] == "booked"
    assert state["meta"]["channel"] == "evolution" and state["meta"]["contact"] == phone.canonical
    sends = env.evolution.sends(phone.canonical)
    assert {s.path for s in sends} == {f"/message/sendText/{INSTANCE}"}
    assert all(s.headers["apikey"] == API_KEY for s in sends)
    assert all(set(s.body) == {"number", "text"} for s in sends)


def test_a_webhook_delivered_twice_is_one_turn_and_one_reply(env: Env) -> None:
    phone = Phone(env)
    body = upsert(
        INSTANCE, phone.number, "3EB0DUPLICATE" + uuid.uuid4().hex[:8], "oi", int(time.time())
    )
    first, again = env.post(body), env.post(body)
    assert first.json()["messages"] == 1
    assert again.json() == {"messages": 0, "duplicates": 1, "echoes": 0, "ours": 0, "ignored": 0}
    eventually(lambda: env.events(phone.conv, "reply.delivered"), what="the reply")
    phone.replies = 1
    phone.say("quanto custa a aula?", after=MINUTE)  # the next turn: nothing else came between
    started = env.events(phone.conv, "turn.started")
    assert [t["messages"] for t in started] == [["oi"], ["quanto custa a aula?"]]
    delivered = env.events(phone.conv, "reply.delivered")
    assert len(delivered) == 2
    bubbles = sum(d["bubbles"] for d in delivered)
    assert len(env.evolution.sends(phone.canonical)) == bubbles


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"x-webhook-token": "not-the-secret"},
        {"authorization": "Bearer " + evolution_jwt("another-secret-0123456789abcdef0123")},
        {"authorization": "Bearer not-a-jwt"},
        {"apikey": API_KEY},  # the instance's API key is no proof: Evolution puts it in bodies
    ],
    ids=["none", "wrong-token", "other-secret", "garbage", "apikey"],
)
def test_a_webhook_without_the_secret_is_refused_and_stores_nothing(
    env: Env, headers: dict[str, str]
) -> None:
    phone = Phone(env)
    message_id = "3EB0UNSIGNED" + uuid.uuid4().hex[:8]
    body = upsert(INSTANCE, phone.number, message_id, "oi", int(time.time()))
    assert env.post(body, headers).status_code == 401
    assert env.system.http.get(f"/v1/conversations/{phone.conv}/journal").status_code == 404
    assert not env.redis.exists(f"{env.prefix}dedupe:{{{phone.conv}}}:{message_id}")
    assert not list(env.redis.scan_iter(match=f"{env.prefix}*{phone.conv}*"))


def test_the_plain_token_header_is_accepted_too(env: Env) -> None:
    phone = Phone(env)
    body = upsert(
        INSTANCE, phone.number, "3EB0TOKEN" + uuid.uuid4().hex[:8], "oi", int(time.time())
    )
    response = env.post(body, {"x-webhook-token": SECRET})
    assert response.status_code == 200 and response.json()["messages"] == 1


def test_a_person_on_the_business_phone_silences_the_bot_until_handed_back(env: Env) -> None:
    phone = Phone(env)
    phone.say("oi, vocês abrem sábado?")
    # The echo of the bot's own message (the id sendText returned) changes nothing.
    [delivered] = env.events(phone.conv, "reply.delivered")
    ours_id = delivered["detail"].split()[-1]
    ours_text = str(env.evolution.sends(phone.canonical)[-1].body["text"])
    echo = upsert(INSTANCE, phone.canonical, ours_id, ours_text, int(time.time()), from_me=True)
    assert env.post(echo).json()["ours"] == 1
    assert env.system.conversation(phone.conv)["meta"]["handoff"] == "bot"
    # A person types on the phone: they own the conversation.
    typed_id = "3A" + uuid.uuid4().hex[:18].upper()
    typed = upsert(
        INSTANCE, phone.canonical, typed_id, "Oi! Aqui é a Ana.", int(time.time()), from_me=True
    )
    assert env.post(typed).json()["echoes"] == 1
    meta = env.system.conversation(phone.conv)["meta"]
    assert (meta["handoff"], meta["handoff_by"]) == ("human", "evolution-phone")
    sent_before = len(env.evolution.sends(phone.canonical))
    phone.now += MINUTE
    phone.post("ok, obrigado Ana")
    held = env.events(phone.conv, "message.held_for_human")
    assert [h["text"] for h in held] == ["ok, obrigado Ana"]
    # Staff hand it back; the next message is the bot's again.
    response = env.system.http.post(
        f"/v1/conversations/{phone.conv}/handoff", json={"owner": "bot", "agent": "ana"}
    )
    assert response.status_code == 200
    reply = phone.say("quanto custa a aula experimental?", after=MINUTE)
    assert reply
    delivered = env.events(phone.conv, "reply.delivered")
    later = sum(d["bubbles"] for d in delivered[1:])
    assert len(env.evolution.sends(phone.canonical)) == sent_before + later
    history = env.system.http.get(f"/v1/conversations/{phone.conv}/messages").json()["messages"]
    assert ("agent", "evolution-phone", "Oi! Aqui é a Ana.") in {
        (m["author"], m.get("agent"), m["text"]) for m in history
    }


def test_a_500_of_evolution_is_retried_and_a_400_is_not(env: Env) -> None:
    error_500 = json.loads(
        (CORPUS / "http_exchange_send_text_v2_2_3_error_500_issue1412.json").read_text()
    )
    error_400 = json.loads(
        (CORPUS / "send_text_response_400_number_not_on_whatsapp_v1_woofed_2024.json").read_text()
    )
    retried = Phone(env)
    env.evolution.script(retried.canonical, Step(500, error_500["response"]["body"]))
    retried.say("oi")
    [delivered] = env.events(retried.conv, "reply.delivered")
    assert delivered["status"] == "sent"
    assert len(env.evolution.sends(retried.canonical)) == delivered["bubbles"] + 1
    refused = Phone(env)
    env.evolution.script(refused.canonical, Step(400, error_400))
    refused.say("oi")
    [failed] = env.events(refused.conv, "reply.delivered")
    assert failed["status"] == "failed" and "400" in failed["detail"]
    assert len(env.evolution.sends(refused.canonical)) == 1
    health = env.system.http.get("/healthz").json()["evolution"]
    assert health["configured"]["instances"] == [INSTANCE]
    assert "400" in health["last_error"]["message"]


def test_pack_notices_answer_a_voice_note(env: Env) -> None:
    phone = Phone(env)
    body = json.loads(
        (
            CORPUS
            / "messages_upsert_audio_ptt_incoming_trimmed_v1_7plus_crm_evolution_sender_2025.json"
        ).read_text()
    )
    body["instance"] = INSTANCE
    body["data"]["key"].update({"remoteJid": f"{phone.number}@s.whatsapp.net"})
    body["data"]["messageTimestamp"] = int(time.time())
    assert env.post(body).json()["messages"] == 1
    eventually(lambda: env.events(phone.conv, "reply.delivered"), what="the notice")
    [sent] = env.evolution.sends(phone.canonical)
    assert_said(str(sent.body["text"]), "channel_audio")
    assert [n["kinds"] for n in env.events(phone.conv, "evolution.notice")] == [["audio"]]


def test_staff_answer_through_evolution_a_conversation_the_business_phone_started(
    env: Env,
) -> None:
    """The business wrote first, from the phone: the conversation has no customer message
    yet, and a staff message from the inbox still goes out through Evolution (its id's
    channel), once."""
    phone = Phone(env)
    typed_id = "3A" + uuid.uuid4().hex[:18].upper()
    typed = upsert(
        INSTANCE,
        phone.canonical,
        typed_id,
        "Oi, aqui é a CT Smash!",
        int(time.time()),
        from_me=True,
    )
    assert env.post(typed).json()["echoes"] == 1
    path = f"/v1/conversations/{phone.conv}/agent-messages"
    body = {"agent": "ana", "text": "Posso ajudar?", "take": True, "client_message_id": "a1"}
    for _ in range(2):
        assert env.system.http.post(path, json=body).status_code == 202
    env.evolution.wait_for(lambda _: bool(env.evolution.sends(phone.canonical)))
    eventually(lambda: env.events(phone.conv, "agent.delivered"), what="the agent message")
    assert [s.body["text"] for s in env.evolution.sends(phone.canonical)] == ["Posso ajudar?"]


def test_a_webhook_by_events_url_is_served_the_same(env: Env) -> None:
    """With ``byEvents`` on, Evolution appends the event to the URL; the proof is still
    required there."""
    phone = Phone(env)
    body = upsert(INSTANCE, phone.number, "3EB0BYEV" + uuid.uuid4().hex[:8], "oi", int(time.time()))
    url = f"{PATH}/messages-upsert"
    assert env.system.http.post(url, json=body).status_code == 401
    token = {"authorization": f"Bearer {evolution_jwt(SECRET)}"}
    response = env.system.http.post(url, json=body, headers=token)
    assert response.status_code == 200 and response.json()["messages"] == 1
