"""The one line staff read first: what the bot understood of a conversation (pure).

Shown in the inbox list and in handoff notifications, so a person picking a conversation up
knows what was asked, what the trial booking has collected and what the bot could not answer.
Labels come from the pack's ``inbox`` section and texts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from shared.pack import Pack

TRIAL_FIELDS = ("nome", "idade", "nivel", "desired_date", "desired_time", "booking_id")


class InboxConfig(BaseModel):
    """The pack's ``inbox`` section: labels of the summary line."""

    stages: dict[str, str]
    fields: dict[str, str]
    separator: str = " · "


def summarize(
    slices: dict[str, Any], unanswered: str | None, pack: Pack, config: InboxConfig
) -> str:
    """One line of what the bot understood: the intents, the trial's stage and fields, and
    the last question it could not answer."""
    parts: list[str] = []
    intents = (slices.get("triage") or {}).get("last_intents") or []
    if intents:
        parts.append(pack.text("inbox_summary_intents", intents=", ".join(intents)))
    trial = slices.get("trial") or {}
    if trial.get("stage"):
        stage = config.stages.get(trial["stage"], trial["stage"])
        parts.append(pack.text("inbox_summary_trial", stage=stage))
        known = [
            f"{config.fields.get(name, name)} {trial[name]}"
            for name in TRIAL_FIELDS
            if trial.get(name) not in (None, "")
        ]
        if known:
            parts.append(pack.text("inbox_summary_fields", fields=", ".join(known)))
    if unanswered:
        parts.append(pack.text("inbox_summary_unanswered", question=unanswered))
    return config.separator.join(parts) or pack.text("inbox_summary_empty")


def last_unanswered(journal: list[dict[str, Any]]) -> str | None:
    """The latest question the FAQ could not answer, from the journal."""
    for entry in reversed(journal):
        if entry.get("event") == "faq.answered" and entry.get("unanswered"):
            questions = entry["unanswered"]
            return str(questions[-1]) if isinstance(questions, list) else str(questions)
    return None


def contact_name(slices: dict[str, Any]) -> str | None:
    trial = slices.get("trial") or {}
    meta = slices.get("meta") or {}
    return trial.get("contact_name") or meta.get("contact_name") or trial.get("nome")
