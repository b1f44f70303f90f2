"""One triage turn, as a pure function: classification + clarification → routing decision.

The service shell runs the rules (:func:`services.triage.rules.classify`), asks the LLM when
:func:`asks_llm` says so, and calls :func:`triage_turn` with whatever it got.
Everything here is deterministic in its inputs: the same turn replays to the same decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from services.triage.acts import (
    carries_booking_fields,
    named_option,
    offer_made,
    standing_offer,
)
from services.triage.clarification import (
    confirm_text,
    expired,
    find_option,
    menu_text,
    parse_choice,
)
from services.triage.config import ClarifyOption, TriageConfig
from services.triage.models import (
    ClarificationStep,
    PendingClarification,
    TriageDecision,
    TriageResult,
    TriageState,
)
from services.triage.questions import (
    FaqKnows,
    faq_text,
    is_direct_question,
    parts,
    sentences,
)
from services.triage.rules import active_stage, classify, needs_llm
from shared.nlu.upset import complains
from shared.nlu.yesno import points_at, yes_no
from shared.pack import Pack


@dataclass(frozen=True)
class _Turn:
    """The inputs of one turn, so the steps below can share them without long signatures."""

    text: str
    result: TriageResult
    now: datetime
    config: TriageConfig
    pack: Pack
    seed: str
    journal: dict[str, Any]
    mode_pending: bool = False
    active: bool = False
    knows: FaqKnows | None = None
    # The intent the last reply offered and still stands (``services.triage.acts``).
    offer: str | None = None

    def decide(
        self,
        *,
        intents: list[str],
        pending: PendingClarification | None,
        step: ClarificationStep | None = None,
        inline_text: str | None = None,
        asks_question: bool = False,
        forced_text: str | None = None,
    ) -> TriageDecision:
        # The intents come from the pack's intent list, whose routes the config checked.
        routes = list(dict.fromkeys(self.config.routes[i] for i in intents if i != "general"))
        route_texts: dict[str, str] = {}
        booking = self.config.routes[self.config.active_context.intent]
        if self.active and routes and booking not in routes:
            # Mid-booking, the booking hears every turn: after another specialist's answer it
            # re-asks its pending step (task intents without its own tell it so). It is given
            # no text: triage found nothing in the message for it, and a question read as an
            # answer would become a name ("qnt custa").
            routes.insert(0, booking)
            route_texts[booking] = ""
        forced = forced_text is not None
        faq_route = self.config.routes.get("faq")
        if not forced and faq_route in routes and "faq" in intents:
            asked = faq_text(
                self.text, self.config, active=self.active, knows=self.knows, now=self.now
            )
            if asked != self.text:
                route_texts[faq_route] = asked
        state = TriageState(
            last_intents=intents,
            last_source=self.result.source,
            last_confidences=self.result.confidences,
            pending=pending,
            last_move=None if forced else offer_made(self.result, routes, self.config, self.now),
        )
        journal = {
            **self.journal,
            "intents": intents,
            "routes": routes,
            "clarification": step,
            "forced_by_clarification": forced,
            "route_texts": route_texts,
        }
        return TriageDecision(
            intents=intents,
            routes=routes,
            text=forced_text if forced_text is not None else self.text,
            forced_by_clarification=forced,
            inline_text=inline_text,
            asks_question=asks_question,
            route_texts=route_texts,
            state=state,
            journal=journal,
        )

    def leaning_option(self) -> ClarifyOption | None:
        """The menu option of the one intent with some evidence (at least ``llm_floor``, below
        the threshold), or None when no intent or several lean."""
        floor = self.config.llm_floor
        leaning = [
            name
            for name, conf in self.result.confidences.items()
            if name != "general" and conf >= floor
        ]
        if len(leaning) != 1:
            return None
        options = self.config.clarification.options
        return next((option for option in options if option.intent == leaning[0]), None)

    @property
    def asks_something(self) -> bool:
        """Whether some clause of the message is a direct question."""
        return any(is_direct_question(clause, self.config) for clause in parts(self.text))

    @property
    def asks_question_of_its_own(self) -> bool:
        """Whether some clause is a direct question that is not a bare yes or no ("pode ser?"
        answers the bot) and says more than one word ("oi?", "hein?" ask nothing to look up)."""
        return any(
            is_direct_question(clause, self.config)
            and yes_no(clause.text) is None
            and len(clause.normalized.split()) > 1
            for clause in [*sentences(self.text), *parts(self.text)]
        )

    @property
    def is_clear_request(self) -> bool:
        """A message that names a specialist intent outright wins over a pending question."""
        return any(intent != "general" for intent in self.result.intents)

    def forced(
        self, intent: str, pending: PendingClarification, step: ClarificationStep
    ) -> TriageDecision:
        """Route the original message as if triage had classified it as the chosen intent."""
        return self.decide(
            intents=[intent], pending=None, step=step, forced_text=pending.original_message
        )


def _answer_context(turn: _Turn, pending: PendingClarification) -> TriageDecision | None:
    """N1: the person answers the menu (None: a new request or question, handled as usual).

    A number or ordinal picks its option. A question is taken as one ("tem aula pra criança?"
    names no option even if it says "aula"); then a short answer naming an option picks it;
    then anything that reads as a request is taken as one, so the menu never traps a person
    who answers in their own words; an answer that leans to one option without saying it
    outright ("experimentar") picks that option, which asks its confirmation where it has one.
    A truly unclear answer gets the menu again (with an example of what to write) up to
    ``max_menus`` times, then a person takes over.
    """
    clarify = turn.config.clarification
    option = parse_choice(turn.text, clarify, numbers_only=True)
    if option is None and turn.is_clear_request and turn.asks_something:
        return None
    option = option or parse_choice(turn.text, clarify)
    if option is None and turn.is_clear_request:
        return None
    if option is None and carries_booking_fields(turn.text, context=True):
        # "me chamo Ana, 30 anos" answers the booking, not the menu: no menu again.
        booking = turn.config.active_context.intent
        return turn.decide(intents=[booking], pending=None, step="n1_fields")
    option = option or turn.leaning_option()
    if option is None and pending.menus_shown >= clarify.max_menus:
        return turn.forced(clarify.unclear_intent, pending, "n1_handoff")
    if option is None:
        text = menu_text(clarify, turn.pack, turn.seed, invalid=True)
        waiting = pending.model_copy(
            update={"asked_at": turn.now, "menus_shown": pending.menus_shown + 1}
        )
        return turn.decide(
            intents=[], pending=waiting, step="n1_invalid", inline_text=text, asks_question=True
        )
    if option.intent is None:
        text = turn.pack.text(clarify.texts.cancelled, seed=turn.seed)
        return turn.decide(intents=[], pending=None, step="n1_cancelled", inline_text=text)
    if not option.confirm:
        return turn.forced(option.intent, pending, "n1_chosen")
    confirming = pending.model_copy(
        update={"stage": "awaiting_confirmation", "chosen_option": option.id, "asked_at": turn.now}
    )
    text = confirm_text(option, clarify, turn.pack, turn.seed, again=False)
    return turn.decide(
        intents=[], pending=confirming, step="n2_confirm", inline_text=text, asks_question=True
    )


def _answer_confirmation(turn: _Turn, pending: PendingClarification) -> TriageDecision | None:
    """N2: yes routes the original message, no drops it (None: a clear new request)."""
    clarify = turn.config.clarification
    option = find_option(pending.chosen_option, clarify)
    if option is None or option.intent is None:
        return None
    answer = yes_no(turn.text)
    if answer is True:
        return turn.forced(option.intent, pending, "n2_yes")
    booking = turn.config.active_context.intent
    fields = carries_booking_fields(turn.text, context=True)
    if answer is None and option.intent == booking and fields:
        # Answering "seguimos com o agendamento?" with the booking's fields is a yes, and the
        # fields are this message's: it is routed itself.
        return turn.decide(intents=[booking], pending=None, step="n2_fields")
    if turn.is_clear_request:
        return None
    if answer is False:
        text = turn.pack.text(clarify.texts.declined, seed=turn.seed)
        return turn.decide(
            intents=[], pending=None, step="n2_no", inline_text=text, asks_question=True
        )
    text = confirm_text(option, clarify, turn.pack, turn.seed, again=True)
    waiting = pending.model_copy(update={"asked_at": turn.now})
    return turn.decide(
        intents=[], pending=waiting, step="n2_confirm_again", inline_text=text, asks_question=True
    )


def _answers_offer(turn: _Turn) -> TriageDecision | None:
    """A short reply read against the offer the last reply closed with: a leading yes that asks
    nothing ("quero sim!", "bora, me chamo Ana") starts what was offered, whatever the rules
    read in its words ("pode ser" looks like a question start), unless it is only small talk
    ("ok, obrigado" acknowledges the answer); a leading no (nothing else placed) is answered
    politely. None: not an answer to the offer."""
    if turn.offer is None:
        return None
    answer = yes_no(turn.text)
    # "beleza, quero esse" points at what was offered: more than an acknowledgement.
    small_talk = turn.result.intents == ["general"] and not points_at(turn.text)
    # "tá, então marca a experimental primeiro" after the plans were offered names its own
    # request: the message's request wins over the offer.
    other = [i for i in turn.result.intents if i not in ("general", "faq", turn.offer)]
    if answer is True and "?" not in turn.text and not small_talk and not other:
        return turn.decide(intents=[turn.offer], pending=None, step="offer_accepted")
    if answer is False and not turn.result.intents:
        text = turn.pack.text(turn.config.clarification.texts.declined, seed=turn.seed)
        return turn.decide(
            intents=[], pending=None, step="offer_declined", inline_text=text, asks_question=True
        )
    return None


def _unplaced(turn: _Turn) -> TriageDecision | None:
    """A message no rule placed, read for what it carries (``services.triage.acts``); None
    when really nothing was understood (then the menu)."""
    config = turn.config
    option = named_option(turn.text, config)
    if option is not None and option.intent is not None:
        return turn.decide(intents=[option.intent], pending=None, step="option_named")
    if carries_booking_fields(turn.text, context=False):
        booking = config.active_context.intent
        return turn.decide(intents=[booking], pending=None, step="booking_fields")
    if "faq" in config.routes and turn.asks_question_of_its_own:
        # A question no keyword places ("vocês treinam quem nunca pegou numa raquete?") is
        # still a question: the FAQ answers it or says honestly that it does not know, which
        # helps more than a menu of what the bot can do.
        return turn.decide(intents=["faq"], pending=None, step="question_unplaced")
    return None


def _classified(turn: _Turn) -> TriageDecision:
    """No clarification pending: route, answer small talk, or open the N1 menu."""
    result, config = turn.result, turn.config
    if turn.mode_pending and points_at(turn.text):
        # "quero esse" takes the item the answer offered, not the funnel's question beside it.
        accepted = _answers_offer(turn)
        if accepted is not None:
            return accepted
    if not result.intents and turn.mode_pending:
        answer = yes_no(turn.text)
        if answer is True:
            confirmation = config.mode_confirmation
            if confirmation.yes_intent is not None:
                return turn.decide(intents=[confirmation.yes_intent], pending=None, step="mode_yes")
            if confirmation.accepted_text_key is not None:
                text = turn.pack.text(confirmation.accepted_text_key, seed=turn.seed)
                return turn.decide(
                    intents=["general"], pending=None, step="mode_yes", inline_text=text
                )
        if answer is False:
            text = turn.pack.text(config.mode_confirmation.declined_text_key, seed=turn.seed)
            return turn.decide(intents=["general"], pending=None, step="mode_no", inline_text=text)
    if (accepted := _answers_offer(turn)) is not None:
        return accepted
    if not result.intents and (read := _unplaced(turn)) is not None:
        return read
    if not result.intents and config.clarification.enabled:
        pending = PendingClarification(
            stage="awaiting_context",
            original_message=turn.text,
            created_at=turn.now,
            asked_at=turn.now,
        )
        text = menu_text(config.clarification, turn.pack, turn.seed, invalid=False)
        return turn.decide(
            intents=[], pending=pending, step="n1_menu", inline_text=text, asks_question=True
        )
    if not result.intents or result.intents == ["general"]:
        reply = result.general_response or turn.pack.text(config.fallback_text_key, seed=turn.seed)
        return turn.decide(intents=["general"], pending=None, inline_text=reply)
    return turn.decide(intents=list(result.intents), pending=None, inline_text=_sorry(turn))


def _sorry(turn: _Turn) -> str | None:
    """The apology said before the specialists' answers when the message also complains calmly
    of the service ("que demora, vocês abrem sábado?"): the question is answered and the
    complaint heard, as a complaint alone is. The booking, when the turn is its, says its own
    next to its question (``trial_complaint_sorry``), so it is not said twice."""
    key = turn.config.complaint_aside_text_key
    booking = turn.config.active_context.intent
    if key is None or turn.active or booking in turn.result.intents or not complains(turn.text):
        return None
    return turn.pack.text(key, seed=turn.seed)


def follows_faq(state: TriageState | None) -> bool:
    """Whether the previous turn went to the FAQ: a short question now continues it."""
    return state is not None and "faq" in state.last_intents


def answers_pending(
    text: str, state: TriageState | None, now: datetime, config: TriageConfig
) -> bool:
    """Whether ``text`` settles the clarification waiting in ``state`` by itself: an option of
    the N1 menu (a question that happens to name one, "tem aula pra criança?", is read as a
    question), or a yes to the N2 question. Such a turn is decided the same whatever an LLM
    reads in it, so hybrid mode does not ask one."""
    pending = state.pending if state else None
    clarify = config.clarification
    if pending is None or expired(pending, now, clarify):
        return False
    if pending.stage == "awaiting_context":
        if parse_choice(text, clarify, numbers_only=True) is not None:
            return True
        asks = any(is_direct_question(clause, config) for clause in parts(text))
        return not asks and parse_choice(text, clarify) is not None
    option = find_option(pending.chosen_option, clarify)
    return option is not None and option.intent is not None and yes_no(text) is True


def asks_llm(
    mode: str,
    text: str,
    rules: TriageResult,
    state: TriageState | None,
    now: datetime,
    config: TriageConfig,
) -> bool:
    """Whether this turn asks the LLM: always in ``llm`` mode, never in ``rules`` mode, and in
    ``hybrid`` mode when the rules are unsure and the text does not settle a pending
    clarification by itself."""
    if mode == "hybrid":
        return needs_llm(rules, config) and not answers_pending(text, state, now, config)
    return mode == "llm"


def triage_turn(
    text: str,
    *,
    state: TriageState | None,
    trial_stage: str | None,
    now: datetime,
    config: TriageConfig,
    pack: Pack,
    seed: str,
    classified: TriageResult | None = None,
    mode_pending: bool = False,
    knows: FaqKnows | None = None,
) -> TriageDecision:
    """Decide one turn.

    ``knows`` tells whether the knowledge base answers a question clause (see
    :mod:`services.triage.faq_evidence`); the FAQ route is given only the clauses that ask.

    ``mode_pending``: the mode router waits for a yes/no to its micro-confirmation, so a bare
    answer is read as that answer instead of opening the clarification menu.

    ``classified`` is the message's classification when the shell already made it (the rules'
    own, or the LLM's passed through ``from_llm``); without it the rules classify here. A
    pending clarification is answered first unless it expired (measured on ``now``, business
    time) or the message is a clear new request, which wins over it.
    """
    state = state or TriageState()
    result = classified or classify(
        text,
        trial_stage=trial_stage,
        config=config,
        pack=pack,
        seed=seed,
        knows=knows,
        follow_up=follows_faq(state),
        now=now,
    )
    journal: dict[str, Any] = {
        "source": result.source,
        "confidences": result.confidences,
        "reason": result.reason,
        "active_context": active_stage(trial_stage, config),
    }
    active = active_stage(trial_stage, config) is not None
    offer = None if active else standing_offer(state.last_move, now, config)
    turn = _Turn(text, result, now, config, pack, seed, journal, mode_pending, active, knows, offer)
    pending = state.pending
    if pending is not None and expired(pending, now, config.clarification):
        journal["pending_expired"] = pending.stage
        pending = None
    if pending is not None:
        answer = _answer_context if pending.stage == "awaiting_context" else _answer_confirmation
        decision = answer(turn, pending)
        if decision is not None:
            return decision
        journal["pending_superseded"] = pending.stage
    return _classified(turn)
