"""The mode router's entry point: one pure decision per turn or per domain event.

``decide`` is the seed's ``ModeRouter.process`` without I/O. The service reads the ``mode`` state
slice, calls ``decide`` with the turn's fields, then writes ``outcome.state`` back, appends
``outcome.record`` to the decision journal and, when ``outcome.question`` is set, sends it to the
merger as a part that asks a question. Steps:

0. no state yet (first turn): ``get_mode_source`` + ``bootstrap_mode`` give the initial state,
   then the same message goes through the three layers from that mode, so a cold "quero saber
   mais" already gets its micro-confirmation;
1. ``IntentDetector.detect(text)``;
2. ``TransitionProposer.propose`` with ``previous_message_at`` (silence) and
   ``booking_confirmed`` (the seed's ``reserva_confirmada``);
3. ``check_confirmation`` (the seed's ``_check_confirmation``) and ``keeps_pending``;
4. ``TransitionValidator.validate`` with the stored pending and ``last_transition_at``;
5. the seed's ``_apply_decision`` as a state update, plus the decision record and the question.

Bookings arrive as domain events: ``on_event`` maps the event types the pack lists under
``booking_confirmed.events`` (CT Smash: ``trial.booked``) to ``decide(text="",
booking_confirmed=True)`` and returns None for any other type. An event carries no message, so
it neither confirms nor cancels a pending transition by its content; only a rule or the timeout
resolves it. Its ``now`` is the event's business time (``DomainEvent.at``).

Time: nothing here reads the clock; ``now`` is ``Turn.now`` and naive datetimes are read as UTC
(see ``types``). Decisions taken where the seed was ambiguous are listed in ``validator`` (rules
supersede a pending, an expired pending does not swallow the turn, ``keep_pending``), in
``proposer`` (rules do not go through the intent matrix; booking modes come from the pack) and
here:

- confirmation keywords match whole words: the seed's substring test let "assim" confirm through
  "sim" and "podemos" through "pode";
- a decision record is produced for every call, including REJECT, so the journal explains why a
  mode did *not* change.
"""

from __future__ import annotations

from datetime import datetime

from services.mode_router.bootstrap import bootstrap_mode, get_mode_source
from services.mode_router.config import ModeRouterConfig, ModesConfig
from services.mode_router.decision_log import mode_decision_record
from services.mode_router.intents import IntentDetector, IntentResult, contains_phrase
from services.mode_router.proposer import TransitionProposal, TransitionProposer
from services.mode_router.state import ModeOutcome, ModeState
from services.mode_router.types import ConversationMode, as_utc
from services.mode_router.validator import (
    TransitionDecision,
    TransitionValidator,
    ValidationResult,
)


def check_confirmation(
    mensagem: str,
    intent_result: IntentResult,
    pending_transition: ConversationMode | None,
    config: ModesConfig,
) -> bool:
    """Whether the message confirms the pending transition.

    Only with something pending; never on a denying intent (recusa, objeção); always on a
    confirming one (interest, ready to close); otherwise when a confirmation keyword appears.
    """
    if pending_transition is None:
        return False
    pending = config.pending
    if intent_result.intent in pending.deny_intents:
        return False
    if intent_result.intent in pending.confirm_intents:
        return True
    return any(
        contains_phrase(mensagem, keyword, config.text_form) for keyword in pending.confirm_keywords
    )


def keeps_pending(mensagem: str, intent_result: IntentResult, config: ModesConfig) -> bool:
    """Whether an unconfirmed reply leaves the pending transition waiting instead of cancelling.

    A turn without a message (a domain event) always keeps it. Otherwise the pack decides: with
    ``on_unconfirmed: keep`` only a denying intent cancels, so a person answering the trial
    questions ("João, 27 anos", "terça às 19h") does not lose the transition.
    """
    if not mensagem.strip():
        return True
    pending = config.pending
    return pending.on_unconfirmed == "keep" and intent_result.intent not in pending.deny_intents


def decide(
    state: ModeState | None,
    *,
    conversa_id: str,
    text: str,
    now: datetime,
    config: ModeRouterConfig,
    previous_message_at: datetime | None = None,
    booking_confirmed: bool = False,
    origin: str = "inbound",
    campaign_mode: str | None = None,
    campaign_id: str | None = None,
    objecao_resolvida: bool = False,
    turn_id: str | None = None,
) -> ModeOutcome:
    """The mode decision for one turn (see the module docstring for the steps)."""
    now = as_utc(now)
    modes = config.modes
    bootstrapped = state is None
    if state is None:
        source = get_mode_source(origin, campaign_id)
        initial = bootstrap_mode(text, source, campaign_mode, config=modes)
        state = ModeState(
            mode=initial,
            source=source,
            updated_at=now,
            updated_reason=f"bootstrap: {source} → {initial.value}",
        )

    intent = IntentDetector(modes).detect(text)
    proposal = TransitionProposer(modes).propose(
        intent,
        state.mode,
        last_message_at=previous_message_at,
        reserva_confirmada=booking_confirmed,
        objecao_resolvida=objecao_resolvida,
        now=now,
    )
    validation = TransitionValidator(modes).validate(
        proposal,
        pending_transition=state.pending_transition,
        pending_transition_at=state.pending_transition_at,
        last_transition_at=state.last_transition_at,
        mensagem_confirma=check_confirmation(text, intent, state.pending_transition, modes),
        keep_pending=keeps_pending(text, intent, modes),
        now=now,
    )
    new_state = _apply_decision(state, validation, proposal, now).model_copy(
        update={"last_turn_id": turn_id}
    )
    record = mode_decision_record(
        now=now,
        conversa_id=conversa_id,
        turn_id=turn_id,
        intent=intent,
        proposal=proposal,
        validation=validation,
        pending_transition=new_state.pending_transition,
        bootstrapped=bootstrapped,
        capabilities=config.capabilities,
    )
    spec = (
        modes.confirmation_for(state.mode, validation.pending_mode)
        if validation.pending_is_new and validation.pending_mode is not None
        else None
    )
    return ModeOutcome(
        state=new_state,
        record=record.to_dict(),
        question=config.text(spec.text_key, seed=turn_id or "") if spec else None,
        confirmation_type=spec.type if spec else None,
    )


def concerns(event_type: str, config: ModeRouterConfig) -> bool:
    """Whether a domain event of ``event_type`` can change a conversation's mode (the pack's
    ``booking_confirmed.events``); the others need no decision, nor a commit."""
    return event_type in config.modes.booking_confirmed.events


def on_event(
    state: ModeState | None,
    *,
    conversa_id: str,
    event_type: str,
    now: datetime,
    config: ModeRouterConfig,
    turn_id: str | None = None,
) -> ModeOutcome | None:
    """The decision for a domain event, or None when the pack gives the event no meaning.

    An event before any turn (no state) bootstraps the conversation as inbound with no message.
    """
    if not concerns(event_type, config):
        return None
    return decide(
        state,
        conversa_id=conversa_id,
        text="",
        now=now,
        config=config,
        booking_confirmed=True,
        turn_id=turn_id,
    )


def _apply_decision(
    state: ModeState,
    validation: ValidationResult,
    proposal: TransitionProposal,
    now: datetime,
) -> ModeState:
    """The state after the decision (the seed's ``_apply_decision`` without the writes)."""
    decision = validation.decision
    update: dict[str, object] = {"last_decision": decision}
    if decision in (TransitionDecision.APPLY, TransitionDecision.CONFIRM):
        reason = (
            f"{proposal.trigger}: {proposal.evidence}"
            if decision == TransitionDecision.APPLY
            else "micro-confirmação aceita"
        )
        update |= {
            "mode": validation.final_mode,
            "updated_at": now,
            "updated_reason": reason,
            "last_transition_at": now,
            "pending_transition": None,
            "pending_transition_at": None,
        }
    elif decision == TransitionDecision.PENDING and validation.pending_is_new:
        update |= {"pending_transition": validation.pending_mode, "pending_transition_at": now}
    elif decision == TransitionDecision.CANCEL:
        update |= {"pending_transition": None, "pending_transition_at": None}
    return state.model_copy(update=update)
