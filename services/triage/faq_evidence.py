"""The knowledge base as evidence for triage: does the FAQ know the answer to a question?

Keywords cannot list every way of asking ("a partir de que idade pode?"); the FAQ index,
built from the same pack, can say whether one of its entries answers a clause. Triage uses it
only for clauses shaped like questions, and with a stricter coverage than the FAQ's own, so a
question it vouches for is one the FAQ will answer.
"""

from __future__ import annotations

from datetime import datetime

from services.triage.config import TriageConfig
from services.triage.questions import FaqKnows
from shared.faq.ages import age_question, ages_in
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.nlu.dates import without_dates_and_times
from shared.nlu.yesno import yes_no
from shared.pack import Pack


def faq_knows(pack: Pack, config: TriageConfig) -> FaqKnows | None:
    """A predicate over question clauses, or None when the pack has no FAQ."""
    if "faq" not in pack.sections:
        return None
    faq_config = pack.section("faq", FaqConfig)
    index = FaqIndex(faq_config)
    min_coverage = max(config.questions.faq_min_coverage, faq_config.min_coverage)

    booking = faq_config.booking_context
    booking_tags = set(booking.tags) if booking is not None else set()
    replied = set(booking.replied_by_booking) if booking is not None else set()

    def knows(
        clause: str,
        message: str = "",
        now: datetime | None = None,
        *,
        beside_booking: bool = False,
    ) -> bool:
        if beside_booking:
            clause = without_dates_and_times(clause)
        # A question about an age ("aceitam alguém de 99?", "tem limite de idade? nasci em
        # 1950") is answered by the FAQ's age rule.
        elif age_question(clause, index, ages_in(clause, now), ages_in(message, now)):
            return True
        if not index.content_terms(clause) and yes_no(clause) is not None:
            # Nothing but a yes asked for ("terça às 19 pode?" once its day and time are set
            # aside, the "pode?" of "terça 19h, pode?"): whether what the message gives will
            # do, no topic of the base, whose entries use the word too ("pode" is the age's).
            return False
        match = index.best(clause, without_dates=beside_booking)
        if (
            match is None
            or match.score < faq_config.threshold
            or match.coverage < min_coverage
            or match.frame_only
        ):
            return False
        if not beside_booking or not booking_tags:
            return True
        # What the booking's own replies also say ("que horário tem?") is the booking's; what
        # only another entry about the booked class says ("preciso levar algo?") is not.
        own = index.best(clause, tags=booking_tags)
        if own is None or own.coverage < faq_config.min_coverage:
            return True
        return bool(replied) and own.entry_id not in replied

    return knows
