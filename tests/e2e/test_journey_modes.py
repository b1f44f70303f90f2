"""Issue 5 end to end: the funnel mode of a CT Smash conversation through the HTTP API, with
every timing (silence, cooldown, pending timeout) driven by the messages' ``sent_at``."""

from __future__ import annotations

from datetime import datetime, timedelta

from services.mode_router.config import ModeRouterConfig
from services.mode_router.decision_log import ModeDecisionLog
from services.triage.config import load_config
from shared.capabilities import get_capabilities_version
from tests.e2e.journey import PACK, Chat, assert_said, eventually, said, together
from tests.system import System

MODES = ModeRouterConfig.from_pack(PACK)
QUESTION = next(
    spec.text_key
    for spec in MODES.modes.confirmation_required
    if (spec.from_mode, spec.to_mode) == ("discovery", "oferta")
)
START = "2026-07-01T10:00:00-03:00"  # a Wednesday
MINUTE = timedelta(minutes=1)
PRICE = "quanto custa a mensalidade?"  # interest, answered by the FAQ: the question shows
OBJECTION = "agora não, tô sem tempo"


def decisions(chat: Chat) -> list[dict]:
    return chat.journal("MODE_DECISION")


def last_decision(chat: Chat) -> dict:
    found = [d for d in decisions(chat) if d["turn_id"] == chat.last["turn_id"]]
    assert len(found) == 1, found
    return found[0]


def mode(chat: Chat) -> dict:
    return chat.slice("mode")


def test_discovery_interest_confirmation_oferta_booking_followup(system: System) -> None:
    chat = Chat(system, "modes-journey", START)
    chat.say("oi, tudo bem?")
    first = last_decision(chat)
    assert first["bootstrapped"] is True and first["final_mode"] == "discovery"
    assert mode(chat)["source"] == "inbound"

    reply = chat.say(PRICE, after=MINUTE)
    assert_said(reply, QUESTION)
    pending = last_decision(chat)
    assert (pending["detected_intent"], pending["validator_decision"]) == (
        "interesse_vaga",
        "pending",
    )
    assert pending["proposed_mode"] == "oferta" and pending["pending_transition"] == "oferta"
    state = mode(chat)
    assert state["mode"] == "discovery" and state["pending_transition"] == "oferta"
    assert datetime.fromisoformat(state["pending_transition_at"]) == chat.now

    chat.say("sim", after=MINUTE)
    confirmed = last_decision(chat)
    assert confirmed["validator_decision"] == "confirm" and confirmed["final_mode"] == "oferta"
    state = mode(chat)
    assert state["mode"] == "oferta" and state["pending_transition"] is None

    booking = "quero agendar uma aula experimental: sou a Lia, 29 anos, iniciante, 07/07 às 19h"
    assert_said(chat.say(booking, after=MINUTE), "trial_ask_confirmation", hora="19:00")
    assert_said(chat.say("sim", after=MINUTE), "trial_booked")
    booking_turn = chat.last["turn_id"]

    # The booking is a domain event (trial.booked); the router reads it after the reply,
    # inside the cooldown of the confirmation two minutes earlier, which it is exempt from.
    eventually(lambda: mode(chat)["mode"] == "followup")
    [booked] = [d for d in decisions(chat) if d["trigger"] == "reserva_confirmada"]
    assert booked["turn_id"] == booking_turn and booked["validator_decision"] == "apply"
    assert (booked["current_mode"], booked["final_mode"]) == ("oferta", "followup")

    # The journal shows every decision (one per turn, one for the event) with its fields.
    entries = decisions(chat)
    turns = [e["turn_id"] for e in chat.journal("turn.started")]
    assert len(turns) == 5 and len(entries) == 6
    assert sorted(e["turn_id"] for e in entries) == sorted([*turns, booking_turn])
    assert [e["validator_decision"] for e in entries if e != booked] == [
        "reject",
        "pending",
        "confirm",
        "reject",
        "reject",
    ]
    fields = set(ModeDecisionLog.model_fields)
    version = get_capabilities_version(MODES.capabilities)
    for entry in entries:
        assert fields <= set(entry), fields - set(entry)
        assert entry["conversa_id"] == chat.id and entry["capabilities_version"] == version
        assert entry["detected_intent"] and entry["intent_evidence"] and entry["trigger"]
        assert entry["transition_reason"]
    started = {e["turn_id"]: e["now"] for e in chat.journal("turn.started")}
    for entry in entries:
        turn_now = datetime.fromisoformat(started[entry["turn_id"]])
        assert datetime.fromisoformat(entry["timestamp"]) == turn_now


def test_yes_to_the_micro_confirmation_is_understood(system: System) -> None:
    """Triage and the mode router read the same turn in parallel: whichever runs first, the
    "sim" that answers the router's question must not get the clarification menu."""

    def answer_yes() -> None:
        chat = Chat(system, "modes-yes", START)
        chat.say("oi")
        assert_said(chat.say(PRICE, after=MINUTE), QUESTION)
        reply = chat.say("sim", after=MINUTE)
        assert said(reply, load_config(PACK).clarification.texts.ask) is None, reply
        assert chat.slice("triage")["pending"] is None
        assert mode(chat)["mode"] == "oferta"

    together(*[answer_yes] * 8)


def test_silence_cooldown_and_pending_timeout_follow_business_time(system: System) -> None:
    silence = timedelta(days=MODES.modes.silence.days)
    cooldown = timedelta(minutes=MODES.modes.cooldown.minutes)
    timeout = timedelta(minutes=MODES.modes.pending.timeout_minutes)

    def silence_turns_into_reativacao() -> None:
        chat = Chat(system, "modes-silence", START)
        chat.say("oi")
        chat.say("oi", after=silence - timedelta(hours=1))
        assert last_decision(chat)["validator_decision"] == "reject"
        assert mode(chat)["mode"] == "discovery"
        chat.say("oi, voltei", after=silence + timedelta(hours=1))
        back = last_decision(chat)
        assert (back["trigger"], back["validator_decision"]) == ("silencio_7d", "apply")
        assert mode(chat)["mode"] == "reativacao"

    def cooldown_blocks_a_flip() -> None:
        chat = Chat(system, "modes-cooldown", START)
        chat.say("oi")
        chat.say(PRICE, after=MINUTE)
        chat.say("sim", after=MINUTE)
        assert mode(chat)["mode"] == "oferta"
        chat.say(OBJECTION, after=cooldown - 2 * MINUTE)
        blocked = last_decision(chat)
        assert (blocked["detected_intent"], blocked["proposed_mode"]) == ("objecao", "discovery")
        assert blocked["validator_decision"] == "reject"
        assert blocked["transition_reason"].startswith("cooldown")
        assert mode(chat)["mode"] == "oferta"
        chat.say(OBJECTION, after=3 * MINUTE)
        assert last_decision(chat)["validator_decision"] == "apply"
        assert mode(chat)["mode"] == "discovery"

    def pending_expires() -> None:
        chat = Chat(system, "modes-timeout", START)
        chat.say("oi")
        chat.say(PRICE, after=MINUTE)
        assert mode(chat)["pending_transition"] == "oferta"
        chat.say("sim", after=timeout + MINUTE)
        expired = last_decision(chat)
        assert expired["validator_decision"] == "cancel"
        assert "timeout" in expired["transition_reason"]
        state = mode(chat)
        assert state["mode"] == "discovery" and state["pending_transition"] is None

    together(silence_turns_into_reativacao, cooldown_blocks_a_flip, pending_expires)
