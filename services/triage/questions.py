"""Questions inside a message: where its clauses are, which ones ask something, and what the
FAQ is given to answer.

People put an answer, a request and a question in one message ("quero agendar a experimental
e saber o preço"). Triage routes the whole message to every specialist it concerns, but the
FAQ is handed only the clauses that ask something, so a booking request is never read as an
unanswerable question ("não sei") and every question gets its own retrieval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from services.triage.config import TriageConfig
from shared.nlu.bounds import limits_time
from shared.nlu.dates import without_dates_and_times
from shared.nlu.normalize import normalize


class FaqKnows(Protocol):
    """Whether the knowledge base knows the answer to a question clause, read with the whole
    message it came from and the turn's business time (an age said elsewhere in it). Built by
    the shell from the FAQ index; None where no index is at hand, e.g. a config-only check."""

    def __call__(
        self,
        clause: str,
        message: str = "",
        now: datetime | None = None,
        *,
        beside_booking: bool = False,
    ) -> bool:
        """``beside_booking``: read the clause without the days and times it names, and
        count only an entry about something other than what is being booked."""
        ...


# Sentence ends: "?" marks the clause before it as a question. A "." splits only before a
# space or the end, so "18.30" or "R$ 2.50" stay whole.
_SENTENCE = re.compile(r"(\?+|[!;\n…]+|\.(?=\s|$))")
# Commas split the parts of an answer ("Maria, 27") for the active-flow check.
_COMMA = re.compile(r",|\s[-–—+]\s")


@dataclass(frozen=True)
class Clause:
    """A piece of a message as typed, and whether a "?" closed it, or a "!" ("que bom!": an
    exclamation, though its first word starts questions)."""

    text: str
    asked: bool
    exclaimed: bool = False

    @property
    def normalized(self) -> str:
        return normalize(self.text)


def sentences(text: str) -> list[Clause]:
    """The sentences of ``text``, each with whether it ended with "?"."""
    pieces = _SENTENCE.split(text)
    out: list[Clause] = []
    for body, end in zip(pieces[::2], [*pieces[1::2], ""], strict=True):
        if body.strip():
            out.append(
                Clause(body.strip(), asked=end.startswith("?"), exclaimed=end.startswith("!"))
            )
    return out


def parts(text: str) -> list[Clause]:
    """Sentences cut further at commas: the smallest pieces an answer comes in."""
    out: list[Clause] = []
    for sentence in sentences(text):
        pieces = [p.strip() for p in _COMMA.split(sentence.text) if p.strip()]
        for position, piece in enumerate(pieces):
            asked = sentence.asked and position == len(pieces) - 1
            out.append(Clause(piece, asked=asked, exclaimed=sentence.exclaimed))
    return out


def without_cases(text: str, config: TriageConfig) -> str:
    """``text`` without the conditions set before the question of their sentence: "e se eu
    fechar o plano, a experimental é descontada?" asks about the trial class, and closing a
    plan there is a case, not a request to enroll. A sentence that is nothing but a condition
    ("e se chover?") is the question and stays."""
    kept: list[str] = []
    dropped = False
    for sentence in sentences(text):
        pieces = [p.strip() for p in _COMMA.split(sentence.text) if p.strip()]
        if sentence.asked:
            rest = [p for p in pieces[:-1] if not config.questions.sets_case(normalize(p))]
            dropped = dropped or len(rest) < len(pieces) - 1
            pieces = [*rest, pieces[-1]]
        kept.append(", ".join(pieces) + ("?" if sentence.asked else "."))
    return " ".join(kept) if dropped else text


def is_question(clause: Clause, config: TriageConfig) -> bool:
    """Whether a clause asks something: a "?", a question word first (not in an exclamation:
    "que bom!"), or a request for information ("quero saber o preço")."""
    return clause.asked or config.questions.asks(clause.normalized, exclaimed=clause.exclaimed)


def is_direct_question(clause: Clause, config: TriageConfig) -> bool:
    """A "?", a question word first (not in an exclamation) or a tag asking for a confirmation
    last ("..., né"): a question, not a word naming a topic ("dúvida")."""
    rules, normalized = config.questions, clause.normalized
    starts = rules.starts_question(normalized) and not clause.exclaimed
    return clause.asked or starts or rules.ends_with_tag(normalized)


def clauses(text: str, config: TriageConfig) -> list[Clause]:
    """Sentences cut at "e" / "e se" / "também" where a question starts after a complete
    clause: "quero agendar e onde fica?" is a request and a question, while "raquete e
    bolinha?" or "aula experimental e quanto custa?" (a topic, then its question) stay whole.
    """
    rules = config.questions
    out: list[Clause] = []
    for sentence in sentences(text):
        pieces = rules.joiners.split(sentence.text)
        current = pieces[0]
        for joiner, piece in zip(pieces[1::2], pieces[2::2], strict=True):
            left = Clause(current.strip(), asked=False)
            complete = is_question(left, config) or config.clarification.has_action(left.normalized)
            if complete and rules.asks(normalize(piece)):
                out.append(left)
                current = piece
            else:
                current = current + joiner + piece
        if current.strip():
            out.append(Clause(current.strip(), asked=sentence.asked, exclaimed=sentence.exclaimed))
    return out


def continues_questions(text: str, config: TriageConfig) -> bool:
    """Whether a message read right after an FAQ answer is the next question of the same
    conversation: short, and asking something or opening with a joiner ("e no sábado?", "e
    sábado de jeito nenhum", "quando ele fizer 8 pode?"). The FAQ reads it against the topic
    it keeps; triage only has to send it there instead of the menu."""
    words = normalize(text).split()
    if not words or len(words) > config.questions.follow_up_words:
        return False
    joiners = {normalize(w) for w in config.questions.joiner_words}
    return words[0] in joiners or any(is_question(c, config) for c in parts(text))


def is_flow_question(
    clause: Clause,
    config: TriageConfig,
    *,
    knows: FaqKnows | None = None,
    message: str = "",
    now: datetime | None = None,
) -> bool:
    """A question about the booking itself (a slot, why a field is asked): mid-booking it is
    the booking flow's to answer, not the FAQ's. A day or time given beside a question about
    something else ("quinta às 19h, dá pra estacionar?") does not make it one: with ``knows``,
    a clause the knowledge base answers outside the booking's own entries once its days and
    times are set aside is the FAQ's (the booking still reads the day and time). A limit on the
    time ("tem alguma turma depois das 18h?") is one whatever else it names: setting its hour
    aside would take the limit away with it."""
    rules = config.questions
    if not rules.about_flow(clause.normalized):
        return False
    if knows is None or limits_time(clause.text):
        return True
    if rules.about_flow(without_dates_and_times(clause.text)):
        return True
    return not knows(clause.text, message, now, beside_booking=True)


def faq_clauses(
    text: str,
    config: TriageConfig,
    *,
    active: bool,
    knows: FaqKnows | None = None,
    now: datetime | None = None,
) -> list[Clause]:
    """The clauses of ``text`` the FAQ should answer: those that ask something (mid-booking,
    not about the booking itself) and those naming an FAQ topic outright ("valores"). A
    question that is a booking request the FAQ does not know ("como faço pra agendar?") is the
    booking's to answer."""
    faq_rules = config.intents.get("faq")
    booking_rules = config.intents.get(config.active_context.intent)
    picked: list[Clause] = []
    for clause in clauses(text, config):
        normalized = clause.normalized
        if not normalized:
            continue
        if active and is_flow_question(clause, config, knows=knows, message=text, now=now):
            continue
        topic = faq_rules is not None and faq_rules.score(normalized) >= config.threshold
        known = knows is not None and is_question(clause, config) and knows(clause.text, text, now)
        booking = booking_rules is not None and booking_rules.score(normalized) >= config.threshold
        if topic or known or (is_question(clause, config) and not booking):
            picked.append(clause)
    return picked


def faq_text(
    text: str,
    config: TriageConfig,
    *,
    active: bool,
    knows: FaqKnows | None = None,
    now: datetime | None = None,
) -> str:
    """What the FAQ is asked: the question clauses, one per line, or the whole message when
    no clause stands out as a question (triage sent it there because it asks something)."""
    picked = faq_clauses(text, config, active=active, knows=knows, now=now)
    if not picked:
        return text
    return "\n".join(c.text + ("?" if c.asked else "") for c in picked)
