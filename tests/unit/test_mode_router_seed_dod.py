"""The seed's (E03) Definition-of-Done tests, run against the staffing pack (the seed's domain).

The seed's tests call ``datetime.utcnow()``; the core never reads the clock, so each test passes
a fixed ``NOW`` — naive, as the seed's times were — and the functions read it as UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.mode_router.bootstrap import bootstrap_mode, get_mode_source
from services.mode_router.config import ModeRouterConfig
from services.mode_router.intents import IntentDetector, IntentResult
from services.mode_router.proposer import TransitionProposal, TransitionProposer
from services.mode_router.router import check_confirmation, decide
from services.mode_router.types import ConversationMode, DetectedIntent
from services.mode_router.validator import TransitionDecision, TransitionValidator
from shared.pack import load_pack

CONFIG = ModeRouterConfig.from_pack(load_pack("staffing"))
MODES = CONFIG.modes
NOW = datetime(2025, 1, 6, 12, 0)  # naive, like the seed's utcnow()

NO_PROPOSAL = TransitionProposal(
    should_transition=False,
    from_mode=ConversationMode.DISCOVERY,
    to_mode=None,
    needs_confirmation=False,
    is_automatic=False,
    trigger="none",
    evidence="",
    confidence=0.0,
)


# --- the seed's DoD tests, literal inputs and expectations ---------------------------------


def test_detect_interesse_vaga():
    detector = IntentDetector(MODES)
    result = detector.detect("Tem vaga de cardiologia?")
    assert result.intent == DetectedIntent.INTERESSE_VAGA
    assert result.confidence >= 0.7


def test_discovery_to_oferta_needs_confirmation():
    proposer = TransitionProposer(MODES)
    intent = IntentResult(intent=DetectedIntent.INTERESSE_VAGA, confidence=0.8, evidence="tem vaga")
    proposal = proposer.propose(intent, ConversationMode.DISCOVERY, now=NOW)
    assert proposal.should_transition
    assert proposal.to_mode == ConversationMode.OFERTA
    assert proposal.needs_confirmation is True


def test_forbidden_transition_blocked():
    proposer = TransitionProposer(MODES)
    intent = IntentResult(intent=DetectedIntent.VOLTANDO, confidence=0.7, evidence="voltei")
    # DISCOVERY → FOLLOWUP is not in ALLOWED_TRANSITIONS
    proposal = proposer.propose(intent, ConversationMode.DISCOVERY, now=NOW)
    assert proposal.should_transition is False
    assert "not_allowed" in proposal.trigger


def test_pending_confirmed_applies():
    validator = TransitionValidator(MODES)
    result = validator.validate(
        proposal=NO_PROPOSAL,
        pending_transition=ConversationMode.OFERTA,
        pending_transition_at=NOW,
        mensagem_confirma=True,
        now=NOW,
    )
    assert result.decision == TransitionDecision.CONFIRM
    assert result.final_mode == ConversationMode.OFERTA


def test_pending_timeout_cancels():
    validator = TransitionValidator(MODES)
    result = validator.validate(
        proposal=NO_PROPOSAL,
        pending_transition=ConversationMode.OFERTA,
        pending_transition_at=NOW - timedelta(minutes=60),
        mensagem_confirma=False,
        now=NOW,
    )
    assert result.decision == TransitionDecision.CANCEL


def test_bootstrap_inbound_with_vaga():
    mode = bootstrap_mode(
        primeira_mensagem="Oi, vi uma vaga de cardiologia", origem="inbound", config=MODES
    )
    assert mode == ConversationMode.OFERTA


def test_bootstrap_inbound_cold():
    mode = bootstrap_mode(primeira_mensagem="Oi, tudo bem?", origem="inbound", config=MODES)
    assert mode == ConversationMode.DISCOVERY


def test_bootstrap_campaign():
    mode = bootstrap_mode(
        primeira_mensagem="qualquer coisa",
        origem="campaign:abc-123",
        campaign_mode="oferta",
        config=MODES,
    )
    assert mode == ConversationMode.OFERTA


# --- the seed's keyword rules: priority, confidences, evidence strings ------------------------


@pytest.mark.parametrize(
    ("text", "intent", "confidence", "evidence"),
    [
        ("Não quero, obrigado", DetectedIntent.RECUSA, 0.9, "recusa: 'não quero'"),
        (
            "quero reservar esse",
            DetectedIntent.PRONTO_FECHAR,
            0.85,
            "pronto para fechar: 'quero reservar'",
        ),
        # objeção outranks interesse ("valor")
        ("Preciso pensar no valor", DetectedIntent.OBJECAO, 0.7, "objeção: 'preciso pensar'"),
        (
            "Quero saber de plantões",
            DetectedIntent.INTERESSE_VAGA,
            0.75,
            "interesse: 'quero saber'",
        ),
        ("Como funciona isso?", DetectedIntent.DUVIDA_PERFIL, 0.7, "dúvida: 'como funciona'"),
        ("Oi Julia, voltei", DetectedIntent.VOLTANDO, 0.6, "voltando: 'oi'"),
        ("Bom dia", DetectedIntent.NEUTRO, 0.5, "sem sinal claro"),
        ("   ", DetectedIntent.NEUTRO, 0.0, "mensagem vazia"),
    ],
)
def test_detector_follows_the_seed_rules(text, intent, confidence, evidence):
    result = IntentDetector(MODES).detect(text)
    assert (result.intent, result.confidence, result.evidence) == (intent, confidence, evidence)


def test_recusa_wins_over_every_other_signal():
    # "quero saber" (interesse) and "depois" (objeção) are there too; recusa comes first.
    result = IntentDetector(MODES).detect("Quero saber depois, não tenho interesse")
    assert result.intent == DetectedIntent.RECUSA


# --- the seed's automatic rules -----------------------------------------------------------


def _neutral() -> IntentResult:
    return IntentDetector(MODES).detect("ok")


@pytest.mark.parametrize("mode", [m for m in ConversationMode if m != ConversationMode.REATIVACAO])
def test_silence_of_seven_days_proposes_reativacao(mode):
    proposal = TransitionProposer(MODES).propose(
        _neutral(), mode, last_message_at=NOW - timedelta(days=7), now=NOW
    )
    assert proposal.to_mode == ConversationMode.REATIVACAO
    assert (proposal.is_automatic, proposal.needs_confirmation) == (True, False)
    assert proposal.trigger == "silencio_7d"
    assert proposal.evidence == "silêncio de 7 dias"


def test_silence_under_seven_days_proposes_nothing():
    proposal = TransitionProposer(MODES).propose(
        _neutral(),
        ConversationMode.OFERTA,
        last_message_at=NOW - timedelta(days=7) + timedelta(minutes=1),
        now=NOW,
    )
    assert proposal.should_transition is False


def test_reservation_confirmed_moves_oferta_to_followup_only():
    proposer = TransitionProposer(MODES)
    from_oferta = proposer.propose(
        _neutral(), ConversationMode.OFERTA, reserva_confirmada=True, now=NOW
    )
    from_discovery = proposer.propose(
        _neutral(), ConversationMode.DISCOVERY, reserva_confirmada=True, now=NOW
    )
    assert (from_oferta.to_mode, from_oferta.trigger) == (
        ConversationMode.FOLLOWUP,
        "reserva_confirmada",
    )
    assert from_discovery.should_transition is False


def test_resolved_objection_in_oferta_goes_back_to_discovery():
    proposal = TransitionProposer(MODES).propose(
        _neutral(), ConversationMode.OFERTA, objecao_resolvida=True, now=NOW
    )
    assert proposal.to_mode == ConversationMode.DISCOVERY
    assert proposal.needs_confirmation is False


# --- the validator's timings ---------------------------------------------------------------


def _objection_in_oferta() -> TransitionProposal:
    intent = IntentDetector(MODES).detect("agora não")
    return TransitionProposer(MODES).propose(intent, ConversationMode.OFERTA, now=NOW)


def test_cooldown_blocks_a_transition_within_five_minutes():
    result = TransitionValidator(MODES).validate(
        _objection_in_oferta(), last_transition_at=NOW - timedelta(minutes=4, seconds=59), now=NOW
    )
    assert result.decision == TransitionDecision.REJECT
    assert result.final_mode == ConversationMode.OFERTA
    assert result.reason.startswith("cooldown")


def test_cooldown_over_after_five_minutes():
    result = TransitionValidator(MODES).validate(
        _objection_in_oferta(), last_transition_at=NOW - timedelta(minutes=5), now=NOW
    )
    assert result.decision == TransitionDecision.APPLY
    assert result.final_mode == ConversationMode.DISCOVERY


def test_pending_lives_exactly_thirty_minutes():
    validator = TransitionValidator(MODES)
    at_limit = validator.validate(
        NO_PROPOSAL,
        pending_transition=ConversationMode.OFERTA,
        pending_transition_at=NOW - timedelta(minutes=30),
        mensagem_confirma=True,
        now=NOW,
    )
    past_limit = validator.validate(
        NO_PROPOSAL,
        pending_transition=ConversationMode.OFERTA,
        pending_transition_at=NOW - timedelta(minutes=30, seconds=1),
        mensagem_confirma=True,
        now=NOW,
    )
    assert at_limit.decision == TransitionDecision.CONFIRM
    assert past_limit.decision == TransitionDecision.CANCEL


def test_unconfirmed_reply_cancels_the_pending_in_the_seed():
    result = TransitionValidator(MODES).validate(
        NO_PROPOSAL,
        pending_transition=ConversationMode.OFERTA,
        pending_transition_at=NOW - timedelta(minutes=1),
        mensagem_confirma=False,
        now=NOW,
    )
    assert result.decision == TransitionDecision.CANCEL
    assert result.final_mode == ConversationMode.DISCOVERY


def test_aware_and_naive_times_mix():
    result = TransitionValidator(MODES).validate(
        NO_PROPOSAL,
        pending_transition=ConversationMode.OFERTA,
        pending_transition_at=(NOW - timedelta(minutes=10)).replace(tzinfo=UTC),
        mensagem_confirma=True,
        now=NOW,
    )
    assert result.decision == TransitionDecision.CONFIRM


# --- the router's confirmation check -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "confirms"),
    [
        ("Sim, pode ser", True),
        ("blz", True),
        ("tá bom", True),
        ("tenho interesse sim", True),  # interesse confirms by itself
        ("Ah não, só tava curioso", False),
        ("preciso pensar, mas sim", False),  # objeção never confirms
        ("assim não dá", False),  # "sim" inside "assim" is not a yes
        ("podemos falar amanhã", False),  # "pode" inside "podemos" is not a yes
    ],
)
def test_check_confirmation(text, confirms):
    intent = IntentDetector(MODES).detect(text)
    assert check_confirmation(text, intent, ConversationMode.OFERTA, MODES) is confirms


def test_nothing_to_confirm_without_a_pending():
    intent = IntentDetector(MODES).detect("sim")
    assert check_confirmation("sim", intent, None, MODES) is False


# --- the seed's micro-confirmation flow, end to end through decide -------------------------


def _pending_state():
    first = decide(None, conversa_id="c1", text="Oi, tudo bem?", now=NOW, config=CONFIG)
    asked = decide(
        first.state,
        conversa_id="c1",
        text="Quero saber de plantões",
        now=NOW + timedelta(minutes=1),
        config=CONFIG,
        turn_id="t2",
    )
    return asked


def test_interest_in_discovery_asks_to_connect_to_the_owner():
    asked = _pending_state()
    assert asked.state.mode == ConversationMode.DISCOVERY
    assert asked.state.pending_transition == ConversationMode.OFERTA
    assert asked.record["validator_decision"] == "pending"
    assert asked.confirmation_type == "connect_to_owner_confirm"
    assert asked.question in CONFIG.texts["modes_confirm_connect_to_owner"]
    assert "reserv" not in asked.question.lower()  # Julia offers the bridge, never a reservation


def test_yes_applies_the_pending_transition():
    asked = _pending_state()
    yes = decide(
        asked.state,
        conversa_id="c1",
        text="Sim, pode ser",
        now=NOW + timedelta(minutes=2),
        config=CONFIG,
    )
    assert yes.state.mode == ConversationMode.OFERTA
    assert yes.state.pending_transition is None
    assert yes.state.last_transition_at == (NOW + timedelta(minutes=2)).replace(tzinfo=UTC)
    assert yes.record["validator_decision"] == "confirm"
    assert yes.question is None


def test_just_curious_cancels_and_stays_in_discovery():
    asked = _pending_state()
    no = decide(
        asked.state,
        conversa_id="c1",
        text="Ah não, só tava curioso",
        now=NOW + timedelta(minutes=2),
        config=CONFIG,
    )
    assert no.state.mode == ConversationMode.DISCOVERY
    assert no.state.pending_transition is None
    assert no.record["validator_decision"] == "cancel"


def test_followup_to_oferta_asks_about_the_new_opportunity():
    state = decide(
        None,
        conversa_id="c2",
        text="oi",
        now=NOW,
        origin="campaign:xyz",
        campaign_mode="followup",
        config=CONFIG,
    ).state
    asked = decide(state, conversa_id="c2", text="tem vaga pra sábado?", now=NOW, config=CONFIG)
    assert asked.confirmation_type == "new_opportunity_confirm"
    assert asked.question == "Tem uma vaga nova aqui. Quer que eu te conecte?"


# --- bootstrap and source ------------------------------------------------------------------


def test_bootstrap_manual_and_unknown_campaign_mode_fall_back_to_discovery():
    assert bootstrap_mode("tem vaga?", "manual", config=MODES) == ConversationMode.DISCOVERY
    assert (
        bootstrap_mode("tem vaga?", "campaign:x", "inexistente", config=MODES)
        == ConversationMode.DISCOVERY
    )


def test_get_mode_source():
    assert get_mode_source("campaign", "abc-123") == "campaign:abc-123"
    assert get_mode_source("campaign:abc-123") == "campaign:abc-123"
    assert get_mode_source("inbound") == "inbound"
    assert get_mode_source("manual", "abc-123") == "manual"


def test_first_turn_from_a_campaign_inherits_its_mode():
    outcome = decide(
        None,
        conversa_id="c3",
        text="qualquer coisa",
        now=NOW,
        origin="campaign",
        campaign_id="abc-123",
        campaign_mode="oferta",
        config=CONFIG,
    )
    assert outcome.state.mode == ConversationMode.OFERTA
    assert outcome.state.source == "campaign:abc-123"
    assert outcome.state.last_transition_at is None  # the bootstrap starts no cooldown
    assert outcome.record["bootstrapped"] is True
