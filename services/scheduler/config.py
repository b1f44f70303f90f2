"""The ``reminders`` pack section: when each scheduled message is due, its text and template.

A business changes hours, texts and WhatsApp template names here without touching code.
"""

from __future__ import annotations

from datetime import time

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.pack import Pack, PackError


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    text_key: str = Field(min_length=1)
    # Approved WhatsApp template sent instead when the 24-hour window is closed.
    template: str | None = None


class DayBefore(_Message):
    at: str

    @field_validator("at")
    @classmethod
    def _time_of_day(cls, value: str) -> str:
        time.fromisoformat(value)
        return value

    @property
    def time(self) -> time:
        return time.fromisoformat(self.at)


class BeforeClass(_Message):
    minutes: int = Field(gt=0)


class AfterClass(_Message):
    after_minutes: int = Field(ge=0)


class RemindersConfig(BaseModel):
    """The ``reminders`` section of a pack."""

    model_config = ConfigDict(frozen=True)

    day_before: DayBefore | None = None
    before_class: BeforeClass | None = None
    attended: AfterClass | None = None
    no_show: AfterClass | None = None
    max_late_hours: float = Field(default=48, gt=0)
    unknown_name: str = ""


def load_reminders(pack: Pack) -> RemindersConfig:
    """The section as the scheduler reads it at start: every text it names must exist, so a
    typo fails the start (and ``orquestra pack check``) rather than a reminder when due."""
    config = pack.section("reminders", RemindersConfig)
    texts = pack.sections.get("texts", {})
    for name in ("day_before", "before_class", "attended", "no_show"):
        message = getattr(config, name)
        if message is not None and message.text_key not in texts:
            raise PackError(
                f"reminders.{name}: pack {pack.name!r} has no text {message.text_key!r}"
            )
    return config
