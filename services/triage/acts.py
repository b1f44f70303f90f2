"""Dialogue acts against the bot's last move, when no flow is going on.

A short reply means what it answers: "quero sim" after "Se quiser, é só me dizer que eu agendo"
accepts the booking, not a request nobody can place. Each move is kept where it is made, and
read first on the next turn:

- a field or a confirmation the booking asked: the trial's slice (``asked``), read by the trial
  as the first reading of a bare answer (``services.trial.extraction``);
- the menu or its confirmation: triage's ``pending`` (``services.triage.core``);
- the funnel's micro-confirmation: the mode router's slice (``mode_awaits_answer``);
- an offer: :class:`LastMove` in triage's slice, recorded here. The answer to a question about
  something the pack says is offered after it (``triage.offers``: a FAQ answer about the trial
  class offers to book it) leaves that offer; the next turn's acceptance starts it and a refusal
  is answered politely.

This module also decides what a message that no rule placed still carries, so the numbered menu
is shown only when really nothing was understood: a message that is nothing but a menu option's
name ("experimental") is that request, and one carrying a booking's fields (an age, a level, a
time, a name introduced as one; two of them out of the blue, one after the menu) is an answer
for the booking.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from services.triage.clarification import parse_choice
from services.triage.config import ClarifyOption, TriageConfig
from services.triage.models import LastMove, TriageResult
from shared.nlu.dates import resolve_time
from shared.nlu.slots import extract_age, extract_people, tells_level


def offer_made(
    result: TriageResult, routes: list[str], config: TriageConfig, now: datetime
) -> LastMove | None:
    """The offer this turn's reply closes with, if any.

    An answered intent (``faq``) offers one of what ``triage.offers`` maps it to (``trial``,
    ``enrollment``): the one the message was most about, its intent leaning (some evidence,
    below detection: "como funciona a aula experimental?", "quanto é o plano?"), and not
    already routed (then it is going on, not offered).
    """
    for answered, offered in config.offers.items():
        if answered not in result.intents or config.routes[answered] not in routes:
            continue
        leaning = [
            (result.confidences.get(intent, 0.0), intent)
            for intent in offered
            if intent not in result.intents
            and result.confidences.get(intent, 0.0) >= config.llm_floor
        ]
        if leaning:
            return LastMove(intent=max(leaning)[1], at=now)
    return None


def standing_offer(move: LastMove | None, now: datetime, config: TriageConfig) -> str | None:
    """The intent still on offer (an offer is forgotten like a menu, after the clarification's
    ``expire_after_minutes`` of business time)."""
    if move is None:
        return None
    if now - move.at > timedelta(minutes=config.clarification.expire_after_minutes):
        return None
    return move.intent


def named_option(text: str, config: TriageConfig) -> ClarifyOption | None:
    """The menu option a message is nothing but the name of ("experimental", "atendimento"),
    with an intent to route to. Such a message is that request, asked outright: no menu, and
    no confirmation either (the confirmation is for an option guessed from a leaning)."""
    if any(ch.isdigit() for ch in text):
        return None
    option = parse_choice(text, config.clarification)
    if option is None or option.intent is None:
        return None
    return option


def booking_fields(text: str) -> int:
    """How many of a booking's fields a message gives: an age, a level, a time of day, a name
    introduced as one ("me chamo...", "my name is...")."""
    found = (
        extract_age(text),
        True if tells_level(text) else None,
        resolve_time(text),
        extract_people(text).nome,
    )
    return sum(value is not None for value in found)


def carries_booking_fields(text: str, *, context: bool) -> bool:
    """Whether a message is an answer for the booking rather than a message nobody understood.

    After the bot asked what the person wants (the menu, or its booking confirmation) one field
    is enough ("tenho 41 anos"); out of the blue it takes two ("me chamo Otávio, 29"): a lone
    "19h" or a name in a long story could be about anything, and the menu asks."""
    return booking_fields(text) >= (1 if context else 2)
