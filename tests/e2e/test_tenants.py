"""Many businesses in one deployment (``ORQ_TENANTS``), end to end: one ``orquestra up`` serving
three tenants through the real gateway over HTTP.

- ``ctsmash`` (pack ctsmash: beach tennis, trial classes) with an admin and an API token and a
  WhatsApp number;
- ``revoluna`` (pack staffing: no trial classes) likewise, with its own number and app secret;
- both also on an Evolution API instance and a Chatwoot account of their own, each with its own
  API key, bot token and webhook secret (the fake Evolution server and fake Chatwoot record
  which credentials each reply went with);
- ``broken``, whose pack folder holds invalid YAML: disabled, while the others serve.

``ORQ_ADMIN_TOKEN`` is the operator's token, which names its tenant with ``X-Orq-Tenant``.

Why these tests matter: each tenant is a different business, and a conversation id is chosen
by whoever posts (or is a phone number), so the same id under two tenants must be two
conversations, and no token of one business may read, change, export or erase another's.
Expected replies are taken from the packs, never copied. The WhatsApp reply goes to a fake
Graph API, so no test talks to Meta.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import yaml
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import WebDriverWait

from services.gateway.whatsapp.parse import conversation_id as wa_conversation
from shared.faq.config import FaqConfig
from shared.pack import Pack, load_pack
from tests.e2e.journey import Chat, assert_said, eventually
from tests.support.browser import WAIT_S
from tests.support.fake_chatwoot import FakeChatwoot
from tests.support.fake_chatwoot import incoming as chatwoot_message
from tests.support.fake_chatwoot import sign as chatwoot_sign
from tests.support.fake_evolution import FakeEvolution, evolution_jwt, upsert
from tests.support.fake_graph import FakeGraph, message_webhook, sign
from tests.system import System

CTSMASH: Pack = load_pack("ctsmash")
STAFFING: Pack = load_pack("staffing")

OPERATOR = "op-" + uuid.uuid4().hex
CT_ADMIN = "ct-admin-" + uuid.uuid4().hex
CT_API = "ct-api-" + uuid.uuid4().hex
RV_ADMIN = "rv-admin-" + uuid.uuid4().hex
RV_API = "rv-api-" + uuid.uuid4().hex
BROKEN_ADMIN = "broken-admin-" + uuid.uuid4().hex

CT_NUMBER = f"1065{uuid.uuid4().int % 10**11:011d}"
RV_NUMBER = f"2077{uuid.uuid4().int % 10**11:011d}"
NO_TENANT_NUMBER = f"3099{uuid.uuid4().int % 10**11:011d}"
CT_SECRET = "ct-app-secret-" + uuid.uuid4().hex
RV_SECRET = "rv-app-secret-" + uuid.uuid4().hex
CT_GRAPH_TOKEN = "ct-graph-" + uuid.uuid4().hex
RV_GRAPH_TOKEN = "rv-graph-" + uuid.uuid4().hex

# Each tenant's Evolution instance and Chatwoot account, with credentials of its own.
CT_INSTANCE, RV_INSTANCE = "ct-recepcao", "rv-recepcao"
CT_EVO_KEY, RV_EVO_KEY = "ct-evo-" + uuid.uuid4().hex, "rv-evo-" + uuid.uuid4().hex
CT_EVO_SECRET = "ct-evo-secret-" + uuid.uuid4().hex
RV_EVO_SECRET = "rv-evo-secret-" + uuid.uuid4().hex
CT_ACCOUNT, RV_ACCOUNT, NO_ACCOUNT = 11, 22, 33
CT_CW_TOKEN, RV_CW_TOKEN = "ct-cw-" + uuid.uuid4().hex, "rv-cw-" + uuid.uuid4().hex
CT_CW_SECRET, RV_CW_SECRET = "ct-cw-secret-" + uuid.uuid4().hex, "rv-cw-secret-" + uuid.uuid4().hex

WEBCHAT_SECRET = "webchat-" + uuid.uuid4().hex
HEADER = "X-Orq-Tenant"
WEBHOOK = "/webhooks/whatsapp"
START = "2026-12-03T10:00:00-03:00"  # a Thursday; trial classes are on Tuesdays
MINUTE = timedelta(minutes=1)
T = TypeVar("T")


def auth(token: str | None = None, tenant: str | None = None) -> dict[str, str]:
    """Request headers: a bearer token (none: an empty header) and the tenant, if named."""
    headers = {"authorization": f"Bearer {token}" if token else ""}
    if tenant is not None:
        headers[HEADER] = tenant
    return headers


def conv(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}"


def variants(pack: Pack, key: str) -> list[str]:
    value = pack.sections["texts"][key]
    return [value] if isinstance(value, str) else list(value)


def said(pack: Pack, reply: str, key: str) -> bool:
    """Whether the reply holds a variant of the pack's text ``key`` (greetings take no
    placeholders)."""
    return any(variant in reply for variant in variants(pack, key))


def faq_answer(pack: Pack, entry_id: str) -> str:
    return next(
        e.answer for e in pack.section("faq", FaqConfig).entries if e.id == entry_id
    ).strip()


@dataclass
class Deployment:
    """The running system and how each party sees it."""

    system: System
    graph: FakeGraph
    evolution: FakeEvolution
    chatwoot: FakeChatwoot
    http: httpx.Client  # no default token: every request says who it is
    ct: System  # the system as ctsmash's admin token sees it
    rv: System  # the system as revoluna's admin token sees it

    def started(self, seen: System, cid: str) -> list[list[str]]:
        """The messages of each turn of ``cid`` in the journal ``seen`` reads."""
        return [e["messages"] for e in seen.journal(cid) if e["event"] == "turn.started"]

    def webhook(self, payload: dict[str, Any], secret: str | None) -> httpx.Response:
        """POST a WhatsApp notification signed like Meta signs it (or unsigned)."""
        body = json.dumps(payload).encode()
        headers = {"content-type": "application/json"}
        if secret is not None:
            headers["x-hub-signature-256"] = sign(body, secret)
        return self.http.post(WEBHOOK, content=body, headers=headers)

    def status(self, path: str, token: str, tenant: str | None = None) -> int:
        return self.http.get(path, headers=auth(token, tenant)).status_code

    def listed(self, token: str, tenant: str | None = None) -> set[str]:
        """Conversation ids ``GET /v1/conversations`` shows this token (every page)."""
        found: set[str] = set()
        cursor: str | None = None
        while True:
            params: dict[str, Any] = {"limit": 200}
            if cursor:
                params["cursor"] = cursor
            response = self.http.get(
                "/v1/conversations", params=params, headers=auth(token, tenant)
            )
            assert response.status_code == 200, response.text
            page = response.json()
            found |= {row["conversation_id"] for row in page["conversations"]}
            cursor = page["cursor"]
            if not cursor:
                return found


def seen_as(system: System, token: str) -> System:
    """The same running system through a client of its own holding ``token``."""
    view = System(system.process, system.port, system.watcher)
    view.http.headers["authorization"] = f"Bearer {token}"
    return view


def broken_pack(folder: Path) -> Path:
    """A pack folder that does not load: its only file is invalid YAML."""
    folder.mkdir()
    (folder / "business.yaml").write_text("business: [unclosed\n  name: x\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def deployment(
    redis_url: str, prefix: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    folder = tmp_path_factory.mktemp("tenants")
    tenants = {
        "tenants": [
            {
                "id": "ctsmash",
                "pack": "ctsmash",
                "admin_token": CT_ADMIN,
                "api_token": CT_API,
                "whatsapp": {
                    "phone_number_ids": [CT_NUMBER],
                    "app_secret": CT_SECRET,
                    "access_token": CT_GRAPH_TOKEN,
                },
                "evolution": {
                    "instances": [CT_INSTANCE],
                    "api_key": CT_EVO_KEY,
                    "webhook_secret": CT_EVO_SECRET,
                },
                "chatwoot": {
                    "accounts": [CT_ACCOUNT],
                    "bot_token": CT_CW_TOKEN,
                    "webhook_secret": CT_CW_SECRET,
                },
            },
            {
                "id": "revoluna",
                "pack": "staffing",
                "admin_token": RV_ADMIN,
                "api_token": RV_API,
                "whatsapp": {
                    "phone_number_ids": [RV_NUMBER],
                    "app_secret": RV_SECRET,
                    "access_token": RV_GRAPH_TOKEN,
                },
                "evolution": {
                    "instances": [RV_INSTANCE],
                    "api_key": RV_EVO_KEY,
                    "webhook_secret": RV_EVO_SECRET,
                },
                "chatwoot": {
                    "accounts": [RV_ACCOUNT],
                    "bot_token": RV_CW_TOKEN,
                    "webhook_secret": RV_CW_SECRET,
                },
            },
            {
                "id": "broken",
                "pack": str(broken_pack(folder / "broken")),
                "admin_token": BROKEN_ADMIN,
            },
        ]
    }
    path = folder / "tenants.yaml"
    path.write_text(yaml.safe_dump(tenants), encoding="utf-8")
    with (
        FakeGraph.running(CT_GRAPH_TOKEN) as graph,
        FakeEvolution.running(CT_EVO_KEY, RV_EVO_KEY) as evolution,
        FakeChatwoot.running(CT_CW_TOKEN, RV_CW_TOKEN) as chatwoot,
        System.up(
            redis_url,
            f"{prefix}tenants:",
            ORQ_TENANTS=str(path),
            ORQ_ADMIN_TOKEN=OPERATOR,
            ORQ_WEBCHAT_SECRET=WEBCHAT_SECRET,
            ORQ_BURST_WINDOW_MS="0",
            ORQ_BURST_FRAGMENT_MS="0",
            WHATSAPP_GRAPH_BASE_URL=graph.base_url,
            WHATSAPP_RETRY_BASE_MS="20",
            WHATSAPP_RETRY_MAX_MS="100",
            EVOLUTION_URL=evolution.base_url,
            CHATWOOT_URL=chatwoot.base_url,
        ) as system,
        httpx.Client(base_url=system.base_url, timeout=30) as http,
    ):
        ct, rv = seen_as(system, CT_ADMIN), seen_as(system, RV_ADMIN)
        try:
            yield Deployment(system, graph, evolution, chatwoot, http, ct, rv)
        finally:
            ct.http.close()
            rv.http.close()


# Two packs through one deployment --------------------------------------------------------------


def test_each_tenant_answers_from_its_own_pack_under_the_same_conversation_id(
    deployment: Deployment,
) -> None:
    """One ``orquestra up``, two businesses: each tenant's turns are run with its own pack,
    even when both have a conversation with the same id."""
    ct, rv = deployment.ct, deployment.rv
    cid = conv("both")

    ct_hello = ct.say(cid, "oi, tudo bem?")
    assert said(CTSMASH, ct_hello["text"], "general_greeting"), ct_hello["text"]
    assert not said(STAFFING, ct_hello["text"], "general_greeting")

    rv_hello = rv.say(cid, "oi, tudo bem?")
    assert said(STAFFING, rv_hello["text"], "general_greeting"), rv_hello["text"]
    assert not said(CTSMASH, rv_hello["text"], "general_greeting")

    reply = rv.say(cid, "a Julia reserva o plantão pra mim?", after=rv_hello["cursor"])
    assert faq_answer(STAFFING, "reserva") in reply["text"]
    reply = ct.say(cid, "onde fica a CT?", after=ct_hello["cursor"])
    assert faq_answer(CTSMASH, "endereco") in reply["text"]


def test_the_same_conversation_id_is_two_conversations(deployment: Deployment) -> None:
    """State, journal, history and replies of ``cid`` under one tenant hold only what was
    said to that tenant."""
    ct, rv = deployment.ct, deployment.rv
    cid = conv("twin")
    ct_reply = ct.say(cid, "onde fica a CT?")
    rv_first = rv.say(cid, "a Julia reserva o plantão pra mim?")
    rv_last = rv.say(cid, "tem vaga de plantão?", after=rv_first["cursor"])

    assert ct.conversation(cid)["meta"]["turn_seq"] == 1
    assert rv.conversation(cid)["meta"]["turn_seq"] == 2
    assert deployment.started(ct, cid) == [["onde fica a CT?"]]
    assert deployment.started(rv, cid) == [
        ["a Julia reserva o plantão pra mim?"],
        ["tem vaga de plantão?"],
    ]

    def customer_texts(seen: System) -> list[str]:
        response = seen.http.get(f"/v1/conversations/{cid}/messages")
        assert response.status_code == 200, response.text
        return [m["text"] for m in response.json()["messages"] if m["author"] == "customer"]

    assert customer_texts(ct) == ["onde fica a CT?"]
    assert customer_texts(rv) == ["a Julia reserva o plantão pra mim?", "tem vaga de plantão?"]

    ct_replies = ct.replies(cid)["replies"]
    assert [r["turn_id"] for r in ct_replies] == [ct_reply["turn_id"]]
    rv_replies = rv.replies(cid)["replies"]
    assert len(rv_replies) == 2 and rv_replies[-1]["turn_id"] == rv_last["turn_id"]
    assert ct_reply["turn_id"] not in {r["turn_id"] for r in rv_replies}


# Who may use which route -----------------------------------------------------------------------


def test_the_bearer_token_picks_the_tenant_and_its_routes(deployment: Deployment) -> None:
    """A tenant's API token is its HTTP channel only; its admin token is every route of it;
    no token or an unknown one is refused; health and metrics stay open."""
    http = deployment.http
    cid = conv("tokens")
    body = {"conversation_id": cid, "text": "onde fica a CT?", "message_id": uuid.uuid4().hex}

    # No token, a token of nobody, or a token without the Bearer scheme.
    for headers in (auth(), auth("not-a-token-of-anyone"), {"authorization": CT_API}):
        assert http.post("/v1/messages", json=body, headers=headers).status_code == 401
        replies = http.get(f"/v1/conversations/{cid}/replies", headers=headers)
        assert replies.status_code == 401
        assert http.get("/v1/conversations", headers=headers).status_code == 401
    assert deployment.status(f"/v1/conversations/{cid}", "not-a-token-of-anyone") == 401

    # The API token posts and reads replies, and lands in its own tenant.
    assert http.post("/v1/messages", json=body, headers=auth(CT_API)).status_code == 202
    got = http.get(f"/v1/conversations/{cid}/replies", params={"wait": 20}, headers=auth(CT_API))
    assert got.status_code == 200 and got.json()["replies"], got.text
    assert faq_answer(CTSMASH, "endereco") in got.json()["replies"][0]["text"]
    assert deployment.started(deployment.ct, cid) == [["onde fica a CT?"]]

    # ...but opens none of the admin routes.
    for path in (
        "/v1/conversations",
        f"/v1/conversations/{cid}",
        f"/v1/conversations/{cid}/journal",
        f"/v1/conversations/{cid}/messages",
        f"/v1/conversations/{cid}/export",
    ):
        assert deployment.status(path, CT_API) == 401, path
    bookings = {"from": "2026-12-07", "to": "2026-12-13"}
    assert http.get("/v1/bookings", params=bookings, headers=auth(CT_API)).status_code == 401

    # The admin token opens the channel routes of its tenant too.
    again = {**body, "message_id": uuid.uuid4().hex, "text": "tem estacionamento?"}
    assert http.post("/v1/messages", json=again, headers=auth(CT_ADMIN)).status_code == 202
    assert deployment.status(f"/v1/conversations/{cid}/replies", CT_ADMIN) == 200
    assert deployment.status(f"/v1/conversations/{cid}", CT_ADMIN) == 200

    assert http.get("/healthz", headers=auth()).status_code in (200, 503)
    assert "tenants" in http.get("/healthz", headers=auth()).json()
    assert http.get("/metrics", headers=auth()).status_code == 200


def test_a_tenant_token_naming_another_tenant_is_forbidden(deployment: Deployment) -> None:
    """``X-Orq-Tenant`` is for the operator: a tenant's token naming another tenant is 403
    (naming its own tenant changes nothing)."""
    http = deployment.http
    cid = conv("header")
    deployment.rv.say(cid, "a Julia reserva o plantão pra mim?")
    body = {"conversation_id": cid, "text": "oi", "message_id": uuid.uuid4().hex}
    for token in (CT_ADMIN, CT_API):
        response = http.post("/v1/messages", json=body, headers=auth(token, "revoluna"))
        assert response.status_code == 403, response.text
        path = f"/v1/conversations/{cid}/replies"
        assert deployment.status(path, token, "revoluna") == 403
    for path in (
        "/v1/conversations",
        f"/v1/conversations/{cid}",
        f"/v1/conversations/{cid}/journal",
    ):
        assert deployment.status(path, CT_ADMIN, "revoluna") == 403, path
    # Nothing was posted into revoluna's conversation.
    assert deployment.started(deployment.rv, cid) == [["a Julia reserva o plantão pra mim?"]]
    # A tenant naming itself is served as without the header.
    assert deployment.status(f"/v1/conversations/{cid}", RV_ADMIN, "revoluna") == 200
    assert deployment.status("/v1/conversations", CT_ADMIN, "ctsmash") == 200


def test_the_operator_token_names_its_tenant_with_the_header(deployment: Deployment) -> None:
    """``ORQ_ADMIN_TOKEN`` serves every tenant, but only the one a request names: without
    the header it cannot know which (400, naming the header); an unknown tenant is 404."""
    http = deployment.http
    cid = conv("operator")
    deployment.ct.say(cid, "onde fica a CT?")

    missing = http.get(f"/v1/conversations/{cid}", headers=auth(OPERATOR))
    assert missing.status_code == 400, missing.text
    assert HEADER.lower() in missing.json()["detail"].lower()
    body = {"conversation_id": cid, "text": "oi", "message_id": uuid.uuid4().hex}
    assert http.post("/v1/messages", json=body, headers=auth(OPERATOR)).status_code == 400
    assert http.get("/v1/conversations", headers=auth(OPERATOR)).status_code == 400

    unknown = http.get(f"/v1/conversations/{cid}", headers=auth(OPERATOR, "nobody-here"))
    assert unknown.status_code == 404, unknown.text

    named = http.get(f"/v1/conversations/{cid}", headers=auth(OPERATOR, "ctsmash"))
    assert named.status_code == 200 and named.json()["meta"]["turn_seq"] == 1
    assert deployment.status(f"/v1/conversations/{cid}", OPERATOR, "revoluna") == 404
    assert cid in deployment.listed(OPERATOR, "ctsmash")
    assert cid not in deployment.listed(OPERATOR, "revoluna")

    # The operator speaks in the tenant it names: revoluna's pack answers.
    other = {**body, "text": "a Julia reserva o plantão pra mim?"}
    posted = http.post("/v1/messages", json=other, headers=auth(OPERATOR, "revoluna"))
    assert posted.status_code == 202, posted.text
    reply = deployment.rv.next_reply(cid)
    assert faq_answer(STAFFING, "reserva") in reply["text"]
    assert deployment.started(deployment.ct, cid) == [["onde fica a CT?"]]


# No tenant sees another's data -----------------------------------------------------------------


def test_another_tenants_conversation_does_not_exist_for_a_tenant(deployment: Deployment) -> None:
    """Every route that reads or changes one conversation treats an id that exists only under
    revoluna as unknown when ctsmash asks, and changes nothing of revoluna's."""
    http, rv = deployment.http, deployment.rv
    theirs = conv("theirs")
    mine = conv("mine")
    rv.say(theirs, "a Julia reserva o plantão pra mim?")
    deployment.ct.say(mine, "onde fica a CT?")
    journal_before = rv.journal(theirs)
    export_before = http.get(f"/v1/conversations/{theirs}/export", headers=auth(RV_ADMIN))
    assert export_before.status_code == 200, export_before.text

    for path in ("", "/journal", "/messages", "/export"):
        response = http.get(f"/v1/conversations/{theirs}{path}", headers=auth(CT_ADMIN))
        assert response.status_code == 404, (path, response.text)
    for token in (CT_ADMIN, CT_API):
        replies = http.get(f"/v1/conversations/{theirs}/replies", headers=auth(token))
        empty = replies.status_code == 200 and replies.json()["replies"] == []
        assert replies.status_code == 404 or empty, replies.text
    agent = http.post(
        f"/v1/conversations/{theirs}/agent-messages",
        json={"agent": "ana", "text": "Oi, aqui é a Ana"},
        headers=auth(CT_ADMIN),
    )
    assert agent.status_code == 404, agent.text
    handoff = http.post(
        f"/v1/conversations/{theirs}/handoff", json={"owner": "human"}, headers=auth(CT_ADMIN)
    )
    assert handoff.status_code == 404, handoff.text
    erase = http.delete(f"/v1/conversations/{theirs}", headers=auth(CT_ADMIN))
    assert erase.status_code == 404, erase.text

    # The list shows each tenant its own conversations only.
    ct_list, rv_list = deployment.listed(CT_ADMIN), deployment.listed(RV_ADMIN)
    assert mine in ct_list and theirs not in ct_list
    assert theirs in rv_list and mine not in rv_list

    # revoluna's conversation is untouched: not erased, not handed off, no staff message.
    state = rv.conversation(theirs)
    assert state["meta"]["turn_seq"] == 1
    assert state["meta"].get("handoff", "bot") == "bot"
    # Not erased (entries may follow, e.g. the mode router's, but none went away).
    assert rv.journal(theirs)[: len(journal_before)] == journal_before
    history = http.get(f"/v1/conversations/{theirs}/messages", headers=auth(RV_ADMIN)).json()
    assert [m["author"] for m in history["messages"]] == ["customer", "bot"]
    assert http.get(f"/v1/conversations/{theirs}/export", headers=auth(RV_ADMIN)).status_code == 200


def test_a_tenants_bookings_are_its_own(deployment: Deployment) -> None:
    """A trial class booked with ctsmash is in ctsmash's roster only; revoluna (whose pack has
    no trial classes) neither lists nor cancels it."""
    http = deployment.http
    chat = Chat(deployment.ct, "tenant-booking", START)
    chat.say("quero agendar uma aula experimental: sou a Bia, 29 anos, iniciante, 08/12 às 19h")
    code = assert_said(chat.say("sim", after=MINUTE), "trial_booked")["codigo"]
    week = {"from": "2026-12-07", "to": "2026-12-13"}

    mine = http.get("/v1/bookings", params=week, headers=auth(CT_ADMIN))
    assert mine.status_code == 200, mine.text
    booked = [b for c in mine.json()["classes"] for b in c["bookings"] if b["booking_id"] == code]
    assert [b["conversation_id"] for b in booked] == [chat.id]

    theirs = http.get("/v1/bookings", params=week, headers=auth(RV_ADMIN))
    assert theirs.status_code in (200, 404), theirs.text
    assert code not in theirs.text and chat.id not in theirs.text
    as_operator = http.get("/v1/bookings", params=week, headers=auth(OPERATOR, "revoluna"))
    assert code not in as_operator.text

    cancel = http.post(
        f"/v1/bookings/{code}/cancel", json={"reason": "chuva"}, headers=auth(RV_ADMIN)
    )
    assert cancel.status_code == 404, cancel.text
    after = http.get("/v1/bookings", params=week, headers=auth(CT_ADMIN)).json()
    [still] = [b for c in after["classes"] for b in c["bookings"] if b["booking_id"] == code]
    assert still["status"] == "booked"


def test_a_tenants_scheduled_messages_and_funnel_are_its_own(deployment: Deployment) -> None:
    """A booking's reminders are in its tenant's schedule only, and its funnel steps in its
    tenant's counters only: the other tenant's staff see neither."""
    http = deployment.http
    chat = Chat(deployment.ct, "tenant-funnel", START)
    chat.say("quero agendar uma aula experimental: sou o Caio, 31 anos, iniciante, 08/12 às 20h")
    assert_said(chat.say("sim", after=MINUTE), "trial_booked")

    by_conversation = {"conversation_id": chat.id}

    def scheduled() -> list[Any]:
        # The scheduler reads the booking's event apart from the reply (no long-poll).
        mine = http.get("/v1/scheduled", params=by_conversation, headers=auth(CT_ADMIN))
        return list(mine.json()["scheduled"])

    eventually(scheduled, what="a booking schedules its reminders")
    for token in (RV_ADMIN, OPERATOR):
        tenant = "revoluna" if token == OPERATOR else None
        theirs = http.get("/v1/scheduled", params=by_conversation, headers=auth(token, tenant))
        assert theirs.status_code == 200 and theirs.json()["scheduled"] == [], theirs.text
        everything = http.get("/v1/scheduled", headers=auth(token, tenant)).text
        assert chat.id not in everything

    days = {"from": "2026-12-01", "to": "2026-12-09"}

    def booked(token: str) -> int:
        rows = http.get("/v1/funnel", params=days, headers=auth(token)).json()["days"]
        return sum(row["booked"] for row in rows)

    eventually(lambda: booked(CT_ADMIN) > 0, what="ctsmash's funnel counts its booking")
    assert booked(RV_ADMIN) == 0


# A tenant whose pack does not load -------------------------------------------------------------


def test_a_tenant_whose_pack_does_not_load_is_disabled_and_the_others_serve(
    deployment: Deployment,
) -> None:
    """The broken tenant is reported in /healthz and refused with 503 (it exists, its token is
    right, it cannot be served); the other tenants are not affected."""
    http = deployment.http
    health = http.get("/healthz", headers=auth()).json()
    assert health["tenants"]["ctsmash"] == "ok"
    assert health["tenants"]["revoluna"] == "ok"
    assert "disabled" in health["tenants"]["broken"]
    assert set(health["tenants"]) == {"ctsmash", "revoluna", "broken"}

    cid = conv("broken")
    body = {"conversation_id": cid, "text": "oi", "message_id": uuid.uuid4().hex}
    refused = [
        http.post("/v1/messages", json=body, headers=auth(BROKEN_ADMIN)),
        http.get("/v1/conversations", headers=auth(BROKEN_ADMIN)),
        http.get(f"/v1/conversations/{cid}/replies", headers=auth(BROKEN_ADMIN)),
    ]
    for response in refused:
        assert response.status_code == 503, response.text
        assert "disabled" in response.json()["detail"]

    reply = deployment.ct.say(cid, "onde fica a CT?")
    assert faq_answer(CTSMASH, "endereco") in reply["text"]


# WhatsApp: the number picks the tenant ---------------------------------------------------------


def sender() -> str:
    return f"55119{uuid.uuid4().int % 10**8:08d}"


def text_webhook(number: str, person: str, text: str) -> dict[str, Any]:
    return message_webhook(
        number, person, f"wamid.T{uuid.uuid4().hex[:16]}", int(time.time()), text=text
    )


@pytest.mark.parametrize(
    ("number", "secret", "other_secret", "owner", "stranger"),
    [
        (CT_NUMBER, CT_SECRET, RV_SECRET, CT_ADMIN, RV_ADMIN),
        (RV_NUMBER, RV_SECRET, CT_SECRET, RV_ADMIN, CT_ADMIN),
    ],
    ids=["ctsmash", "revoluna"],
)
def test_a_webhook_is_checked_with_the_app_secret_of_the_tenant_owning_its_number(
    deployment: Deployment, number: str, secret: str, other_secret: str, owner: str, stranger: str
) -> None:
    """A notification for a tenant's number must be signed with that tenant's app secret:
    another tenant's secret is as bad as none. Signed right, it becomes a conversation of that
    tenant only."""
    person = sender()
    cid = wa_conversation(number, person)
    path = f"/v1/conversations/{cid}"

    forged = text_webhook(number, person, "quero cancelar minha aula")
    for signing in (other_secret, None):
        response = deployment.webhook(forged, signing)
        assert response.status_code == 401, response.text
    assert deployment.status(f"{path}/journal", owner) == 404

    payload = text_webhook(number, person, "onde fica?")
    accepted = deployment.webhook(payload, secret)
    assert accepted.status_code == 200, accepted.text

    def turns() -> list[list[str]]:
        response = deployment.http.get(f"{path}/journal", headers=auth(owner))
        entries = response.json()["entries"] if response.status_code == 200 else []
        return [e["messages"] for e in entries if e["event"] == "turn.started"]

    assert eventually(turns, what=f"the turn of {cid}") == [["onde fica?"]]
    assert deployment.status(path, owner) == 200
    assert deployment.status(path, stranger) == 404
    assert deployment.status(f"{path}/journal", stranger) == 404
    other_tenant = "revoluna" if owner == CT_ADMIN else "ctsmash"
    assert deployment.status(path, OPERATOR, other_tenant) == 404
    assert cid not in deployment.listed(stranger)


def test_a_whatsapp_reply_goes_out_from_the_tenants_number_with_its_access_token(
    deployment: Deployment,
) -> None:
    """Each tenant's WhatsApp replies are sent with the access token of its own tenants-file
    entry, from the number the person wrote to."""
    people = {CT_NUMBER: sender(), RV_NUMBER: sender()}
    for number, secret in ((CT_NUMBER, CT_SECRET), (RV_NUMBER, RV_SECRET)):
        response = deployment.webhook(text_webhook(number, people[number], "onde fica?"), secret)
        assert response.status_code == 200, response.text
    for number, token in ((CT_NUMBER, CT_GRAPH_TOKEN), (RV_NUMBER, RV_GRAPH_TOKEN)):
        person = people[number]
        requests = deployment.graph.wait_for(
            lambda seen, person=person: any(r.recipient == person for r in seen)
        )
        sent = [r for r in requests if r.recipient == person]
        assert {r.phone_number_id for r in sent} == {number}
        assert {r.authorization for r in sent} == {f"Bearer {token}"}


def test_a_number_of_no_tenant_reaches_no_tenant(deployment: Deployment) -> None:
    """A notification for a number no tenant has is stored for nobody, whichever secret
    signed it."""
    person = sender()
    cid = wa_conversation(NO_TENANT_NUMBER, person)
    for secret in (CT_SECRET, RV_SECRET):
        deployment.webhook(text_webhook(NO_TENANT_NUMBER, person, "onde fica?"), secret)
    # A message for a known number sent after it is stored: by then the stray one would be too.
    known = sender()
    assert (
        deployment.webhook(text_webhook(CT_NUMBER, known, "onde fica?"), CT_SECRET).status_code
        == 200
    )
    eventually(
        lambda: (
            deployment.status(f"/v1/conversations/{wa_conversation(CT_NUMBER, known)}", CT_ADMIN)
            == 200
        ),
        what="the known number's conversation",
    )
    for token, tenant in (
        (CT_ADMIN, None),
        (RV_ADMIN, None),
        (OPERATOR, "ctsmash"),
        (OPERATOR, "revoluna"),
    ):
        assert deployment.status(f"/v1/conversations/{cid}", token, tenant) == 404
        assert deployment.status(f"/v1/conversations/{cid}/journal", token, tenant) == 404
        assert cid not in deployment.listed(token, tenant)


def turns_of(deployment: Deployment, cid: str, token: str) -> list[list[str]]:
    response = deployment.http.get(f"/v1/conversations/{cid}/journal", headers=auth(token))
    entries = response.json()["entries"] if response.status_code == 200 else []
    return [e["messages"] for e in entries if e["event"] == "turn.started"]


@pytest.mark.parametrize(
    ("instance", "secret", "other_secret", "key", "owner", "stranger"),
    [
        (CT_INSTANCE, CT_EVO_SECRET, RV_EVO_SECRET, CT_EVO_KEY, CT_ADMIN, RV_ADMIN),
        (RV_INSTANCE, RV_EVO_SECRET, CT_EVO_SECRET, RV_EVO_KEY, RV_ADMIN, CT_ADMIN),
    ],
    ids=["ctsmash", "revoluna"],
)
def test_an_evolution_instance_is_its_tenants_with_its_own_secret_and_key(
    deployment: Deployment,
    instance: str,
    secret: str,
    other_secret: str,
    key: str,
    owner: str,
    stranger: str,
) -> None:
    """A webhook of a tenant's instance must carry that tenant's secret (another tenant's is
    as bad as none); the conversation is that tenant's only, and its reply goes to that
    instance with that tenant's API key."""
    number = f"55119{uuid.uuid4().int % 10**8:08d}"
    cid = f"evo:{instance}:{number}"
    forged = upsert(instance, number, "3EB0F" + uuid.uuid4().hex[:12], "cancela", int(time.time()))
    for headers in ({"authorization": f"Bearer {evolution_jwt(other_secret)}"}, {}):
        assert (
            deployment.http.post("/webhooks/evolution", json=forged, headers=headers).status_code
            == 401
        )
    assert deployment.status(f"/v1/conversations/{cid}/journal", owner) == 404
    body = upsert(instance, number, "3EB0A" + uuid.uuid4().hex[:12], "onde fica?", int(time.time()))
    headers = {"x-webhook-token": secret}
    assert (
        deployment.http.post("/webhooks/evolution", json=body, headers=headers).status_code == 200
    )
    assert eventually(lambda: turns_of(deployment, cid, owner), what=cid) == [["onde fica?"]]
    assert deployment.status(f"/v1/conversations/{cid}", stranger) == 404
    deployment.evolution.wait_for(lambda _: bool(deployment.evolution.sends(number)))
    sent = deployment.evolution.sends(number)
    assert {r.path for r in sent} == {f"/message/sendText/{instance}"}
    assert {r.headers["apikey"] for r in sent} == {key}


@pytest.mark.parametrize(
    ("account", "secret", "other_secret", "token", "owner", "stranger"),
    [
        (CT_ACCOUNT, CT_CW_SECRET, RV_CW_SECRET, CT_CW_TOKEN, CT_ADMIN, RV_ADMIN),
        (RV_ACCOUNT, RV_CW_SECRET, CT_CW_SECRET, RV_CW_TOKEN, RV_ADMIN, CT_ADMIN),
    ],
    ids=["ctsmash", "revoluna"],
)
def test_a_chatwoot_account_is_its_tenants_with_its_own_secret_and_bot_token(
    deployment: Deployment,
    account: int,
    secret: str,
    other_secret: str,
    token: str,
    owner: str,
    stranger: str,
) -> None:
    conversation = uuid.uuid4().int % 10**6
    cid = f"cw:{account}:{conversation}"
    now = datetime.now(UTC)
    body = chatwoot_message(
        account, conversation, conversation, "onde fica?", now, status="pending"
    )
    raw = json.dumps(body).encode()
    refused = deployment.http.post(
        "/webhooks/chatwoot", content=raw, headers=chatwoot_sign(raw, other_secret)
    )
    assert refused.status_code == 401
    assert deployment.http.post("/webhooks/chatwoot", content=raw).status_code == 401
    assert deployment.status(f"/v1/conversations/{cid}/journal", owner) == 404
    accepted = deployment.http.post(
        "/webhooks/chatwoot", content=raw, headers=chatwoot_sign(raw, secret)
    )
    assert accepted.status_code == 200
    assert eventually(lambda: turns_of(deployment, cid, owner), what=cid) == [["onde fica?"]]
    assert deployment.status(f"/v1/conversations/{cid}", stranger) == 404
    deployment.chatwoot.wait_for(lambda _: bool(deployment.chatwoot.posts(account, conversation)))
    sent = deployment.chatwoot.posts(account, conversation)
    assert {r.headers["api_access_token"] for r in sent} == {token}


def test_an_account_or_instance_of_no_tenant_reaches_no_tenant(deployment: Deployment) -> None:
    body = chatwoot_message(NO_ACCOUNT, 5, 5, "oi", datetime.now(UTC), status="pending")
    raw = json.dumps(body).encode()
    for secret in (CT_CW_SECRET, RV_CW_SECRET):
        response = deployment.http.post(
            "/webhooks/chatwoot", content=raw, headers=chatwoot_sign(raw, secret)
        )
        assert response.status_code == 404
    stray = upsert("nobodys-instance", "5511900000000", "3EB0STRAY", "oi", int(time.time()))
    for secret in (CT_EVO_SECRET, RV_EVO_SECRET):
        headers = {"x-webhook-token": secret}
        response = deployment.http.post("/webhooks/evolution", json=stray, headers=headers)
        assert response.status_code == 401


def test_a_web_chat_session_is_its_pages_tenants_and_no_one_elses(deployment: Deployment) -> None:
    """A public chat page names its business (``?tenant=``); its session token posts to and
    reads its own conversation of that tenant, whose pack answers, and is refused for the same
    conversation id under another tenant, even with that tenant's name put in the token."""
    http = deployment.http
    unnamed = http.post("/v1/webchat/sessions", headers=auth())
    assert unnamed.status_code == 400 and "tenant" in unnamed.json()["detail"]
    assert http.get("/v1/webchat", params={"tenant": "revoluna"}).json() == {"sessions": True}

    opened = http.post("/v1/webchat/sessions", params={"tenant": "revoluna"}, headers=auth())
    assert opened.status_code == 201, opened.text
    session = opened.json()
    cid, token = session["conversation_id"], session["token"]
    body = {"conversation_id": cid, "message_id": uuid.uuid4().hex, "text": "oi, tudo bem?"}
    assert http.post("/v1/messages", json=body, headers=auth(token)).status_code == 202
    replies = http.get(
        f"/v1/conversations/{cid}/replies", params={"wait": 20}, headers=auth(token)
    ).json()["replies"]
    assert replies and said(STAFFING, replies[0]["text"], "general_greeting")
    assert cid in deployment.listed(RV_ADMIN)

    other = http.post("/v1/messages", json=body, headers=auth(token, tenant="ctsmash"))
    assert other.status_code == 403, other.text
    digest = token.rsplit(".", 1)[1]
    forged = http.post("/v1/messages", json=body, headers=auth(f"wc_ctsmash.{digest}"))
    assert forged.status_code == 403, forged.text
    assert cid not in deployment.listed(CT_ADMIN)


def test_a_chat_page_of_a_tenant_talks_to_that_tenant_in_a_browser(
    deployment: Deployment, browser: WebDriver
) -> None:
    """``/chat?tenant=revoluna`` in a real browser: the page opens a session of that tenant
    and its pack answers; the conversation is revoluna's, not ctsmash's."""
    wait = WebDriverWait(browser, WAIT_S)
    browser.get(f"{deployment.system.base_url}/chat?tenant=revoluna")
    wait.until(lambda d: d.find_element(By.ID, "cid").text.startswith("web:"))
    conversation = browser.find_element(By.ID, "cid").text
    box = browser.find_element(By.ID, "message")
    box.send_keys("a Julia reserva o plantão pra mim?")
    box.send_keys(Keys.ENTER)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".bubble.in"))
    reply = browser.find_elements(By.CSS_SELECTOR, ".bubble.in")[0].text
    assert faq_answer(STAFFING, "reserva").splitlines()[0] in reply
    assert conversation in deployment.listed(RV_ADMIN)
    assert conversation not in deployment.listed(CT_ADMIN)
