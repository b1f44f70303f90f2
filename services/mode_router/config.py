"""The pack sections the mode router reads: ``modes`` (rules) and ``capabilities`` (tools).

Every keyword list, matrix, timing, intent→mode map, bootstrap pattern and micro-confirmation
text key is pack data, so a staffing agency and a beach-tennis center run the same code with
their own vocabulary. Validation here rejects a pack whose matrix contradicts itself (a
confirmation on a forbidden transition, a tool both allowed and banned) at load time rather than
mid-conversation.

Matching: patterns are regular expressions searched in the message's *match form*, chosen per
pack by ``text_form``: ``lower`` is the seed's ``text.lower()`` (patterns keep accents:
``\\bnão\\b``); ``normalized`` is ``shared.nlu.normalize`` (no accents, no punctuation, WhatsApp
spellings expanded: "vc"→"voce", "pra"→"para", "ta"→"esta"), so patterns are written unaccented.
Confirmation keywords are plain phrases and go through the same form, so they are written
naturally in either case.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from services.mode_router.types import ConversationMode, DetectedIntent
from shared.capabilities import CapabilitiesConfig
from shared.pack import Pack, PackError

TextForm = Literal["lower", "normalized"]
# The proposer's automatic rules, named so a pack can exempt one from the cooldown.
RuleName = Literal["silence", "booking_confirmed"]
Transition = tuple[ConversationMode, ConversationMode]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IntentRule(_Frozen):
    """One intent's keywords; rules are tried in list order, the first match wins."""

    intent: DetectedIntent
    confidence: float = Field(ge=0, le=1)
    # Evidence reads "<label>: '<matched text>'", as in the seed ("interesse: 'tem vaga'").
    label: str = Field(min_length=1)
    patterns: list[re.Pattern[str]] = Field(min_length=1)


class FixedResult(_Frozen):
    """The result given when no rule can match (empty message) or none did (neutral)."""

    confidence: float = Field(ge=0, le=1)
    evidence: str


class ConfirmationSpec(_Frozen):
    """A transition that waits for a micro-confirmation, and the question that asks for it."""

    from_mode: ConversationMode
    to_mode: ConversationMode
    # The seed's confirmation type (connect_to_owner_confirm, new_opportunity_confirm, ...).
    type: str = Field(min_length=1)
    # Key of the question in the pack's ``texts`` section.
    text_key: str = Field(min_length=1)


class SilenceRule(_Frozen):
    """Silence since the previous message that moves any other mode to ``to_mode``."""

    days: int = Field(ge=1)
    to_mode: ConversationMode = ConversationMode.REATIVACAO
    confidence: float = Field(default=0.95, ge=0, le=1)


class BookingRule(_Frozen):
    """A confirmed booking moves these modes to ``to_mode`` without asking."""

    from_modes: list[ConversationMode]
    to_mode: ConversationMode = ConversationMode.FOLLOWUP
    confidence: float = Field(default=1.0, ge=0, le=1)
    # Domain event types that mean "booking confirmed" (e.g. trial.booked).
    events: list[str] = Field(default_factory=list)


class CooldownConfig(_Frozen):
    """Minimum time between two transitions, against flip-flop."""

    minutes: float = Field(ge=0)
    # Automatic rules whose transition the cooldown never blocks: a booking is a fact, not a
    # wavering signal, and its event comes only once.
    exempt_rules: list[RuleName] = Field(default_factory=list)


class PendingConfig(_Frozen):
    """How a reply resolves a transition that waits for a micro-confirmation."""

    timeout_minutes: float = Field(gt=0)
    # Intents that confirm by themselves, and intents that never confirm.
    confirm_intents: list[DetectedIntent]
    deny_intents: list[DetectedIntent]
    # Short replies that confirm ("sim", "pode ser"), matched as whole words.
    confirm_keywords: list[str] = Field(min_length=1)
    # A reply that neither confirms nor denies: ``cancel`` (the seed) drops the pending;
    # ``keep`` leaves it waiting until a confirmation, a denial, an automatic rule or the timeout.
    on_unconfirmed: Literal["cancel", "keep"] = "cancel"

    @model_validator(mode="after")
    def _disjoint(self) -> PendingConfig:
        both = set(self.confirm_intents) & set(self.deny_intents)
        if both:
            raise ValueError(f"intents both confirm and deny a pending transition: {both}")
        return self


class BootstrapConfig(_Frozen):
    """The first mode of a conversation that did not come from a campaign."""

    # An inbound first message matching one of these starts in ``interest_mode``.
    interest_patterns: list[re.Pattern[str]] = Field(min_length=1)
    interest_mode: ConversationMode = ConversationMode.OFERTA
    default_mode: ConversationMode = ConversationMode.DISCOVERY


class ModesConfig(_Frozen):
    """The ``modes`` section of a pack: intents, transition matrices, timings, bootstrap."""

    text_form: TextForm = "lower"
    intents: list[IntentRule] = Field(min_length=1)
    neutral: FixedResult
    empty: FixedResult
    intent_to_mode: dict[DetectedIntent, ConversationMode | None]
    # Where an intent-driven proposal may go from each mode (the seed's ALLOWED_TRANSITIONS).
    allowed_transitions: dict[ConversationMode, list[ConversationMode]]
    automatic_transitions: list[Transition] = Field(default_factory=list)
    confirmation_required: list[ConfirmationSpec] = Field(default_factory=list)
    silence: SilenceRule
    booking_confirmed: BookingRule
    cooldown: CooldownConfig
    pending: PendingConfig
    bootstrap: BootstrapConfig

    @model_validator(mode="after")
    def _consistent(self) -> ModesConfig:
        seen = [rule.intent for rule in self.intents]
        if len(seen) != len(set(seen)):
            raise ValueError(f"an intent has two keyword rules: {seen}")
        if DetectedIntent.NEUTRO in seen:
            raise ValueError("neutro is the default intent and takes no keywords")
        missing = set(DetectedIntent) - self.intent_to_mode.keys()
        if missing:
            raise ValueError(f"intent_to_mode lacks {sorted(missing)}")
        missing_modes = set(ConversationMode) - self.allowed_transitions.keys()
        if missing_modes:
            raise ValueError(f"allowed_transitions lacks {sorted(missing_modes)}")
        for source, targets in self.allowed_transitions.items():
            if source in targets:
                raise ValueError(f"allowed_transitions: {source} lists itself")
        confirmations = [(c.from_mode, c.to_mode) for c in self.confirmation_required]
        if len(confirmations) != len(set(confirmations)):
            raise ValueError("confirmation_required lists a transition twice")
        for pair in [*self.automatic_transitions, *confirmations]:
            if not self.allows(*pair):
                raise ValueError(f"{pair[0]} → {pair[1]} is not in allowed_transitions")
        both = set(self.automatic_transitions) & set(confirmations)
        if both:
            raise ValueError(f"transitions both automatic and confirmed: {both}")
        if self.booking_confirmed.to_mode in self.booking_confirmed.from_modes:
            raise ValueError("booking_confirmed.from_modes contains its own to_mode")
        return self

    def allows(self, from_mode: ConversationMode, to_mode: ConversationMode) -> bool:
        """Whether an intent-driven proposal may move ``from_mode`` → ``to_mode``."""
        return to_mode in self.allowed_transitions.get(from_mode, [])

    def is_automatic(self, from_mode: ConversationMode, to_mode: ConversationMode) -> bool:
        return (from_mode, to_mode) in self.automatic_transitions

    def confirmation_for(
        self, from_mode: ConversationMode, to_mode: ConversationMode
    ) -> ConfirmationSpec | None:
        """The micro-confirmation this transition needs, or None when it needs none."""
        for spec in self.confirmation_required:
            if (spec.from_mode, spec.to_mode) == (from_mode, to_mode):
                return spec
        return None


class ModeRouterConfig(_Frozen):
    """Everything ``decide`` needs from a pack, validated together."""

    modes: ModesConfig
    capabilities: CapabilitiesConfig
    # The micro-confirmation questions: text key → variants (from the pack's ``texts``).
    texts: dict[str, list[str]]

    @model_validator(mode="after")
    def _questions_exist(self) -> ModeRouterConfig:
        for spec in self.modes.confirmation_required:
            if not self.texts.get(spec.text_key):
                raise ValueError(f"texts lack the question {spec.text_key!r}")
        return self

    @classmethod
    def from_pack(cls, pack: Pack) -> ModeRouterConfig:
        """Validate the router's sections of an already loaded pack."""
        modes = pack.section("modes", ModesConfig)
        capabilities = pack.section("capabilities", CapabilitiesConfig)
        all_texts: dict[str, Any] = pack.sections.get("texts", {})
        texts: dict[str, list[str]] = {}
        for spec in modes.confirmation_required:
            if spec.text_key not in all_texts:
                raise PackError(f"pack {pack.name!r} has no text {spec.text_key!r}")
            variants = all_texts[spec.text_key]
            texts[spec.text_key] = [variants] if isinstance(variants, str) else list(variants)
        return cls(modes=modes, capabilities=capabilities, texts=texts)

    def text(self, key: str, seed: str = "") -> str:
        """A question by key, its variant picked exactly as ``Pack.text`` picks it."""
        return Pack("mode_router", {"texts": self.texts}).text(key, seed=seed)
