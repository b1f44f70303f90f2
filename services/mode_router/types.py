"""The mode router's vocabulary: conversation modes, detected intents and business time.

Both enums are fixed in code because the routing rules reason about them (silence leads to
``reativacao``, a booking to ``followup``); every list, matrix and timing that uses them lives in
the domain pack.

Business time: the core never reads the clock. Every time it compares arrives as an argument
(``now`` is ``Turn.now``). The seed compared against the timezone-naive ``datetime.utcnow()``, so
a naive datetime is read as UTC here (``as_utc``); aware ones are converted to UTC. Mixing the two
therefore never raises and never shifts a stored time by the server's local offset.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator


class ConversationMode(StrEnum):
    """The business stance of a conversation (the seed's ``final_mode``)."""

    DISCOVERY = "discovery"
    OFERTA = "oferta"
    FOLLOWUP = "followup"
    REATIVACAO = "reativacao"


class DetectedIntent(StrEnum):
    """What the person signals in a message; it informs the mode, it never decides it."""

    INTERESSE_VAGA = "interesse_vaga"
    DUVIDA_PERFIL = "duvida_perfil"
    PRONTO_FECHAR = "pronto_fechar"
    VOLTANDO = "voltando"
    NEUTRO = "neutro"
    OBJECAO = "objecao"
    RECUSA = "recusa"


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive datetime is taken to be UTC already (the seed's utcnow)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def minutes_between(earlier: datetime, later: datetime) -> float:
    """Minutes from ``earlier`` to ``later`` (negative when ``earlier`` is in the future)."""
    return (as_utc(later) - as_utc(earlier)).total_seconds() / 60


# A datetime field that always holds an aware UTC value, whatever the stored form was.
UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]
