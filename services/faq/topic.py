"""The conversation's topic: the last question the FAQ answered, which an elliptical follow-up
("e no sábado?", "e a de 12?", "e o de 3x?") continues, and the last one it could not answer,
which a follow-up may ask again for another case ("e pra estudante?").

People ask about one thing and then about its parts without naming it again. The FAQ keeps,
in its own ``faq`` slice, which entry answered last and when; a short question the base cannot
place alone is read against that entry (:func:`services.faq.core.retrieve`). Everything here is
a pure function over models: the shell loads the slice, asks, and commits what these return.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import AwareDatetime, BaseModel, ConfigDict

from shared.faq.config import FollowUp


class FaqTopic(BaseModel):
    """What the conversation was last asking about."""

    model_config = ConfigDict(frozen=True)

    entry_id: str
    # The question as asked, for the decision journal and `orquestra explain`.
    clause: str
    # Business time (Turn.now) of the turn that asked it.
    at: AwareDatetime


class OpenQuestion(BaseModel):
    """A question the FAQ could not answer, and when it was asked (business time)."""

    model_config = ConfigDict(frozen=True)

    clause: str
    at: AwareDatetime


class FaqState(BaseModel):
    """The ``faq`` slice of conversation state (written only by the FAQ service)."""

    topic: FaqTopic | None = None
    # The last question asked that the FAQ could not answer, when nothing was answered after
    # it: a follow-up asking it again for another case ("e pra estudante?") is not known either.
    unknown: OpenQuestion | None = None


def current_topic(state: FaqState | None, now: datetime, rule: FollowUp) -> FaqTopic | None:
    """The topic a follow-up may continue at ``now``: the last one, unless it is older than
    the rule allows (a question hours later starts afresh)."""
    topic = state.topic if state else None
    if topic is None or now - topic.at > timedelta(minutes=rule.minutes):
        return None
    return topic


def current_unknown(state: FaqState | None, now: datetime, rule: FollowUp) -> OpenQuestion | None:
    """The unanswered question a follow-up may ask again at ``now``, within the topic's time."""
    unknown = state.unknown if state else None
    if unknown is None or now - unknown.at > timedelta(minutes=rule.minutes):
        return None
    return unknown


def remember(
    state: FaqState | None,
    answered: list[tuple[str, str]],
    now: datetime,
    unanswered: list[str] | None = None,
) -> FaqState:
    """The state after a turn: its last answered (clause, entry id) becomes the topic; a turn
    that answered nothing leaves the topic as it was (an unknown question does not end it) and
    keeps its last ``unanswered`` question open."""
    if not answered:
        state = state or FaqState()
        if not unanswered:
            return state
        return FaqState(topic=state.topic, unknown=OpenQuestion(clause=unanswered[-1], at=now))
    clause, entry_id = answered[-1]
    return FaqState(topic=FaqTopic(entry_id=entry_id, clause=clause, at=now))
