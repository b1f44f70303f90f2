"""Layer 3, the transition validator: APPLY, PENDING, CONFIRM, CANCEL or REJECT.

The seed's rules, with time passed in (``now``) instead of read from the clock:

- cooldown: a transition less than ``cooldown.minutes`` (5) after the previous one is rejected
  (flip-flop), including the creation of a new pending; rules listed in ``exempt_rules`` skip it;
- pending timeout: a pending transition older than ``pending.timeout_minutes`` (30, strictly
  more) is cancelled;
- a reply that confirms a pending transition applies it (CONFIRM), one that does not cancels it.

Decisions where the seed was ambiguous or its code contradicted its intent:

1. An automatic rule (silence, booking) supersedes a pending transition: the seed only looked at
   the confirmation while something was pending, so a booking made right after the question
   ("quer ver os horários?") was lost and the pending was cancelled as "not confirmed". A rule
   states a fact, so its transition is applied (subject to the cooldown) and the pending goes.
2. An expired pending no longer swallows the turn: the seed returned CANCEL before looking at
   the new message, so "tem vaga?" an hour after an unanswered question was ignored. The
   expired pending is dropped and the proposal judged as if nothing were pending; when that
   yields no transition the decision is CANCEL (the seed's answer), otherwise the new decision,
   its reason noting the expiry.
3. ``keep_pending``: a reply that neither confirms nor denies leaves the pending waiting (the
   decision stays PENDING) when the pack says ``on_unconfirmed: keep`` or when the turn carries
   no message at all (a domain event is not a reply). Its timeout still counts from the question.

Reasons are journal text, not user text; they keep the seed's wording except "pelo médico",
which became "na resposta" so another business's journal reads right.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from services.mode_router.config import ModesConfig
from services.mode_router.proposer import TransitionProposal
from services.mode_router.types import ConversationMode, minutes_between


class TransitionDecision(StrEnum):
    """What the validator decided for this turn."""

    APPLY = "apply"
    PENDING = "pending"
    CONFIRM = "confirm"
    CANCEL = "cancel"
    REJECT = "reject"


class ValidationResult(BaseModel):
    """The decision, the mode after it, and why."""

    model_config = ConfigDict(frozen=True)

    decision: TransitionDecision
    final_mode: ConversationMode
    reason: str
    # The transition waiting for confirmation after this decision (set when PENDING).
    pending_mode: ConversationMode | None = None
    # True when this decision opens the pending (its question is asked and its timeout starts);
    # False when an existing pending is merely kept.
    pending_is_new: bool = False


class TransitionValidator:
    """Validates proposals against cooldown, pending confirmation and pending timeout."""

    def __init__(self, config: ModesConfig) -> None:
        self.config = config

    def validate(
        self,
        proposal: TransitionProposal,
        pending_transition: ConversationMode | None = None,
        pending_transition_at: datetime | None = None,
        last_transition_at: datetime | None = None,
        mensagem_confirma: bool = False,
        keep_pending: bool = False,
        *,
        now: datetime,
    ) -> ValidationResult:
        """The decision for ``proposal`` given the pending transition and the last transition."""
        if pending_transition is None:
            return self._judge(proposal, last_transition_at, now)
        if proposal.should_transition and proposal.rule is not None:
            result = self._judge(proposal, last_transition_at, now)
            if result.decision == TransitionDecision.APPLY:
                return result.model_copy(
                    update={"reason": f"{result.reason} (substitui pending {pending_transition})"}
                )
        return self._handle_pending(
            proposal,
            pending_transition,
            pending_transition_at,
            last_transition_at,
            mensagem_confirma,
            keep_pending,
            now,
        )

    def _handle_pending(
        self,
        proposal: TransitionProposal,
        pending_transition: ConversationMode,
        pending_transition_at: datetime | None,
        last_transition_at: datetime | None,
        mensagem_confirma: bool,
        keep_pending: bool,
        now: datetime,
    ) -> ValidationResult:
        current_mode = proposal.from_mode
        timeout = self.config.pending.timeout_minutes
        if pending_transition_at is not None:
            waited = minutes_between(pending_transition_at, now)
            if waited > timeout:
                expired = f"pending expirada por timeout ({waited:.1f}min > {timeout:g}min)"
                fresh = self._judge(proposal, last_transition_at, now)
                if fresh.decision == TransitionDecision.REJECT:
                    return ValidationResult(
                        decision=TransitionDecision.CANCEL, final_mode=current_mode, reason=expired
                    )
                return fresh.model_copy(update={"reason": f"{expired}; {fresh.reason}"})
        if mensagem_confirma:
            return ValidationResult(
                decision=TransitionDecision.CONFIRM,
                final_mode=pending_transition,
                reason="confirmado na resposta",
            )
        if keep_pending:
            return ValidationResult(
                decision=TransitionDecision.PENDING,
                final_mode=current_mode,
                reason="pending mantida: resposta sem confirmação nem recusa",
                pending_mode=pending_transition,
            )
        return ValidationResult(
            decision=TransitionDecision.CANCEL,
            final_mode=current_mode,
            reason="não confirmado na resposta",
        )

    def _judge(
        self,
        proposal: TransitionProposal,
        last_transition_at: datetime | None,
        now: datetime,
    ) -> ValidationResult:
        """The seed's steps 2-5 for a proposal with nothing pending."""
        current_mode = proposal.from_mode
        if not proposal.should_transition or proposal.to_mode is None:
            return ValidationResult(
                decision=TransitionDecision.REJECT, final_mode=current_mode, reason=proposal.trigger
            )
        cooldown = self.config.cooldown
        if last_transition_at is not None and proposal.rule not in cooldown.exempt_rules:
            since = minutes_between(last_transition_at, now)
            if since < cooldown.minutes:
                return ValidationResult(
                    decision=TransitionDecision.REJECT,
                    final_mode=current_mode,
                    reason=f"cooldown ({since:.1f}min < {cooldown.minutes:g}min)",
                )
        if proposal.is_automatic or not proposal.needs_confirmation:
            kind = "automático" if proposal.is_automatic else "sem confirmação"
            return ValidationResult(
                decision=TransitionDecision.APPLY,
                final_mode=proposal.to_mode,
                reason=f"{kind}: {proposal.trigger}",
            )
        return ValidationResult(
            decision=TransitionDecision.PENDING,
            final_mode=current_mode,
            reason="aguardando micro-confirmação",
            pending_mode=proposal.to_mode,
            pending_is_new=True,
        )
