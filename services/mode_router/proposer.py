"""Layer 2, the transition proposer: intent + current mode → a proposed transition.

It proposes, it never applies. Automatic rules come first, as in the seed:

- silence: ``previous_message_at`` at least ``silence.days`` whole days before ``now`` moves any
  other mode to ``reativacao`` (trigger ``silencio_<days>d``);
- booking confirmed: a booking while in one of ``booking_confirmed.from_modes`` moves to
  ``followup`` (trigger ``reserva_confirmada``). The seed hard-coded "only from oferta"; the pack
  lists the modes, so a booking business can also book straight from discovery.

Like the seed's silence rule, these rules are governed by their own settings and not by
``allowed_transitions``: that matrix gates *intent-driven* proposals only. This lets a booking
business reach followup from discovery by booking while a mere greeting cannot.

Then the intent's suggested mode (``intent_to_mode``) is checked against the matrix; the seed's
``objecao_resolvida`` special case (in oferta, go back to discovery) is kept.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from services.mode_router.config import ModesConfig, RuleName
from services.mode_router.intents import IntentResult
from services.mode_router.types import ConversationMode, as_utc


class TransitionProposal(BaseModel):
    """A proposed mode change (or the reason there is none)."""

    model_config = ConfigDict(frozen=True)

    should_transition: bool
    from_mode: ConversationMode
    to_mode: ConversationMode | None
    needs_confirmation: bool
    is_automatic: bool
    trigger: str
    evidence: str
    confidence: float
    # The automatic rule behind the proposal; None for intent-driven proposals.
    rule: RuleName | None = None


class TransitionProposer:
    """Proposes transitions from the detected intent and the pack's transition matrix."""

    def __init__(self, config: ModesConfig) -> None:
        self.config = config

    def propose(
        self,
        intent_result: IntentResult,
        current_mode: ConversationMode,
        last_message_at: datetime | None = None,
        reserva_confirmada: bool = False,
        objecao_resolvida: bool = False,
        *,
        now: datetime,
    ) -> TransitionProposal:
        """The proposal for this turn; ``last_message_at`` is the previous message's time."""
        automatic = self._check_automatic_rules(
            current_mode, last_message_at, reserva_confirmada, now
        )
        if automatic is not None:
            return automatic
        return self._propose_from_intent(intent_result, current_mode, objecao_resolvida)

    def _check_automatic_rules(
        self,
        current_mode: ConversationMode,
        last_message_at: datetime | None,
        reserva_confirmada: bool,
        now: datetime,
    ) -> TransitionProposal | None:
        silence = self.config.silence
        if last_message_at is not None and current_mode != silence.to_mode:
            days_since = (as_utc(now) - as_utc(last_message_at)).days
            if days_since >= silence.days:
                return TransitionProposal(
                    should_transition=True,
                    from_mode=current_mode,
                    to_mode=silence.to_mode,
                    needs_confirmation=False,
                    is_automatic=True,
                    trigger=f"silencio_{silence.days}d",
                    evidence=f"silêncio de {days_since} dias",
                    confidence=silence.confidence,
                    rule="silence",
                )
        booking = self.config.booking_confirmed
        if reserva_confirmada and current_mode in booking.from_modes:
            return TransitionProposal(
                should_transition=True,
                from_mode=current_mode,
                to_mode=booking.to_mode,
                needs_confirmation=False,
                is_automatic=True,
                trigger="reserva_confirmada",
                evidence="reserva foi confirmada",
                confidence=booking.confidence,
                rule="booking_confirmed",
            )
        return None

    def _propose_from_intent(
        self,
        intent_result: IntentResult,
        current_mode: ConversationMode,
        objecao_resolvida: bool,
    ) -> TransitionProposal:
        suggested = self.config.intent_to_mode.get(intent_result.intent)
        if objecao_resolvida and current_mode == ConversationMode.OFERTA:
            suggested = ConversationMode.DISCOVERY
        if suggested is None:
            return _no_transition(
                current_mode, "no_mode_suggestion", f"intent={intent_result.intent.value}"
            )
        if suggested == current_mode:
            return _no_transition(current_mode, "already_in_mode", f"já em {current_mode.value}")
        if not self.config.allows(current_mode, suggested):
            return TransitionProposal(
                should_transition=False,
                from_mode=current_mode,
                to_mode=suggested,
                needs_confirmation=False,
                is_automatic=False,
                trigger="not_allowed",
                evidence="transição não permitida na matriz",
                confidence=0.0,
            )
        return TransitionProposal(
            should_transition=True,
            from_mode=current_mode,
            to_mode=suggested,
            needs_confirmation=self.config.confirmation_for(current_mode, suggested) is not None,
            is_automatic=self.config.is_automatic(current_mode, suggested),
            trigger=f"intent_{intent_result.intent.value}",
            evidence=intent_result.evidence,
            confidence=intent_result.confidence,
        )


def _no_transition(mode: ConversationMode, trigger: str, evidence: str) -> TransitionProposal:
    return TransitionProposal(
        should_transition=False,
        from_mode=mode,
        to_mode=None,
        needs_confirmation=False,
        is_automatic=False,
        trigger=trigger,
        evidence=evidence,
        confidence=0.0,
    )
