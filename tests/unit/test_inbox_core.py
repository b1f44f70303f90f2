"""The staff side's pure decisions: the summary line, who may write, the WhatsApp window."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.gateway.channels.http import LIMITS as HTTP
from services.gateway.inbox import agent_message_id, agent_refusal, window_closed
from services.gateway.summary import InboxConfig, contact_name, last_unanswered, summarize
from services.gateway.whatsapp.gateway import LIMITS as WHATSAPP
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = PACK.section("inbox", InboxConfig)
NOW = datetime(2026, 2, 10, 15, 0, tzinfo=UTC)


def test_the_summary_says_intents_stage_fields_and_the_unanswered_question() -> None:
    slices = {
        "triage": {"last_intents": ["trial", "faq"]},
        "trial": {"stage": "ask_date", "nome": "Paulo", "idade": 50, "nivel": "iniciante"},
    }
    line = summarize(slices, "tem aula de tênis?", PACK, CONFIG)
    assert "trial, faq" in line and "escolhendo data" in line
    assert "nome Paulo" in line and "idade 50" in line and "nível iniciante" in line
    assert "tem aula de tênis?" in line
    assert summarize({}, None, PACK, CONFIG) == PACK.text("inbox_summary_empty")


def test_the_last_unanswered_question_and_the_contact_name() -> None:
    journal = [
        {"event": "faq.answered", "unanswered": ["tem sauna?"]},
        {"event": "faq.answered", "unanswered": []},
        {"event": "trial.decided"},
    ]
    assert last_unanswered(journal) == "tem sauna?"
    assert last_unanswered([]) is None
    assert contact_name({"trial": {"nome": "Sofia", "contact_name": "Ana"}}) == "Ana"
    assert contact_name({"trial": {"nome": "Sofia"}}) == "Sofia"


def test_who_may_write_into_a_conversation() -> None:
    assert agent_refusal(None, "maria", take=False).status == 404  # type: ignore[union-attr]
    assert agent_refusal({"handoff": "bot"}, "maria", take=False) is None
    owned = {"handoff": "human", "handoff_by": "joao"}
    refused = agent_refusal(owned, "maria", take=False)
    assert refused is not None and refused.status == 409 and refused.reason == "owned_by_other"
    assert agent_refusal(owned, "maria", take=True) is None
    assert agent_refusal(owned, "joao", take=False) is None


def test_the_whatsapp_window_is_read_from_the_last_customer_message() -> None:
    open_until = (NOW + timedelta(hours=1)).isoformat()
    closed_at = (NOW - timedelta(minutes=1)).isoformat()
    whatsapp, http = WHATSAPP.reply_window, HTTP.reply_window
    assert not window_closed(
        {"channel": "whatsapp", "window_expires_at": open_until}, NOW, whatsapp
    )
    assert window_closed({"channel": "whatsapp", "window_expires_at": closed_at}, NOW, whatsapp)
    assert not window_closed({"channel": "http", "window_expires_at": closed_at}, NOW, http)


def test_a_client_message_id_names_the_same_message_on_every_retry() -> None:
    first = agent_message_id("c1", "abc")
    assert first == agent_message_id("c1", "abc") != agent_message_id("c2", "abc")
    assert agent_message_id("c1", None) != agent_message_id("c1", None)
