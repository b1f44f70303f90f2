"""Forms of saying when, and of saying no, that were lost: a day refused before anything is
booked ("não rola quinta... terça não consigo"), a no after its verb ("consigo não"), a
birthday's day, "da matina" and a dotted "p.m."."""

from __future__ import annotations

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from shared.nlu.age import without_birth_date
from shared.nlu.dates import resolve_date, resolve_time
from shared.nlu.refusal import refused_day
from shared.nlu.yesno import yes_no
from tests.unit.test_trial_flow import Chat, at_stage

TZ = ZoneInfo("America/Sao_Paulo")
# Thursday 2026-02-05: the coming Tuesday is the 10th.
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)


@pytest.mark.parametrize(
    "text", ["terça não consigo", "não rola na terça", "dia 10 não tenho como", "dá não, terça"]
)
def test_a_day_said_with_a_cannot_is_refused(text: str) -> None:
    assert refused_day(text, NOW, TZ) == date(2026, 2, 10)


@pytest.mark.parametrize(
    "text", ["terça não consigo, pode ser dia 24?", "não consigo", "terça não, a outra"]
)
def test_another_day_proposed_or_no_day_is_no_refused_day(text: str) -> None:
    assert refused_day(text, NOW, TZ) is None


@pytest.mark.parametrize("text", ["consigo não", "dá não, desculpa", "vou poder não"])
def test_a_no_after_its_verb_is_a_no(text: str) -> None:
    assert yes_no(text) is False


def test_a_birthdays_day_is_not_the_class_day() -> None:
    for text in ("faço aniversário no dia 14", "ela completa 9 anos sábado"):
        assert resolve_date(without_birth_date(text), NOW, TZ) is None
    # The class day said beside it is still read.
    said = without_birth_date("o niver dela é dia 14, pode ser terça?")
    assert resolve_date(said, NOW, TZ) == date(2026, 2, 10)


def test_slang_and_dotted_periods_of_the_day_give_the_hour() -> None:
    assert resolve_time("às 7 da matina") == time(7, 0)
    assert resolve_time("pode ser 8 p.m.?") == time(20, 0)
    assert resolve_time("7 a. m.") == time(7, 0)


def test_a_day_refused_while_the_day_is_asked_offers_the_next_ones() -> None:
    """ "não vai dar" on a day read as cancelling: the booking stopped."""
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("terça agora não vai dar")
    assert out.journal["reply"] == "trial_day_refused"
    assert out.state.stage == "ask_date"
    assert out.state.desired_date is None
    assert "10/02 fica de fora" in out.text
    assert "24/02" in out.text
