"""Issue 19 end to end: the staffing pack (Revoluna, the mode-router seed's domain) as a
deployment of its own, ``ORQ_PACK=staffing`` for every service, through the HTTP API.

A doctor's question gets the staffing FAQ's answer; interest in a shift gets the mode router's
micro-confirmation from the pack (the bridge to whoever offers the shift, never a reservation);
and a wish to book a trial class, which this pack knows nothing of, reaches no specialist: the
trial and enrollment services run, out of this pack's turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from shared.faq.config import FaqConfig
from shared.pack import load_pack
from tests.e2e.journey import Chat
from tests.system import System

PACK = load_pack("staffing")
FAQ = PACK.section("faq", FaqConfig)
START = "2026-07-01T10:00:00-03:00"
MINUTE = timedelta(minutes=1)


def answer_of(entry_id: str) -> str:
    return next(e.answer for e in FAQ.entries if e.id == entry_id).strip()


def said(reply: str, key: str) -> bool:
    """Whether the reply holds one of the pack text's variants (these take no placeholders)."""
    value = PACK.sections["texts"][key]
    return any(variant in reply for variant in ([value] if isinstance(value, str) else value))


@pytest.fixture(scope="module")
def staffing(redis_url: str, prefix: str) -> Iterator[System]:
    with System.up(redis_url, f"{prefix}staffing:", ORQ_PACK="staffing") as running:
        yield running


def test_a_doctor_gets_the_staffing_faq_and_the_bridge_question(staffing: System) -> None:
    chat = Chat(staffing, "staffing", START)
    assert said(chat.say("oi, tudo bem?"), "general_greeting")

    reply = chat.say("a Julia reserva o plantão pra mim?", after=MINUTE)
    assert answer_of("reserva") in reply
    [answered] = chat.journal("faq.answered")
    assert answered["entry_ids"] == ["reserva"]

    reply = chat.say("tem vaga de plantão?", after=MINUTE)
    assert answer_of("vagas") in reply
    assert said(reply, "modes_confirm_connect_to_owner")
    mode = chat.slice("mode")
    assert (mode["mode"], mode["pending_transition"]) == ("discovery", "oferta")

    assert said(chat.say("sim", after=MINUTE), "modes_bridge_accepted")
    assert chat.slice("mode")["mode"] == "oferta"


def test_a_trial_class_request_reaches_no_specialist(staffing: System) -> None:
    chat = Chat(staffing, "staffing-trial", START)
    reply = chat.say("quero agendar uma aula experimental")
    assert said(reply, "general_fallback")
    assert chat.decided("triage")["routes"] == []
    assert chat.state()["trial"] is None
