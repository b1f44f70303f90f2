"""The one line staff read first: what the bot understood of a conversation (pure).

Shown in the inbox list and in handoff notifications, so a person picking a conversation up
knows what was asked, what the trial booking has collected and what the bot could not answer.
Labels come from the pack's ``inbox`` section and texts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from shared.contracts import TriageView
from shared.pack import Pack
from shared.state import Snapshot

# Fields of the trial's view said in the summary, in this order.
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
    the last question it could not answer. ``slices`` are the conversation's slices as loaded
    (name → JSON document); the trial's are read through its public view."""
    parts: list[str] = []
    triage = Snapshot(slices).model("triage", TriageView)
    intents = triage.last_intents if triage else []
    if intents:
        parts.append(pack.text("inbox_summary_intents", intents=", ".join(intents)))
    trial = Snapshot(slices).trial()
    if trial is not None and trial.stage:
        stage = config.stages.get(trial.stage, trial.stage)
        parts.append(pack.text("inbox_summary_trial", stage=stage))
        known = [
            f"{config.fields.get(name, name)} {value}"
            for name in TRIAL_FIELDS
            if (value := getattr(trial, name)) not in (None, "")
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
    """Who writes: the name they gave for themselves, else the student's (their own booking)."""
    trial = Snapshot(slices).trial()
    meta = slices.get("meta") or {}
    if trial is None:
        return meta.get("contact_name")
    return trial.contact_name or meta.get("contact_name") or trial.nome
