"""The WhatsApp Cloud API channel end to end: real processes, real HTTP, a fake Graph API.

The whole system runs (``orquestra up``) with the pywa app secret, whose corpus body Meta really
signed. Every file of the conformance corpus is walked through it and its outcome asserted from
a table (the two triples signed with other secrets, and the gateway without any secret, are
checked on the real router in ``tests/unit/test_whatsapp_routes.py``); then the delivery
scenarios (success, throttling, the 24-hour window, a refused token, a redelivered reply) run
against the fake Graph API.
Assertions look at structure, journal events and what the fake Graph API received, never at
the workers' reply texts.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

import httpx
import pytest
import redis as redis_sync

from services.gateway.whatsapp.parse import conversation_id
from services.gateway.whatsapp.records import delivery_key, events_key
from shared.contracts import MergeReady, Reply
from shared.keys import Keys
from shared.merge import OUTBOUND as OUTBOUND_ITEM
from shared.merge import merger_config, reply_of
from shared.pack import load_pack
from tests.e2e.journey import eventually
from tests.support.fake_graph import (
    CORPUS,
    FakeGraph,
    GraphRequest,
    Step,
    answer,
    corpus,
    message_webhook,
    sign,
    status_webhook,
)
from tests.system import System, decode_entry

TZ = ZoneInfo("America/Sao_Paulo")
TRIPLES = {
    t["id"]: t for t in json.loads((CORPUS / "cloud_signature_triples.json").read_text())["triples"]
}
SECRET = TRIPLES["pywa_real_meta_delivery"]["app_secret"]
HANDSHAKE = json.loads((CORPUS / "cloud_verify_handshake.json").read_text())
VERIFY = "meatyhamhock"
TOKEN = "test-access-token"
NUMBER = "106540352242922"
PATH = "/webhooks/whatsapp"
T = TypeVar("T")


@dataclass
class Env:
    system: System
    graph: FakeGraph
    redis: redis_sync.Redis
    binary: redis_sync.Redis  # for the bus streams (FastStream's binary entries)
    keys: Keys

    def post(self, payload: dict[str, Any]) -> httpx.Response:
        """POST a notification signed like Meta signs it."""
        body = json.dumps(payload).encode()
        headers = {"content-type": "application/json", "x-hub-signature-256": sign(body, SECRET)}
        return self.system.http.post(PATH, content=body, headers=headers)

    def journal(self, conv: str) -> list[dict[str, Any]]:
        """The conversation's journal; none for a conversation nothing was stored for (404)."""
        response = self.system.http.get(f"/v1/conversations/{conv}/journal")
        if response.status_code == 404:
            return []
        response.raise_for_status()
        return response.json()["entries"]

    def events(self, conv: str, name: str) -> list[dict[str, Any]]:
        return [e for e in self.journal(conv) if e["event"] == name]

    def delivered(self, conv: str) -> list[dict[str, Any]]:
        """The conversation's reply.delivered journal entries, once there is one."""
        return eventually(lambda: self.events(conv, "reply.delivered"), what=f"delivery in {conv}")

    def record(self, wamid: str) -> dict[str, str]:
        return self.redis.hgetall(delivery_key(self.keys, wamid))

    def channel_events(self) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self.redis.lrange(events_key(self.keys), 0, -1)]

    @contextmanager
    def outbound_held(self, name: str) -> Iterator[None]:
        """A group of the test's own that reads nothing: the janitor trims only what every
        group has read, so replies published meanwhile stay on the stream for ``replies``."""
        self.binary.xgroup_create(self.keys.outbound, name, id="$", mkstream=True)
        try:
            yield
        finally:
            self.binary.xgroup_destroy(self.keys.outbound, name)

    def replies(self, conv: str) -> list[tuple[bytes, dict[bytes, bytes], Reply]]:
        """Every reply on the outbound stream for ``conv`` (entry id, fields, reply): a composed
        one, or a turn its last producer's commit completed (a ``MergeReady``), composed as the
        gateway composes it."""
        found = []
        pack = load_pack("ctsmash")
        for entry_id, fields in self.binary.xrange(self.keys.outbound):
            item = OUTBOUND_ITEM.validate_json(decode_entry(fields))
            if isinstance(item, MergeReady):
                item = reply_of(item.fields, merger_config(pack), pack, "test").reply
            if item.conversation_id == conv:
                found.append((entry_id, fields, item))
        return found

    def metric(self, line_start: str) -> float:
        text = self.system.http.get("/metrics").text
        lines = [line for line in text.splitlines() if line.startswith(line_start)]
        return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


@pytest.fixture(scope="module")
def env(redis_url: str) -> Iterator[Env]:
    prefix = f"orqtest-wa-{uuid.uuid4().hex[:8]}:"
    with FakeGraph.running(TOKEN) as graph:
        system_env = {
            "WHATSAPP_APP_SECRET": SECRET,
            "WHATSAPP_VERIFY_TOKEN": VERIFY,
            "WHATSAPP_ACCESS_TOKEN": TOKEN,
            "WHATSAPP_GRAPH_BASE_URL": graph.base_url,
            "WHATSAPP_MARK_READ": "true",
            "WHATSAPP_RETRY_BASE_MS": "20",
            "WHATSAPP_RETRY_MAX_MS": "300",
            "WHATSAPP_MAX_BODY_BYTES": "65536",
        }
        client = redis_sync.Redis.from_url(redis_url, decode_responses=True)
        binary = redis_sync.Redis.from_url(redis_url)
        try:
            with System.up(redis_url, prefix, **system_env) as system:
                yield Env(system, graph, client, binary, Keys(prefix))
        finally:
            for key in binary.scan_iter(match=f"{prefix}*", count=1000):
                binary.delete(key)
            client.close()
            binary.close()


# The corpus, file by file ---------------------------------------------------------------------


@dataclass(frozen=True)
class Inbound:
    """What one inbound corpus file must produce (POSTed signed to the whole system)."""

    texts: tuple[str, ...] = ()  # a turn for triage with these messages
    notice: tuple[str, ...] = ()  # a turn the gateway answered itself, of these kinds
    ignored: tuple[str, ...] = ()  # acknowledged and journaled, with these reasons
    statuses: tuple[str, ...] = ()  # the status each record holds afterwards
    echoes: int = 0  # messages the business sent from the WhatsApp Business app
    duplicates: int = 0
    sender: str = "972987654321"


INBOUND: dict[str, Inbound] = {
    "cloud_audio.json": Inbound(notice=("audio",)),
    "cloud_audio_voice.json": Inbound(notice=("audio",)),
    "cloud_batch_two_changes_netflie.json": Inbound(
        texts=("MESSAGE_BODY",), duplicates=1, sender="PHONE_NUMBER"
    ),
    "cloud_button_quick_reply.json": Inbound(texts=("title",)),
    "cloud_button_quick_reply_no_context.json": Inbound(texts=("title",)),
    "cloud_contacts.json": Inbound(notice=("contacts",)),
    "cloud_document.json": Inbound(texts=("caption",)),
    "cloud_field_account_update.json": Inbound(ignored=("field:account_update",)),
    "cloud_field_smb_message_echoes.json": Inbound(echoes=1, sender="WHATSAPP_USER_PHONE_NUMBER"),
    "cloud_field_template_status_update.json": Inbound(
        ignored=("field:message_template_status_update",)
    ),
    "cloud_image.json": Inbound(notice=("image",)),
    "cloud_image_with_url.json": Inbound(notice=("image",)),
    "cloud_interactive_button_reply.json": Inbound(texts=("title",)),
    "cloud_interactive_list_reply.json": Inbound(texts=("title",)),
    "cloud_interactive_list_reply_no_description.json": Inbound(texts=("title",)),
    "cloud_interactive_missing_object.json": Inbound(ignored=("errors", "unsupported_interactive")),
    "cloud_interactive_nfm_reply_flow.json": Inbound(notice=("flow",)),
    "cloud_location.json": Inbound(notice=("location",)),
    "cloud_location_current.json": Inbound(notice=("location",)),
    "cloud_order.json": Inbound(notice=("order",)),
    "cloud_reaction.json": Inbound(notice=("reaction",)),
    "cloud_reaction_removed.json": Inbound(ignored=("reaction_removed",)),
    "cloud_status_delivered.json": Inbound(statuses=("delivered",)),
    "cloud_status_failed.json": Inbound(statuses=("failed",)),
    "cloud_status_failed_131053_netflie.json": Inbound(statuses=("failed",)),
    "cloud_status_group_read.json": Inbound(statuses=("read",)),
    "cloud_status_played.json": Inbound(statuses=("played",)),
    "cloud_status_read.json": Inbound(statuses=("read",)),
    "cloud_status_read_conversation_netflie.json": Inbound(statuses=("read",)),
    "cloud_status_sent.json": Inbound(statuses=("sent",)),
    "cloud_status_sent_biz_opaque_callback.json": Inbound(statuses=("sent",)),
    "cloud_sticker.json": Inbound(notice=("sticker",)),
    "cloud_system_identity_changed.json": Inbound(ignored=("system",)),
    "cloud_system_user_changed_number.json": Inbound(ignored=("system",)),
    "cloud_text.json": Inbound(texts=("Body Text",)),
    "cloud_text_bsuid_only_no_from_netflie.json": Inbound(
        texts=("MESSAGE_BODY",), sender="BSUID_123"
    ),
    "cloud_text_ctwa_referral.json": Inbound(texts=("BODY",)),
    "cloud_text_forwarded_many_times.json": Inbound(texts=("text forwarded many times",)),
    "cloud_text_no_contact_profile_netflie.json": Inbound(
        texts=("MESSAGE_BODY",), sender="PHONE_NUMBER"
    ),
    "cloud_text_reply_context.json": Inbound(texts=("replied text",)),
    "cloud_unknown_type_131051_netflie.json": Inbound(
        notice=("unsupported",), sender="PHONE_NUMBER"
    ),
    "cloud_unsupported.json": Inbound(notice=("unsupported",)),
    "cloud_unsupported_with_type.json": Inbound(notice=("unsupported",)),
    "cloud_value_errors_130429_metadocs.json": Inbound(ignored=("errors",)),
    "cloud_video_forwarded.json": Inbound(texts=("caption",)),
    **{
        name: Inbound(ignored=("foreign_payload",))
        for name in (
            "evolution_messages_update_issue2010.json",
            "evolution_messages_upsert.json",
            "evolution_messages_upsert_image_base64.json",
            "evolution_messages_upsert_location.json",
            "evolution_messages_upsert_reaction.json",
            "evolution_messages_upsert_real_issue631.json",
            "twilio_signature_triple.json",
        )
    },
}
# Reasons journaled in the conversation; the others go to the channel's event list.
CONVERSATION_REASONS = {"system", "reaction_removed", "unsupported_interactive"}


@dataclass(frozen=True)
class Served:
    """An outbound corpus body the fake Graph API answers a reply's first request with."""

    step: Any
    requests: tuple[str, ...]  # kinds of the requests to the recipient, in order
    delivered: str  # the reply.delivered status in the journal
    wamid: str | None = None  # the served success wamid, found in a delivery record


def served_success(name: str) -> Served:
    body = json.loads((CORPUS / name).read_text())
    return Served(answer(body), ("text",), "sent", body["messages"][0]["id"])


OUTBOUND: dict[str, Served] = {
    **{
        name: served_success(name)
        for name in (
            "outbound_send_success_response.json",
            "outbound_send_success_response_metadocs.json",
            "outbound_send_template_success_response.json",
            "outbound_send_interactive_buttons_response.json",
            "outbound_send_interactive_list_response.json",
        )
    },
    # Served as KAPSO did (429, Retry-After: 120): longer than WHATSAPP_RETRY_MAX_MS, give up.
    "outbound_error_130429_kapso.json": Served(
        corpus("outbound_error_130429_kapso.json", 429, **{"Retry-After": "120"}),
        ("text",),
        "failed",
    ),
    "outbound_error_131056_via_ycloud_doc.json": Served(
        corpus("outbound_error_131056_via_ycloud_doc.json", 429), ("text", "text"), "sent"
    ),
    "outbound_error_131047_kapso.json": Served(
        corpus("outbound_error_131047_kapso.json", 400), ("text", "template"), "template"
    ),
    "outbound_error_190_invalid_token_netflie.json": Served(
        corpus("outbound_error_190_invalid_token_netflie.json", 401), ("text",), "failed"
    ),
    "outbound_error_190_expired_token_pywa.json": Served(
        corpus("outbound_error_190_expired_token_pywa.json", 400), ("text",), "failed"
    ),
    "outbound_error_100_unsupported_post_request.json": Served(
        corpus("outbound_error_100_unsupported_post_request.json", 400), ("text",), "failed"
    ),
    "outbound_error_100_invalid_parameter_read_outgoing.json": Served(
        corpus("outbound_error_100_invalid_parameter_read_outgoing.json", 400), ("text",), "failed"
    ),
}
REQUEST_SHAPES = (
    "outbound_send_text_request.json",
    "outbound_send_text_request_metadocs.json",
    "outbound_send_text_reply_context_request.json",
    "outbound_send_template_request.json",
    "outbound_send_interactive_buttons_request.json",
    "outbound_send_interactive_list_request.json",
    "outbound_mark_read_typing_indicator_request.json",
    "outbound_mark_read_success_response.json",
)
SPECIAL = (
    "cloud_verify_handshake.json",
    "cloud_signature_triples.json",
    "cloud_signed_body_pywa.json",
    "cloud_signed_body_unicode_escaped_whatsapp_api_js.txt",
    "error_object_131047_webhook_style_pywa.json",
    "error_object_131053_webhook_style_pywa.json",
)


def test_every_corpus_file_has_an_expected_outcome() -> None:
    files = {p.name for p in CORPUS.iterdir() if p.name != "SOURCES.md"}
    tables = [set(INBOUND), set(OUTBOUND), set(REQUEST_SHAPES), set(SPECIAL)]
    assert set().union(*tables) == files
    assert sum(len(t) for t in tables) == len(files)


def isolate(payload: Any, tag: str) -> Any:
    """Give a corpus payload its own business number and status ids: files that reuse the
    same wamid and sender stay independent (each file's outcome is its own). Placeholders such
    as ``<BUSINESS_PHONE_NUMBER_ID>`` lose their brackets: a conversation id must not have them."""
    if not isinstance(payload, dict):
        return payload
    for entry in payload.get("entry", []):
        for change in entry.get("changes", []):
            value = change.get("value", {})
            metadata = value.get("metadata")
            if isinstance(metadata, dict) and "phone_number_id" in metadata:
                metadata["phone_number_id"] = f"{unbracket(metadata['phone_number_id'])}-{tag}"
            for echo in value.get("message_echoes", []):
                echo["to"] = unbracket(echo["to"])
            for status in value.get("statuses", []):
                status["id"] = f"{status['id']}-{tag}"
    return payload


def unbracket(value: str) -> str:
    return value.strip("<>")


def number_of(payload: Any) -> str | None:
    try:
        return payload["entry"][0]["changes"][0]["value"]["metadata"]["phone_number_id"]
    except (KeyError, IndexError, TypeError):
        return None


def test_inbound_corpus(env: Env) -> None:
    turns: dict[str, tuple[str, str, Inbound, dict[str, Any]]] = {}
    for index, (name, expect) in enumerate(sorted(INBOUND.items())):
        payload = isolate(json.loads((CORPUS / name).read_text()), f"f{index}")
        before = len(env.channel_events())
        started = time.monotonic()
        response = env.post(payload)
        assert time.monotonic() - started < 2, f"{name}: Meta must get its 200 fast"
        fresh = 1 if expect.texts or expect.notice else 0
        assert response.status_code == 200, name
        assert response.json() == {
            "messages": fresh,
            "duplicates": expect.duplicates,
            "statuses": len(expect.statuses),
            "echoes": expect.echoes,
            "ignored": len(expect.ignored),
        }, name
        number = number_of(payload)
        conv = conversation_id(number, expect.sender) if number else None
        elsewhere = [e["reason"] for e in env.channel_events()[before:]]
        assert elsewhere == [r for r in expect.ignored if r not in CONVERSATION_REASONS], name
        if conv:
            ignored = [e["reason"] for e in env.events(conv, "whatsapp.ignored")]
            assert ignored == [r for r in expect.ignored if r in CONVERSATION_REASONS], name
        statuses = payload["entry"][0]["changes"][0]["value"].get("statuses", []) if conv else []
        held = [env.record(s["id"]).get("status") for s in statuses]
        assert tuple(held) == expect.statuses, name
        if fresh:
            turns[name] = (number, conv, expect, payload)  # type: ignore[assignment]

    # Every turn is answered (the corpus timestamps are from 2023, so its 24-hour window is
    # long closed: the reply is replaced by the pack's template, once per turn).
    env.graph.wait_for(
        lambda reqs: all(
            any(r.phone_number_id == n and r.kind == "template" for r in reqs)
            for n, *_ in turns.values()
        ),
        timeout_s=30,
    )
    for name, (number, conv, expect, payload) in turns.items():
        sent = [r for r in env.graph.requests if r.phone_number_id == number and r.kind != "read"]
        assert [(r.kind, r.recipient) for r in sent] == [("template", expect.sender)], name
        message = payload["entry"][0]["changes"][0]["value"]["messages"][0]
        reads = [r for r in env.graph.requests if r.phone_number_id == number and r.kind == "read"]
        assert [r.body["message_id"] for r in reads] == [message["id"]], name
        delivered = env.delivered(conv)
        assert [d["status"] for d in delivered] == ["template"], name
        assert "window_closed" in delivered[0]["detail"], name
        started = env.events(conv, "turn.started")
        assert len(started) == 1, name
        assert (
            started[0]["now"] == datetime.fromtimestamp(int(message["timestamp"]), TZ).isoformat()
        )
        notices = env.events(conv, "whatsapp.notice")
        if expect.texts:
            assert started[0]["messages"] == list(expect.texts) and not notices, name
        else:
            assert [n["kinds"] for n in notices] == [list(expect.notice)], name
        meta = env.system.conversation(conv)["meta"]
        assert meta["channel"] == "whatsapp" and meta["contact"] == expect.sender, name


def test_the_real_meta_signed_body(env: Env) -> None:
    triple = TRIPLES["pywa_real_meta_delivery"]
    body = (CORPUS / triple["body_file"]).read_bytes()
    headers = {"x-hub-signature-256": triple["x_hub_signature_256"]}
    response = env.system.http.post(PATH, content=body, headers=headers)
    assert response.status_code == 200 and response.json()["messages"] == 1
    conv = conversation_id("277321005464405", "972544401243")
    started = eventually(lambda: env.events(conv, "turn.started"), what="pywa turn")
    assert started[0]["messages"] == ["Hey there! I am using PyWa."]
    tampered = env.system.http.post(PATH, content=body.replace(b"Hey", b"Hay"), headers=headers)
    assert tampered.status_code == 401


def test_bad_or_missing_signature_stores_nothing(env: Env) -> None:
    payload = message_webhook(NUMBER, "5511900000001", "wamid.unsigned", int(time.time()))
    body = json.dumps(payload).encode()
    for headers in (
        {},
        {"x-hub-signature-256": "sha256=" + "0" * 64},
        {"x-hub-signature-256": sign(body, "other")},
    ):
        assert env.system.http.post(PATH, content=body, headers=headers).status_code == 401
    conv = conversation_id(NUMBER, "5511900000001")
    assert env.system.http.get(f"/v1/conversations/{conv}/journal").status_code == 404
    assert not env.redis.exists(env.keys.dedupe(conv, "wamid.unsigned"))
    assert env.metric('orq_whatsapp_webhooks_total{outcome="bad_signature",tenant=""}') >= 3


def test_bodies_over_the_configured_size_are_413(env: Env) -> None:
    payload = message_webhook(
        NUMBER, "5511900000002", "wamid.big", int(time.time()), text="a" * 70_000
    )
    response = env.post(payload)
    assert response.status_code == 413
    conv = conversation_id(NUMBER, "5511900000002")
    assert env.system.http.get(f"/v1/conversations/{conv}/journal").status_code == 404


def test_verification_handshake(env: Env) -> None:
    sample = HANDSHAKE["meta_docs_sample"]
    ok = env.system.http.get(PATH, params=sample["request"]["query"])
    expected = sample["expected_when_token_matches"]
    assert (ok.status_code, ok.text) == (expected["status"], expected["body"])
    assert ok.headers["content-type"].startswith("text/plain")
    for case in HANDSHAKE["whatsapp_api_js_test"]["cases"]:  # another verify token: refused
        assert env.system.http.get(PATH, params=case["query"]).status_code == 403


def test_twilio_signed_requests_are_not_meta_signed(env: Env) -> None:
    twilio = json.loads((CORPUS / "twilio_signature_triple.json").read_text())
    response = env.system.http.post(
        PATH, data=twilio["params"], headers={"x-twilio-signature": twilio["x_twilio_signature"]}
    )
    assert response.status_code == 401


# Delivery through the fake Graph API ------------------------------------------------------------


def fresh_sender() -> str:
    return f"55119{uuid.uuid4().int % 10**8:08d}"


def say(
    env: Env,
    sender: str,
    kind: str = "image",
    *,
    text: str | None = None,
    ago_s: int = 0,
    at: int | None = None,
) -> tuple[str, str]:
    """Post one inbound message (sent ``at``, by default now, or ``ago_s`` seconds before);
    (conversation, wamid)."""
    wamid = f"wamid.IN{uuid.uuid4().hex[:12]}"
    sent = (int(time.time()) if at is None else at) - ago_s
    payload = message_webhook(NUMBER, sender, wamid, sent, kind=kind, text=text)
    response = env.post(payload)
    assert response.status_code == 200 and response.json()["messages"] == 1, response.text
    return conversation_id(NUMBER, sender), wamid


def texts_to(env: Env, sender: str) -> list[GraphRequest]:
    return [r for r in env.graph.to(sender) if r.kind in ("text", "template")]


@pytest.mark.parametrize("name", sorted(OUTBOUND))
def test_outbound_corpus(env: Env, name: str) -> None:
    served = OUTBOUND[name]
    sender = fresh_sender()
    env.graph.script(NUMBER, sender, served.step)
    conv, _ = say(env, sender)
    delivered = env.delivered(conv)
    assert [d["status"] for d in delivered] == [served.delivered], delivered
    assert tuple(r.kind for r in texts_to(env, sender)) == served.requests
    if served.wamid:
        record = env.record(served.wamid)
        assert record["conversation_id"] == conv and record["status"] == "accepted"
        assert record["turn_id"] == delivered[0]["turn_id"] and record["slot"] == "0"


def test_request_shapes_match_the_corpus(env: Env) -> None:
    sender = fresh_sender()
    env.graph.script(NUMBER, sender, corpus("outbound_error_131047_kapso.json"))
    env.graph.script(
        NUMBER,
        "",
        answer(json.loads((CORPUS / "outbound_mark_read_success_response.json").read_text())),
    )
    _, wamid = say(env, sender)
    env.graph.wait_for(lambda _: len(texts_to(env, sender)) == 2)
    text, template = texts_to(env, sender)
    for name in REQUEST_SHAPES:
        theirs = json.loads((CORPUS / name).read_text())
        if name.startswith("outbound_send_template"):
            assert set(template.body) == set(theirs)
            assert set(template.body["template"]) <= set(theirs["template"]) | {"language"}
        elif name.startswith("outbound_send_text"):
            assert set(text.body) == set(theirs) - {"context"}
            assert set(theirs["text"]) <= set(text.body["text"])
        elif name.startswith("outbound_send_interactive"):
            for key in ("messaging_product", "recipient_type"):
                assert text.body[key] == theirs[key]
        elif name == "outbound_mark_read_typing_indicator_request.json":
            (read,) = env.graph.reads(wamid)
            assert read.body == {**theirs, "message_id": wamid}
        else:  # the read receipt's answer was served; the send went on
            assert env.graph.reads(wamid) and text.kind == "text"
    assert text.authorization == f"Bearer {TOKEN}" and text.version == "v24.0"


def test_text_is_answered_in_order_and_statuses_update_the_records(env: Env) -> None:
    sender = fresh_sender()
    at = int(time.time())
    with env.outbound_held(f"hold-{sender}"):
        text = "quero agendar uma aula experimental e onde fica?"
        # Sent at ``at``: the reply window is counted from the message's own timestamp.
        conv, wamid = say(env, sender, "text", text=text, at=at)
        (delivered,) = env.delivered(conv)
        assert delivered["status"] == "sent"
        ((_, _, reply),) = env.replies(conv)
    sent = texts_to(env, sender)
    assert [r.body["text"]["body"] for r in sent] == reply.bubbles  # strictly in order
    claims = [env.redis.get(env.keys.sent(conv, reply.turn_id, i)) for i in range(len(sent))]
    assert [f"sent:{w}" for w in delivered["detail"].split()] == claims
    assert env.graph.reads(wamid)[0].body["typing_indicator"] == {"type": "text"}
    meta = env.system.conversation(conv)["meta"]
    assert meta["window_expires_at"] == datetime.fromtimestamp(at + 86400, TZ).isoformat()
    first = delivered["detail"].split()[0]
    for status in ("delivered", "sent", "read"):  # out of order: read wins, sent never undoes it
        env.post(status_webhook(NUMBER, sender, first, status, at + 5))
    record = env.record(first)
    assert record["status"] == "read" and record["turn_id"] == reply.turn_id
    assert {"accepted_at", "sent_at", "delivered_at", "read_at"} <= set(record)


def test_a_fragment_is_read_with_typing_while_the_gateway_waits_for_the_rest(env: Env) -> None:
    """ "oi" alone is a fragment: it is marked read with "typing..." when the longer wait starts;
    the question after it joins the same turn, whose start marks the question read."""
    sender = fresh_sender()
    conv, greeting = say(env, sender, "text", text="oi")
    env.graph.wait_for(lambda requests: any(r.body.get("message_id") == greeting for r in requests))
    assert env.events(conv, "turn.started") == []  # read while waiting, not at the turn's start
    (typing,) = env.graph.reads(greeting)
    assert typing.body["typing_indicator"] == {"type": "text"}
    _, question = say(env, sender, "text", text="onde fica a CT?")
    env.delivered(conv)
    (started,) = env.events(conv, "turn.started")
    assert started["messages"] == ["oi", "onde fica a CT?"]
    assert len(env.graph.reads(greeting)) == 1 and env.graph.reads(question)


def test_a_statement_alone_is_read_once_while_waiting_not_again_as_its_turn_starts(
    env: Env,
) -> None:
    """A message that asks nothing may go on: it is marked read with "typing..." as the longer
    wait starts, and the turn it ends up alone in does not mark it read a second time."""
    sender = fresh_sender()
    conv, statement = say(env, sender, "text", text="quero marcar uma aula experimental")
    env.delivered(conv)
    (started,) = env.events(conv, "turn.started")
    assert started["quiet_rule"] == "fragment"
    assert len(env.graph.reads(statement)) == 1


def test_throttling_is_retried_with_backoff_then_sent(env: Env) -> None:
    sender = fresh_sender()
    env.graph.script(NUMBER, sender, corpus("outbound_error_130429_kapso.json", 400))
    retried = env.metric('orq_whatsapp_sends_total{kind="text",outcome="retried",tenant=""}')
    conv, _ = say(env, sender, "location")
    (delivered,) = env.delivered(conv)
    first, second = texts_to(env, sender)
    assert delivered["status"] == "sent" and first.body == second.body
    assert (
        env.metric('orq_whatsapp_sends_total{kind="text",outcome="retried",tenant=""}')
        == retried + 1
    )
    assert (
        env.metric('orq_whatsapp_errors_total{category="throttled",code="130429",tenant=""}') >= 1
    )


def test_outside_the_window_the_template_replaces_the_reply(env: Env) -> None:
    sender = fresh_sender()
    conv, _ = say(env, sender, "image", ago_s=25 * 3600)
    (delivered,) = env.delivered(conv)
    assert delivered["status"] == "template" and "window_closed" in delivered["detail"]
    (template,) = texts_to(env, sender)  # no text was even tried
    expected = load_pack("ctsmash").sections["whatsapp"]["reengagement_template"]
    assert template.body["template"] == {
        "name": expected["name"],
        "language": {"code": expected["language"]},
    }


def test_a_failed_status_with_131047_sends_the_template_once(env: Env) -> None:
    sender = fresh_sender()
    conv, _ = say(env, sender, "sticker")
    (delivered,) = env.delivered(conv)
    wamid = delivered["detail"]
    error = json.loads((CORPUS / "error_object_131047_webhook_style_pywa.json").read_text())
    failed = status_webhook(NUMBER, sender, wamid, "failed", int(time.time()), [error])
    assert env.post(failed).json()["statuses"] == 1
    env.graph.wait_for(lambda _: [r.kind for r in texts_to(env, sender)] == ["text", "template"])
    assert env.post(failed).status_code == 200  # Meta redelivers the status: no second template
    record = env.record(wamid)
    assert record["status"] == "failed" and json.loads(record["errors"])[0]["code"] == 131047
    journaled = eventually(lambda: env.events(conv, "whatsapp.failed"), what="failed status")
    assert journaled[0]["errors"][0]["code"] == 131047
    assert [r.kind for r in texts_to(env, sender)] == ["text", "template"]


def test_a_failed_status_with_another_error_is_recorded_only(env: Env) -> None:
    sender = fresh_sender()
    conv, _ = say(env, sender, "contacts")
    (delivered,) = env.delivered(conv)
    error = json.loads((CORPUS / "error_object_131053_webhook_style_pywa.json").read_text())
    env.post(
        status_webhook(NUMBER, sender, delivered["detail"], "failed", int(time.time()), [error])
    )
    record = env.record(delivered["detail"])
    assert record["status"] == "failed" and json.loads(record["errors"])[0]["code"] == 131053
    assert [e["errors"][0]["code"] for e in env.events(conv, "whatsapp.failed")] == [131053]
    assert [r.kind for r in texts_to(env, sender)] == ["text"]


def test_a_redelivered_reply_sends_nothing_twice(env: Env) -> None:
    sender = fresh_sender()
    with env.outbound_held(f"hold-{sender}"):
        conv, _ = say(env, sender, "image")
        env.delivered(conv)
        ((_, fields, reply),) = env.replies(conv)
    before = texts_to(env, sender)
    assert len(before) == len(reply.bubbles) == 1
    again = env.binary.xadd(env.keys.outbound, fields)
    eventually(lambda: outbound_acknowledged(env, again), what="the redelivered reply handled")
    assert texts_to(env, sender) == before
    assert len(env.events(conv, "reply.delivered")) == 1


def outbound_acknowledged(env: Env, entry_id: bytes) -> bool:
    (group,) = [g for g in env.binary.xinfo_groups(env.keys.outbound) if g["name"] == b"gateway"]
    last = tuple(int(p) for p in group["last-delivered-id"].split(b"-"))
    return last >= tuple(int(p) for p in entry_id.split(b"-")) and group["pending"] == 0


def test_a_refused_token_is_visible_in_health_and_metrics(env: Env) -> None:
    env.graph.token = "rotated-by-meta"
    try:
        sender = fresh_sender()
        conv, _ = say(env, sender, "audio")
        (delivered,) = env.delivered(conv)
        assert delivered["status"] == "failed" and "(190)" in delivered["detail"]
        health = env.system.http.get("/healthz").json()["whatsapp"]
        assert health["status"] == "error" and health["token"] == "invalid"
        assert health["last_error"]["code"] == 190 and health["last_error"]["category"] == "auth"
        assert any("190" in p for p in health["problems"])
        assert env.metric('orq_whatsapp_errors_total{category="auth",code="190",tenant=""}') >= 1
        assert env.metric('orq_whatsapp_token_valid{tenant=""}') == 0
        assert len(texts_to(env, sender)) == 1  # never retried
    finally:
        env.graph.token = TOKEN
    conv, _ = say(env, fresh_sender(), "audio")
    assert env.delivered(conv)[0]["status"] == "sent"
    health = env.system.http.get("/healthz").json()["whatsapp"]
    assert health["status"] == "ok" and health["token"] == "ok"
    assert env.metric('orq_whatsapp_token_valid{tenant=""}') == 1


def test_a_131047_status_before_the_send_response_still_sends_the_template(env: Env) -> None:
    """Meta's failed status (131047) arrives while the send's request is still waiting for its
    response: the status path cannot know the turn yet, so the send, on recording its wamid,
    finds the record failed and sends the pack's template instead."""
    sender = fresh_sender()
    wamid = f"wamid.EARLY{uuid.uuid4().hex[:10]}"
    accepted = {
        "messaging_product": "whatsapp",
        "contacts": [{"input": sender, "wa_id": sender}],
        "messages": [{"id": wamid}],
    }
    release = threading.Event()
    env.graph.script(NUMBER, sender, Step(body=accepted, hold=release))
    conv, _ = say(env, sender, "sticker")
    try:
        env.graph.wait_for(lambda _: len(texts_to(env, sender)) == 1)
        error = json.loads((CORPUS / "error_object_131047_webhook_style_pywa.json").read_text())
        failed = status_webhook(NUMBER, sender, wamid, "failed", int(time.time()), [error])
        assert env.post(failed).json()["statuses"] == 1
        record = env.record(wamid)
        assert record["status"] == "failed" and "turn_id" not in record
    finally:
        release.set()
    env.graph.wait_for(lambda _: [r.kind for r in texts_to(env, sender)] == ["text", "template"])
    (delivered,) = env.delivered(conv)
    assert delivered["status"] == "template" and "131047" in delivered["detail"]
    record = env.record(wamid)
    assert record["status"] == "failed" and record["turn_id"] == delivered["turn_id"]
    assert [r.kind for r in texts_to(env, sender)] == ["text", "template"]


def test_an_unsupported_message_is_answered_with_channel_other(env: Env) -> None:
    sender = fresh_sender()
    conv, _ = say(env, sender, "unsupported")
    (delivered,) = env.delivered(conv)
    assert delivered["status"] == "sent"
    (sent,) = texts_to(env, sender)
    other = load_pack("ctsmash").sections["texts"]["channel_other"]
    assert sent.body["text"]["body"] in other
    assert [n["kinds"] for n in env.events(conv, "whatsapp.notice")] == [["unsupported"]]
    assert not env.events(conv, "whatsapp.ignored")


def test_an_edited_message_is_a_new_message_of_its_conversation(env: Env) -> None:
    """Meta's ``edit`` webhook (messages reference, "edit"): the new content under
    ``edit.message``, the edited message's id in ``edit.original_message_id``."""
    sender = fresh_sender()
    conv, original = say(env, sender, "text", text="quero agendar uma aula experimental")
    env.delivered(conv)
    payload = message_webhook(
        NUMBER, sender, f"wamid.ED{uuid.uuid4().hex[:12]}", int(time.time()), kind="text"
    )
    message = payload["entry"][0]["changes"][0]["value"]["messages"][0]
    del message["text"]
    message["type"] = "edit"
    message["edit"] = {
        "original_message_id": original,
        "message": {"type": "text", "text": {"body": "onde fica a CT?"}},
    }
    assert env.post(payload).json()["messages"] == 1
    started = eventually(
        lambda: (s := env.events(conv, "turn.started")) and len(s) == 2 and s, what="second turn"
    )
    assert [s["messages"] for s in started] == [
        ["quero agendar uma aula experimental"],
        ["onde fica a CT?"],
    ]
    eventually(lambda: len(env.events(conv, "reply.delivered")) == 2, what="second reply")
    assert len(texts_to(env, sender)) >= 2


# Staff through the channel (issue 16) --------------------------------------------------------


def agent_message(env: Env, conv: str, **body: Any) -> httpx.Response:
    return env.system.http.post(f"/v1/conversations/{conv}/agent-messages", json=body)


def test_a_staff_message_goes_out_once_through_the_graph_api(env: Env) -> None:
    sender = fresh_sender()
    conv, _ = say(env, sender, "text", text="quero falar com um atendente")
    env.delivered(conv)
    bot_texts = len(texts_to(env, sender))
    body = {"agent": "maria", "text": "Oi! Aqui é a Maria da CT Smash.", "client_message_id": "a1"}
    first = agent_message(env, conv, **body)
    assert first.status_code == 202 and first.json()["duplicate"] is False
    assert agent_message(env, conv, **body).json()["duplicate"] is True
    env.graph.wait_for(lambda reqs: len(texts_to(env, sender)) > bot_texts, timeout_s=20)
    eventually(lambda: env.events(conv, "agent.delivered"), what="agent delivery journaled")
    staff = texts_to(env, sender)[bot_texts:]
    assert [r.body["text"]["body"] for r in staff] == ["Oi! Aqui é a Maria da CT Smash."]
    assert env.system.conversation(conv)["meta"]["handoff"] == "human"


def test_outside_the_window_staff_must_send_the_template(env: Env) -> None:
    sender = fresh_sender()
    conv, _ = say(env, sender, "text", text="oi", ago_s=25 * 3600)
    env.delivered(conv)
    refused = agent_message(env, conv, agent="maria", text="Oi, tudo bem?")
    assert refused.status_code == 409 and refused.json()["reason"] == "window_closed"
    before = len(texts_to(env, sender))
    sent = agent_message(env, conv, agent="maria", text="(modelo)", template=True)
    assert sent.status_code == 202
    env.graph.wait_for(lambda reqs: len(texts_to(env, sender)) > before, timeout_s=20)
    assert [r.kind for r in texts_to(env, sender)[before:]] == ["template"]


def test_a_message_from_the_business_app_hands_the_conversation_to_a_person(env: Env) -> None:
    sender = fresh_sender()
    conv, _ = say(env, sender, "text", text="onde fica a CT?")
    env.delivered(conv)
    echo = json.loads((CORPUS / "cloud_field_smb_message_echoes.json").read_text())
    value = echo["entry"][0]["changes"][0]["value"]
    value["metadata"]["phone_number_id"] = NUMBER
    value["message_echoes"][0].update(
        to=sender, id=f"wamid.ECHO{uuid.uuid4().hex[:10]}", timestamp=str(int(time.time()))
    )
    value["message_echoes"][0]["text"]["body"] = "Oi, aqui é a recepção!"
    assert env.post(echo).json()["echoes"] == 1
    assert env.post(echo).json()["echoes"] == 0, "a redelivered echo is recorded once"
    meta = env.system.conversation(conv)["meta"]
    assert meta["handoff"] == "human" and meta["handoff_by"] == "whatsapp-app"
    history = env.system.http.get(f"/v1/conversations/{conv}/messages").json()["messages"]
    staff = [m for m in history if m["author"] == "agent"]
    assert [(m["agent"], m["text"]) for m in staff] == [("whatsapp-app", "Oi, aqui é a recepção!")]

    replied = len(texts_to(env, sender))
    say(env, sender, "text", text="obrigado! e tem estacionamento?")
    eventually(lambda: env.events(conv, "message.held_for_human"), what="held for the person")
    assert len(texts_to(env, sender)) == replied, "the bot does not talk over a person"
