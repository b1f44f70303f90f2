"""Fuzzing every route of the running system: no input gets a 500, and afterwards every
conversation the fuzzing touched still answers a normal message.

Two generators: schemathesis, from the gateway's own OpenAPI document, and hypothesis
strategies aimed at what broke before (any unicode in texts, surrogates and control characters
included; ids from the rule and from outside it; times from year 1 to 9999 in any offset, and
things that are no time at all). CI-sized by default; ``ORQ_LOAD_SCALE`` makes it bigger.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta, timezone
from typing import Any
from urllib.parse import quote, unquote

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.gateway.auth import write_refusal
from shared.contracts import CONVERSATION_ID_PATTERN
from tests.load import load_size
from tests.support.fake_graph import message_webhook
from tests.system import System

EXAMPLES = load_size(15)  # per schemathesis operation; the hypothesis tests take 4x as many
ANSWER_WAIT_S = 90.0
NUMBER = "106540352242922"

# Random draws, plus the values that broke the gateway before, so a small run meets them.
TEXTS = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=300),
    st.sampled_from(["\ud800", "oi \udfff", "\x00\x07\u202e", "\r\n", " "]),
)
IDS = st.one_of(
    st.from_regex(CONVERSATION_ID_PATTERN, fullmatch=True),
    st.text(st.characters(exclude_categories=()), max_size=140),
    st.sampled_from(["../x", "a/b", "", " ", "{x}", "x" * 129, "wa:1:2"]),
)
OFFSETS = st.sampled_from([None, *(timezone(timedelta(hours=h)) for h in (-12, -3, 0, 14))])
TIMES = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "9999-12-31T23:59:59+14:00",
            "0001-01-01T00:00:00-12:00",
            "1969-12-31T23:59:59Z",
            "1999-12-31T12:00:00",
            "2000-01-01T00:00:00Z",
        ]
    ),
    st.datetimes(timezones=OFFSETS).map(lambda d: d.isoformat()),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.text(max_size=40),
)


@dataclass
class Fuzzed:
    """What a fuzz run saw: server errors, and conversations the bot may have answered."""

    system: System
    failures: list[str] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)

    def check(self, what: str, response: httpx.Response) -> None:
        if response.status_code >= 500:
            # The system's log tail shows the server's side of the first failure.
            log = "" if self.failures else "\n" + self.system.watcher.tail(30)
            self.failures.append(f"{what}: {response.status_code} {response.text[:200]}{log}")


def settings_for(n: int) -> Any:
    return settings(
        max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )


def post_json(system: System, path: str, body: Any) -> httpx.Response:
    """A JSON body as ASCII, so lone surrogates travel as ``\\ud800`` escapes."""
    raw = json.dumps(body, ensure_ascii=True).encode()
    return system.http.post(path, content=raw, headers={"content-type": "application/json"})


def test_fuzzing_every_route_makes_no_500_and_every_conversation_still_answers(
    system: System,
) -> None:
    seen = Fuzzed(system)
    schema_driven(system, seen)
    messages(system, seen)
    reads_and_handoffs(system, seen)
    webhooks(system, seen)
    assert seen.failures == []
    assert seen.touched, "the fuzzing should have had some messages accepted"
    unanswered = still_answers(system, sorted(seen.touched))
    assert unanswered == []


def schema_driven(system: System, seen: Fuzzed) -> None:
    api = schemathesis.openapi.from_url(f"{system.base_url}/openapi.json")
    operations = [result.ok() for result in api.get_all_operations()]
    assert {op.path for op in operations} >= {
        "/v1/messages",
        "/v1/conversations/{conversation_id}",
        "/v1/conversations/{conversation_id}/replies",
        "/v1/conversations/{conversation_id}/journal",
        "/v1/conversations/{conversation_id}/handoff",
    }
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings_for(EXAMPLES)
        def check(case: Any) -> None:
            if case.query and "wait" in case.query:
                case.query["wait"] = 0  # long-polls would only make the run slow
            response = case.call(base_url=system.base_url, timeout=30)
            seen.check(f"{case.method} {case.formatted_path}", response)
            if response.status_code < 300:
                seen.touched.update(touched_by(case.path, case.path_parameters, case.body))

        check()


def touched_by(path: str, path_parameters: Any, body: Any) -> list[str]:
    if path == "/v1/messages" and isinstance(body, dict):
        return [body["conversation_id"]]
    if path.endswith("/handoff") and path_parameters:
        return [unquote(path_parameters["conversation_id"])]  # schemathesis keeps it quoted
    return []


def messages(system: System, seen: Fuzzed) -> None:
    @given(conversation=IDS, text=TEXTS, sent_at=TIMES, extra=st.booleans())
    @settings_for(EXAMPLES * 4)
    def check(conversation: str, text: str, sent_at: Any, extra: bool) -> None:
        body: dict[str, Any] = {"conversation_id": conversation, "text": text}
        if sent_at is not None:
            body["sent_at"] = sent_at
        if extra:
            body["message_id"] = text[:40] or "m"
        response = post_json(system, "/v1/messages", body)
        seen.check(f"POST /v1/messages {body!r:.120}", response)
        if response.status_code == 202:
            seen.touched.add(conversation)
        else:
            assert 400 <= response.status_code < 500, response.text
            assert response.json()["detail"]

    check()


def reads_and_handoffs(system: System, seen: Fuzzed) -> None:
    suffixes = st.sampled_from(
        [
            "",
            "/journal",
            "/replies?wait=0",
            "/replies?after=x",
            "/replies?after=99999999999999999999-0",
            "/messages?before=1-99999999999999999999",
            "/handoff",
        ]
    )

    @given(conversation=IDS, suffix=suffixes, owner=st.sampled_from(["human", "bot", "x"]))
    @settings_for(EXAMPLES * 4)
    def check(conversation: str, suffix: str, owner: str) -> None:
        path = f"/v1/conversations/{quote(conversation, safe='', errors='backslashreplace')}"
        if suffix == "/handoff":
            response = post_json(system, path + suffix, {"owner": owner})
            if response.status_code == 200:
                seen.touched.add(conversation)
        else:
            response = system.http.get(path + suffix)
        seen.check(f"{path}{suffix}", response)

    check()


def webhooks(system: System, seen: Fuzzed) -> None:
    stamps = st.one_of(st.integers(min_value=-(10**15), max_value=10**15), st.text(max_size=20))

    @given(sender=IDS, text=TEXTS, stamp=stamps)
    @settings_for(EXAMPLES * 4)
    def check(sender: str, text: str, stamp: Any) -> None:
        payload = message_webhook(NUMBER, "1", f"wamid.{uuid.uuid4().hex}", 0, text=text)
        message = payload["entry"][0]["changes"][0]["value"]["messages"][0]
        message.update({"from": sender, "timestamp": stamp})
        response = post_json(system, "/webhooks/whatsapp", payload)
        seen.check(f"POST /webhooks/whatsapp from={sender!r:.40} ts={stamp!r:.40}", response)

    check()


def still_answers(system: System, conversations: list[str]) -> list[str]:
    """Conversations that gave no reply to a normal message within ``ANSWER_WAIT_S`` (in all).
    A conversation the fuzzing handed to a person is handed back first: while a person owns
    it, the bot is silent by design (an id the fuzzing never got stored is a 404: nothing to
    hand back). WhatsApp conversations take no HTTP messages (their own tests cover them)."""
    asked: dict[str, str] = {}
    for conversation in conversations:
        if write_refusal(conversation) is not None:
            continue
        path = f"/v1/conversations/{quote(conversation, safe='')}"
        handback = system.http.post(f"{path}/handoff", json={"owner": "bot"})
        assert handback.status_code in (200, 404), handback.text
        message_id = f"normal-{uuid.uuid4().hex}"
        response = system.post(conversation, "onde fica a CT?", message_id=message_id)
        assert response.status_code == 202, response.text
        asked[conversation] = message_id
    deadline = time.monotonic() + ANSWER_WAIT_S
    waiting = dict(asked)
    while waiting and time.monotonic() < deadline:
        for conversation, message_id in list(waiting.items()):
            if answered(system, conversation, message_id):
                del waiting[conversation]
        if waiting:
            # Block on the first waiting conversation's reply stream instead of spinning.
            first = next(iter(waiting))
            system.http.get(
                f"/v1/conversations/{quote(first, safe='')}/replies",
                params={"after": latest_cursor(system, first), "wait": 2},
            )
    return sorted(waiting)


def answered(system: System, conversation: str, message_id: str) -> bool:
    """True once a reply was delivered for the turn that carried ``message_id``."""
    path = f"/v1/conversations/{quote(conversation, safe='')}"
    entries = system.http.get(f"{path}/journal").json()["entries"]
    turns = {
        e["turn_id"]
        for e in entries
        if e["event"] == "turn.started" and message_id in e.get("message_ids", [])
    }
    if not turns:
        return False
    replies = system.http.get(f"{path}/replies", params={"wait": 0}).json()["replies"]
    return any(r["turn_id"] in turns for r in replies)


def latest_cursor(system: System, conversation: str) -> str:
    path = f"/v1/conversations/{quote(conversation, safe='')}/replies"
    return system.http.get(path, params={"wait": 0}).json()["cursor"]
