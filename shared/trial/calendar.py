"""The business calendar: the days the business is closed, and why (pure).

A business closes on its country's and state's public holidays, on the optional ones it
observes (Carnival is a "ponto facultativo" in Brazil, yet nobody plays beach tennis at a
center that is closed), and on the days its pack lists (the city's own holidays, which the
``holidays`` package does not know, a renovation, a team trip). The pack says where the business
is in ``business.calendar``; everything that offers or books a day asks ``closed_reason`` first,
so a holiday Tuesday is never offered nor booked and the bot can say why.

Holidays come from the ``holidays`` package (maintained, with the movable feasts — Carnival,
Good Friday, Corpus Christi — computed per year), looked up once per year and place.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

import holidays
from pydantic import BaseModel, ConfigDict, Field, field_validator

# A listed closed day: one date ("2027-03-02") or the same day every year ("01-25").
_ONE_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_EVERY_YEAR = re.compile(r"^\d{2}-\d{2}$")


class ClosedDay(BaseModel):
    """A day the pack says the business is closed, with the reason people are told."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    day: str
    reason: str = Field(min_length=1)

    @field_validator("day")
    @classmethod
    def _a_day(cls, value: str) -> str:
        if _ONE_DAY.match(value):
            date.fromisoformat(value)
        elif _EVERY_YEAR.match(value):
            date.fromisoformat(f"2000-{value}")
        else:
            raise ValueError(f"closed day {value!r} is neither YYYY-MM-DD nor MM-DD")
        return value

    def falls_on(self, day: date) -> bool:
        return self.day in (day.isoformat(), day.isoformat()[5:])


class BusinessCalendar(BaseModel):
    """Where the business is (for its holidays) and the extra days it closes.

    The empty calendar (no country, no listed days) is never closed: a pack without a calendar
    keeps the class days it always had.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    # ISO 3166 country ("BR") and subdivision ("SP") as the ``holidays`` package names them.
    country: str | None = None
    subdivision: str | None = None
    # The city, for people reading the pack; its own holidays go under ``closed_days``.
    city: str | None = None
    # The language holiday names are told in ("pt_BR"), as the ``holidays`` package names it.
    language: str | None = None
    # Optional holidays (the package's "optional" category) the business closes on, by name.
    optional_holidays: list[str] = Field(default_factory=list)
    closed_days: list[ClosedDay] = Field(default_factory=list)

    @field_validator("country")
    @classmethod
    def _known_country(cls, value: str | None) -> str | None:
        if value is not None and value not in holidays.list_supported_countries():
            raise ValueError(f"the holidays package does not know country {value!r}")
        return value

    def closed_reason(self, day: date) -> str | None:
        """Why the business is closed on ``day`` (a listed reason or the holiday's name)."""
        for closed in self.closed_days:
            if closed.falls_on(day):
                return closed.reason
        if self.country is None:
            return None
        place = (self.country, self.subdivision, self.language)
        public = _holidays(*place, "public", day.year)
        if day in public:
            return public[day]
        optional = _holidays(*place, "optional", day.year)
        name = optional.get(day)
        return name if name in self.optional_holidays else None

    def is_open(self, day: date) -> bool:
        return self.closed_reason(day) is None


@lru_cache(maxsize=64)
def _holidays(
    country: str, subdivision: str | None, language: str | None, category: str, year: int
) -> dict[date, str]:
    """One year's holidays of a place and category, as {day: name} (several names joined)."""
    try:
        found = holidays.country_holidays(
            country, subdiv=subdivision, years=year, categories=(category,), language=language
        )
    except ValueError:
        # A country without that category (not every country has optional holidays).
        return {}
    return {day: "; ".join(found.get_list(day)) for day in found}
