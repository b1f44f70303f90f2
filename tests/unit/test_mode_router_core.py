"""Mode router core: pack validation, capabilities, decision records and invariants."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from services.mode_router.config import ModeRouterConfig, ModesConfig
from services.mode_router.router import decide, on_event
from services.mode_router.state import ModeState
from services.mode_router.types import ConversationMode
from shared.capabilities import (
    CapabilitiesConfig,
    get_capabilities_version,
    tool_allowed,
    violation_record,
)
from shared.pack import Pack, PackError, load_pack

T0 = datetime(2025, 3, 4, 18, 0, tzinfo=UTC)


def raw(pack: str, section: str) -> dict:
    return copy.deepcopy(load_pack(pack).sections[section])


@pytest.mark.parametrize("pack", ["ctsmash", "staffing"])
def test_both_packs_load(pack):
    config = ModeRouterConfig.from_pack(load_pack(pack))
    assert set(config.modes.allowed_transitions) == set(ConversationMode)
    assert set(config.capabilities.modes) == set(ConversationMode)
    for spec in config.modes.confirmation_required:
        assert config.text(spec.text_key, seed="any")


def test_staffing_business_section():
    business = load_pack("staffing").sections["business"]
    assert business == {
        "name": "Revoluna",
        "assistant_name": "Julia",
        "timezone": "America/Sao_Paulo",
        "locale": "pt-BR",
    }


def test_staffing_never_reserves():
    caps = ModeRouterConfig.from_pack(load_pack("staffing")).capabilities
    for mode in ConversationMode:
        assert not tool_allowed(mode, "reserve_shift", caps)
        assert not any("reserv" in tool for tool in caps.modes[mode])
    assert tool_allowed(ConversationMode.OFERTA, "connect_to_owner", caps)
    assert not tool_allowed(ConversationMode.DISCOVERY, "search_shifts", caps)


def test_a_reservation_tool_in_the_staffing_pack_is_rejected():
    data = raw("staffing", "capabilities")
    data["modes"]["oferta"].append("reserve_shift")
    with pytest.raises(ValidationError, match="never-allowed"):
        CapabilitiesConfig.model_validate(data)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda m: m["intent_to_mode"].pop("recusa"), "intent_to_mode lacks"),
        (lambda m: m["allowed_transitions"].pop("followup"), "allowed_transitions lacks"),
        (lambda m: m["allowed_transitions"]["discovery"].remove("oferta"), "not in allowed"),
        (lambda m: m["automatic_transitions"].append(["discovery", "oferta"]), "both automatic"),
        (lambda m: m["intents"][0]["patterns"].append("(unclosed"), "pattern"),
        (lambda m: m["intents"].append(dict(m["intents"][0])), "two keyword rules"),
        (lambda m: m["pending"]["deny_intents"].append("interesse_vaga"), "both confirm and deny"),
        (lambda m: m["booking_confirmed"]["from_modes"].append("followup"), "its own to_mode"),
        (lambda m: m.update(cooldown={"minutes": 5, "exempt_rules": ["typo"]}), "exempt_rules"),
    ],
)
def test_inconsistent_modes_sections_are_rejected(mutate, message):
    data = raw("ctsmash", "modes")
    mutate(data)
    with pytest.raises(ValidationError, match=message):
        ModesConfig.model_validate(data)


def test_a_missing_question_text_is_rejected():
    sections = copy.deepcopy(load_pack("ctsmash").sections)
    del sections["texts"]["modes_confirm_trial_schedule"]
    with pytest.raises(PackError, match="modes_confirm_trial_schedule"):
        ModeRouterConfig.from_pack(Pack("broken", sections))


def test_capabilities_version_tracks_the_table_not_its_order():
    caps = ModeRouterConfig.from_pack(load_pack("ctsmash")).capabilities
    version = get_capabilities_version(caps)
    label, digest = version.split("+")
    assert label == "ctsmash-2025.1" and len(digest) == 8

    data = caps.model_dump(mode="json")
    data["modes"]["oferta"] = list(reversed(data["modes"]["oferta"]))
    assert get_capabilities_version(CapabilitiesConfig.model_validate(data)) == version
    data["modes"]["oferta"].append("send_location")
    assert get_capabilities_version(CapabilitiesConfig.model_validate(data)) != version


def test_violation_record():
    assert violation_record("c-9", "discovery", "tool", "search_shifts") == {
        "event": "violation_attempt",
        "conversa_id": "c-9",
        "mode": "discovery",
        "violation_type": "tool",
        "attempted": "search_shifts",
    }
    with pytest.raises(ValueError, match="violation_type"):
        violation_record("c-9", "discovery", "prompt", "x")  # type: ignore[arg-type]


def test_decision_record_has_the_seed_fields():
    config = ModeRouterConfig.from_pack(load_pack("staffing"))
    outcome = decide(
        None,
        conversa_id="c-1",
        text="Oi, quero saber mais",
        now=datetime(2025, 1, 6, 12, 0),  # naive → UTC
        config=config,
        turn_id="turn-1",
    )
    record = outcome.record
    assert record == {
        "timestamp": "2025-01-06T12:00:00Z",
        "conversa_id": "c-1",
        "turn_id": "turn-1",
        "current_mode": "discovery",
        "detected_intent": "interesse_vaga",
        "intent_confidence": 0.75,
        "intent_evidence": "interesse: 'quero saber'",
        "proposed_mode": "oferta",
        "trigger": "intent_interesse_vaga",
        "validator_decision": "pending",
        "transition_reason": "aguardando micro-confirmação",
        "final_mode": "discovery",
        "pending_transition": "oferta",
        "bootstrapped": True,
        "capabilities_version": get_capabilities_version(config.capabilities),
    }
    json.dumps(record)  # journal-ready


def test_state_round_trips_and_accepts_naive_times():
    config = ModeRouterConfig.from_pack(load_pack("ctsmash"))
    outcome = decide(None, conversa_id="c", text="quero ver os horários", now=T0, config=config)
    stored = outcome.state.model_dump_json()
    assert ModeState.model_validate_json(stored) == outcome.state
    naive = ModeState(
        mode="discovery", source="inbound", updated_at=datetime(2025, 1, 1), updated_reason="x"
    )
    assert naive.updated_at.tzinfo is UTC


# --- invariants over arbitrary CT Smash conversations --------------------------------------

CT = ModeRouterConfig.from_pack(load_pack("ctsmash"))
MESSAGES = [
    "oi",
    "sim",
    "quero marcar uma aula",
    "quanto custa?",
    "João, 27 anos",
    "terça às 19h",
    "agora não",
    "não quero",
    "como funciona?",
    "",
]
STEP = st.tuples(
    st.sampled_from([*MESSAGES, "<booked>"]),
    st.sampled_from([0.5, 3, 6, 40, 60 * 24 * 8]),  # minutes since the previous step
)


def _reachable(before: ModeState, after: ModeState, trigger: str, decision: str) -> bool:
    pair = (before.mode, after.mode)
    modes = CT.modes
    if decision == "confirm":
        return modes.confirmation_for(*pair) is not None and before.pending_transition == after.mode
    if trigger == "reserva_confirmada":
        return before.mode in modes.booking_confirmed.from_modes
    if trigger.startswith("silencio_"):
        return after.mode == modes.silence.to_mode
    return modes.allows(*pair) and modes.confirmation_for(*pair) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=12))
def test_every_mode_change_follows_the_pack(steps):
    now = T0
    outcome = decide(None, conversa_id="p", text="oi", now=now, config=CT)
    for text, minutes in steps:
        previous_at, now = now, now + timedelta(minutes=minutes)
        before = outcome.state
        if text == "<booked>":
            outcome = on_event(
                before, conversa_id="p", event_type="trial.booked", now=now, config=CT
            )
        else:
            outcome = decide(
                before,
                conversa_id="p",
                text=text,
                now=now,
                previous_message_at=previous_at,
                config=CT,
            )
        after, record = outcome.state, outcome.record
        decision = record["validator_decision"]
        if after.mode != before.mode:
            assert decision in ("apply", "confirm")
            assert _reachable(before, after, record["trigger"], decision), (before, after, record)
        else:
            assert decision not in ("apply", "confirm")
        assert (after.pending_transition is None) == (after.pending_transition_at is None)
        opened = after.pending_transition is not None and after.pending_transition_at == now
        assert (outcome.question is not None) == opened
        assert record["final_mode"] == after.mode.value
