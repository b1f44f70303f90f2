"""CT Smash journeys through the mode router: a booking business's funnel."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.mode_router.bootstrap import bootstrap_mode
from services.mode_router.config import ModeRouterConfig
from services.mode_router.intents import IntentDetector
from services.mode_router.router import decide, on_event
from services.mode_router.state import ModeOutcome, ModeState
from services.mode_router.types import ConversationMode, DetectedIntent
from shared.capabilities import tool_allowed
from shared.pack import load_pack

CONFIG = ModeRouterConfig.from_pack(load_pack("ctsmash"))
T0 = datetime(2025, 3, 4, 18, 0, tzinfo=UTC)
QUESTIONS = CONFIG.texts["modes_confirm_trial_schedule"]
BOOKING_TOOLS = ["create_booking", "get_booking", "reschedule_booking", "cancel_booking"]


def say(state: ModeState | None, text: str, minutes: float, **kwargs) -> ModeOutcome:
    return decide(
        state,
        conversa_id="ct-1",
        text=text,
        now=T0 + timedelta(minutes=minutes),
        config=CONFIG,
        turn_id=f"turn-{minutes}",
        **kwargs,
    )


def booked(state: ModeState, minutes: float) -> ModeOutcome:
    outcome = on_event(
        state,
        conversa_id="ct-1",
        event_type="trial.booked",
        now=T0 + timedelta(minutes=minutes),
        config=CONFIG,
    )
    assert outcome is not None
    return outcome


def in_mode(mode: ConversationMode) -> ModeState:
    return ModeState(mode=mode, source="inbound", updated_at=T0, updated_reason="test")


def pending_oferta() -> ModeOutcome:
    """A discovery conversation that was just asked whether it wants the trial times."""
    first = say(None, "Oi, tudo bem?", 0)
    assert first.state.mode == ConversationMode.DISCOVERY
    return say(first.state, "Quanto custa pra jogar aí?", 1)


def test_full_journey_interest_question_yes_booking():
    asked = pending_oferta()
    assert asked.record["validator_decision"] == "pending"
    assert asked.state.mode == ConversationMode.DISCOVERY
    assert asked.state.pending_transition == ConversationMode.OFERTA
    assert asked.question in QUESTIONS
    assert asked.confirmation_type == "trial_schedule_confirm"

    yes = say(asked.state, "Siiim", 2)
    assert yes.record["validator_decision"] == "confirm"
    assert yes.state.mode == ConversationMode.OFERTA
    assert yes.state.pending_transition is None
    assert yes.question is None

    # The booking lands two minutes after the "sim": the cooldown must not swallow it.
    done = booked(yes.state, 4)
    assert done.record["validator_decision"] == "apply"
    assert done.record["trigger"] == "reserva_confirmada"
    assert done.state.mode == ConversationMode.FOLLOWUP


def test_question_variant_is_stable_per_turn():
    first = say(None, "Oi", 0)
    again = [say(first.state, "quais os horários?", 1).question for _ in range(3)]
    assert len(set(again)) == 1


def test_booking_from_discovery_ends_in_followup():
    done = booked(in_mode(ConversationMode.DISCOVERY), 0)
    assert done.state.mode == ConversationMode.FOLLOWUP
    assert done.state.last_transition_at == T0


def test_booking_from_followup_changes_nothing():
    again = booked(in_mode(ConversationMode.FOLLOWUP), 0)
    assert again.state.mode == ConversationMode.FOLLOWUP
    assert again.record["validator_decision"] == "reject"


def test_booking_while_pending_resolves_the_pending_into_followup():
    asked = pending_oferta()
    answered = say(asked.state, "terça às 19h", 2)
    done = booked(answered.state, 3)
    assert done.state.mode == ConversationMode.FOLLOWUP
    assert done.state.pending_transition is None
    assert done.state.pending_transition_at is None
    assert "substitui pending" in done.record["transition_reason"]


@pytest.mark.parametrize("answer", ["João, 27 anos", "terça às 19h", "sou iniciante", "Ana"])
def test_trial_answers_keep_the_pending_alive(answer):
    asked = pending_oferta()
    kept = say(asked.state, answer, 2)
    assert kept.record["validator_decision"] == "pending"
    assert kept.state.pending_transition == ConversationMode.OFERTA
    # The timeout still counts from the question, and the question is not asked again.
    assert kept.state.pending_transition_at == asked.state.pending_transition_at
    assert kept.question is None
    assert say(kept.state, "sim", 3).state.mode == ConversationMode.OFERTA


@pytest.mark.parametrize("answer", ["Ah não, só tava curioso", "agora não", "não", "achei caro"])
def test_refusal_or_objection_cancels_the_pending(answer):
    asked = pending_oferta()
    cancelled = say(asked.state, answer, 2)
    assert cancelled.record["validator_decision"] == "cancel"
    assert cancelled.state.mode == ConversationMode.DISCOVERY
    assert cancelled.state.pending_transition is None


def test_pending_expires_after_thirty_minutes():
    asked = pending_oferta()  # asked at minute 1
    late_yes = say(asked.state, "sim", 1 + 31)
    assert late_yes.record["validator_decision"] == "cancel"
    assert late_yes.state.mode == ConversationMode.DISCOVERY
    assert late_yes.state.pending_transition is None
    assert say(asked.state, "sim", 1 + 29).state.mode == ConversationMode.OFERTA


def test_new_interest_after_expiry_asks_again():
    asked = pending_oferta()
    again = say(asked.state, "quero saber os horários", 1 + 45)
    assert again.record["validator_decision"] == "pending"
    assert "expirada" in again.record["transition_reason"]
    assert again.state.pending_transition_at == T0 + timedelta(minutes=46)
    assert again.question in QUESTIONS


def test_event_keeps_pending_when_no_rule_applies():
    asked = pending_oferta()
    followup_state = asked.state.model_copy(update={"mode": ConversationMode.FOLLOWUP})
    kept = booked(followup_state, 2)
    assert kept.record["validator_decision"] == "pending"
    assert kept.state.pending_transition == ConversationMode.OFERTA


def test_seven_days_of_silence_reactivates():
    last = T0 - timedelta(days=7, minutes=1)
    back = say(
        in_mode(ConversationMode.FOLLOWUP), "oi, lembra de mim?", 0, previous_message_at=last
    )
    assert back.state.mode == ConversationMode.REATIVACAO
    assert back.record["trigger"] == "silencio_7d"


def test_six_days_of_silence_do_not_reactivate():
    last = T0 - timedelta(days=6, hours=23)
    back = say(in_mode(ConversationMode.FOLLOWUP), "oi", 0, previous_message_at=last)
    assert back.state.mode == ConversationMode.FOLLOWUP


def test_interest_after_reactivation_goes_straight_to_oferta():
    state = in_mode(ConversationMode.REATIVACAO)
    outcome = say(state, "quero marcar outra aula", 0)
    assert outcome.record["validator_decision"] == "apply"
    assert outcome.state.mode == ConversationMode.OFERTA
    assert outcome.question is None


def test_cooldown_blocks_a_flip_within_five_minutes():
    asked = pending_oferta()
    in_oferta = say(asked.state, "sim", 2)  # transition at minute 2
    flip = say(in_oferta.state, "vou pensar", 4)
    assert flip.record["validator_decision"] == "reject"
    assert flip.record["transition_reason"].startswith("cooldown")
    assert flip.state.mode == ConversationMode.OFERTA
    later = say(in_oferta.state, "vou pensar", 8)
    assert later.state.mode == ConversationMode.DISCOVERY


def test_greetings_and_questions_never_reach_followup():
    for text in ["Oi, voltei!", "como funciona a aula?", "desculpa a demora"]:
        for mode in (ConversationMode.DISCOVERY, ConversationMode.OFERTA):
            outcome = say(in_mode(mode), text, 0)
            assert outcome.state.mode == mode, (text, mode)


def test_booked_person_asking_for_another_class_gets_a_question():
    outcome = say(in_mode(ConversationMode.FOLLOWUP), "quero marcar mais uma aula", 0)
    assert outcome.record["validator_decision"] == "pending"
    assert outcome.confirmation_type == "new_class_confirm"
    assert outcome.question in CONFIG.texts["modes_confirm_new_class"]


def test_unmapped_event_is_ignored():
    state = in_mode(ConversationMode.OFERTA)
    assert (
        on_event(state, conversa_id="c", event_type="handoff.requested", now=T0, config=CONFIG)
        is None
    )


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("Oi! Queria agendar uma aula experimental", ConversationMode.OFERTA),
        ("Quais os HORÁRIOS?", ConversationMode.OFERTA),
        ("qto custa?", ConversationMode.OFERTA),
        ("Oi, tudo bem?", ConversationMode.DISCOVERY),
        ("Boa tarde", ConversationMode.DISCOVERY),
    ],
)
def test_bootstrap(text, mode):
    assert bootstrap_mode(text, "inbound", config=CONFIG.modes) == mode


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("vc tem horario pra iniciante?", DetectedIntent.INTERESSE_VAGA),
        ("Quero marcar!", DetectedIntent.PRONTO_FECHAR),
        ("Não, obrigada", DetectedIntent.RECUSA),
        ("tô sem tempo essa semana", DetectedIntent.OBJECAO),
        ("O que é beach tennis?", DetectedIntent.DUVIDA_PERFIL),
        ("terça às 19h", DetectedIntent.NEUTRO),
    ],
)
def test_detection_is_accent_and_slang_insensitive(text, intent):
    assert IntentDetector(CONFIG.modes).detect(text).intent == intent


@pytest.mark.parametrize("mode", list(ConversationMode))
@pytest.mark.parametrize("tool", BOOKING_TOOLS)
def test_booking_tools_are_allowed_in_every_mode(mode, tool):
    assert tool_allowed(mode, tool, CONFIG.capabilities)


def test_unknown_tools_and_modes_are_denied():
    caps = CONFIG.capabilities
    assert not tool_allowed(ConversationMode.OFERTA, "delete_everything", caps)
    assert not tool_allowed("vendas", "create_booking", caps)
    assert tool_allowed("oferta", "create_booking", caps)
