"""The staff side through the HTTP API (issue 16): the customer asks for a person, staff find
the conversation pending, answer it, and hand it back; the bot resumes in context."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.system import System

TOKEN = "inbox-admin"


@pytest.fixture(scope="module")
def staffed(redis_url: str, prefix: str) -> Iterator[System]:
    with System.up(redis_url, f"{prefix}inbox:", ORQ_ADMIN_TOKEN=TOKEN) as system:
        system.http.headers["authorization"] = f"Bearer {TOKEN}"
        yield system


def new_cid() -> str:
    return f"inbox-{uuid.uuid4().hex[:10]}"


def listed(system: System, cid: str, **params: str) -> dict | None:
    response = system.http.get("/v1/conversations", params={"limit": "200", **params})
    assert response.status_code == 200, response.text
    rows = [r for r in response.json()["conversations"] if r["conversation_id"] == cid]
    return rows[0] if rows else None


def send(system: System, cid: str, **body: object) -> dict:
    response = system.http.post(f"/v1/conversations/{cid}/agent-messages", json=body)
    assert response.status_code == 202, response.text
    return response.json()


def test_customer_asks_for_a_person_staff_answer_and_hand_back(staffed: System) -> None:
    cid = new_cid()
    first = staffed.say(cid, "oi, me chamo Paulo e quero agendar uma aula experimental")
    asked = staffed.say(cid, "quero falar com um atendente", after=first["cursor"])

    row = listed(staffed, cid, owner="pending_human")
    assert row is not None, "a conversation that asked for a person is listed as pending"
    assert row["waiting_since"] and row["owner"] == "pending_human"
    assert "Paulo" in row["summary"]
    assert listed(staffed, cid, owner="human") is None
    assert listed(staffed, cid, q="paulo") is not None
    assert listed(staffed, cid, q="atendente") is not None, "q searches the texts"
    assert listed(staffed, cid, q="nada-disso-aqui") is None

    hello = {"agent": "maria", "text": "Oi Paulo, aqui é a Maria!", "client_message_id": "m1"}
    sent = send(staffed, cid, **hello)
    again = send(staffed, cid, **hello)
    assert sent["duplicate"] is False and again["duplicate"] is True
    assert again["message_id"] == sent["message_id"]

    reply = staffed.next_reply(cid, after=asked["cursor"])
    assert reply["author"] == "agent" and reply["agent"] == "maria"
    assert reply["text"] == "Oi Paulo, aqui é a Maria!"
    assert reply["turn_id"] == sent["message_id"]
    later = staffed.replies(cid, after=reply["cursor"], wait=1)["replies"]
    assert later == [], "a repeated client_message_id is sent once"

    meta = staffed.conversation(cid)["meta"]
    assert meta["handoff"] == "human" and meta["handoff_by"] == "maria"
    row = listed(staffed, cid, owner="human")
    assert row is not None and row["agent"] == "maria"

    # While Maria owns it, the customer's message is recorded and the bot stays silent.
    assert staffed.post(cid, "obrigado maria! terça às 19h dá?").status_code == 202
    history = staffed.http.get(f"/v1/conversations/{cid}/messages").json()["messages"]
    authors = [(m["author"], m["text"]) for m in history]
    assert authors[0] == ("customer", "oi, me chamo Paulo e quero agendar uma aula experimental")
    assert authors[1][0] == "bot"
    assert ("agent", "Oi Paulo, aqui é a Maria!") in authors
    assert authors[-1] == ("customer", "obrigado maria! terça às 19h dá?")
    assert next(m for m in history if m["author"] == "agent")["agent"] == "maria"

    back = staffed.http.post(f"/v1/conversations/{cid}/handoff", json={"owner": "bot"})
    assert back.json()["meta"]["handoff"] == "bot"
    resumed = staffed.say(cid, "tenho 34 anos", after=reply["cursor"])
    assert resumed["author"] == "bot"
    trial = staffed.conversation(cid)["trial"]
    assert trial["nome"] == "Paulo" and trial["idade"] == 34, "the bot resumes in context"
    events = [e["event"] for e in staffed.journal(cid)]
    assert "agent.message" in events and "agent.delivered" in events


def test_another_agent_is_refused_unless_taking(staffed: System) -> None:
    cid = new_cid()
    staffed.say(cid, "onde fica a CT?")
    send(staffed, cid, agent="maria", text="Oi, é a Maria")
    refused = staffed.http.post(
        f"/v1/conversations/{cid}/agent-messages", json={"agent": "joao", "text": "Oi"}
    )
    assert refused.status_code == 409 and refused.json()["reason"] == "owned_by_other"
    taken = send(staffed, cid, agent="joao", text="Oi, agora é o João", take=True)
    assert taken["accepted"]
    assert staffed.conversation(cid)["meta"]["handoff_by"] == "joao"


def test_history_pages_back_in_order(staffed: System) -> None:
    cid = new_cid()
    cursor = "0-0"
    for text in ("oi", "onde fica a CT?", "tem estacionamento?"):
        cursor = staffed.say(cid, text, after=cursor)["cursor"]
    page = staffed.http.get(f"/v1/conversations/{cid}/messages", params={"limit": 4}).json()
    assert len(page["messages"]) == 4 and page["cursor"]
    older = staffed.http.get(
        f"/v1/conversations/{cid}/messages", params={"limit": 4, "before": page["cursor"]}
    ).json()
    both = older["messages"] + page["messages"]
    assert [m["author"] for m in both] == ["customer", "bot"] * 3
    assert older["cursor"] is None
    assert [m["text"] for m in both if m["author"] == "customer"] == [
        "oi",
        "onde fica a CT?",
        "tem estacionamento?",
    ]


def test_a_page_before_the_first_stream_id_is_empty(staffed: System) -> None:
    """``before=0-0``: nothing can come before it (to Redis an exclusive range from there is
    an error, which was a 500)."""
    cid = new_cid()
    staffed.say(cid, "oi", after="0-0")
    page = staffed.http.get(f"/v1/conversations/{cid}/messages", params={"before": "0-0"})
    assert page.status_code == 200 and page.json() == {"messages": [], "cursor": None}


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/conversations/inbox-never-seen/agent-messages", {"agent": "m", "text": "oi"}, 404),
        ("/v1/conversations/{cid}/agent-messages", {"agent": "m", "text": "   "}, 422),
        ("/v1/conversations/{cid}/agent-messages", {"agent": "m", "text": "x" * 4097}, 422),
        ("/v1/conversations/{cid}/agent-messages", {"text": "oi"}, 422),
    ],
)
def test_bad_agent_messages_get_a_clear_4xx(
    staffed: System, path: str, body: dict, status: int
) -> None:
    cid = new_cid()
    staffed.say(cid, "oi")
    response = staffed.http.post(path.format(cid=cid), json=body)
    assert response.status_code == status, response.text
    assert response.json()["detail"]


def test_staff_routes_need_the_admin_token(staffed: System) -> None:
    anonymous = {"authorization": "Bearer wrong"}
    assert staffed.http.get("/v1/conversations", headers=anonymous).status_code == 401
    assert staffed.http.get("/v1/conversations/x/messages", headers=anonymous).status_code == 401
    response = staffed.http.post(
        "/v1/conversations/x/agent-messages", json={"agent": "m", "text": "oi"}, headers=anonymous
    )
    assert response.status_code == 401
    assert staffed.http.get("/v1/conversations/never-seen-x/messages").status_code == 404


def test_the_openapi_document_lists_the_staff_routes(staffed: System) -> None:
    paths = staffed.http.get("/openapi.json").json()["paths"]
    assert "get" in paths["/v1/conversations"]
    assert "post" in paths["/v1/conversations/{conversation_id}/agent-messages"]
    assert "get" in paths["/v1/conversations/{conversation_id}/messages"]
