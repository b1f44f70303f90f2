"""A conversation's decision journal as a readable timeline, turn by turn (pure).

Journal entries are JSON objects ``{"at", "service", "turn_id", "event", ...fields}`` written by
every service. This module groups them by turn, orders them by ``at``, measures the
time of every step from the turn's start, and says in Portuguese or English what each step
decided. How an event reads is said by the service that writes it (its spec's ``journal``, see
``shared/explain.py``); an event no service explains is rendered field by field, so the
timeline never breaks when the services learn to journal something new.

Used by ``orquestra explain`` and by the chat's ``/why``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from services.registry import SPECS
from shared.explain import LANGS, SHARED, Explainer, Fields, Lang, short

__all__ = ["LANGS", "Lang", "build_timeline", "explain_entry", "render_timeline"]

# The timeline's own words; each service's explainer brings the words of its events.
LABELS: dict[Lang, dict[str, str]] = {
    "pt": {
        "conversation": "Conversa",
        "no_entries": "Nenhuma entrada no diário desta conversa.",
        "turn": "Turno",
        "outside": "Fora de turnos",
        "messages": "mensagens juntadas no turno",
        "total": "do início à entrega",
    },
    "en": {
        "conversation": "Conversation",
        "no_entries": "No journal entries for this conversation.",
        "turn": "Turn",
        "outside": "Outside turns",
        "messages": "messages merged into the turn",
        "total": "from start to delivery",
    },
}


@dataclass(frozen=True)
class Step:
    """One journal entry, explained."""

    at: datetime | None
    since_start_ms: float | None
    service: str
    event: str
    lines: list[str]


@dataclass(frozen=True)
class TurnView:
    """Every step of one turn, in time order."""

    turn_id: str | None
    seq: int | None
    started_at: datetime | None
    business_time: str | None
    messages: list[str]
    steps: list[Step] = field(default_factory=list)
    total_ms: float | None = None


def parse_at(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _time_key(entry: Mapping[str, Any]) -> float:
    """Entries without a readable ``at`` keep their place at the end (sorting is stable)."""
    at = parse_at(entry.get("at"))
    return at.timestamp() if at is not None else float("inf")


@cache
def _explainers() -> dict[str, tuple[Explainer, dict[Lang, dict[str, str]]]]:
    """Event name → its explainer and the labels it reads, from every registered service
    (event names are the services' own: ``trial.decided``, ``MODE_DECISION``...)."""
    found: dict[str, tuple[Explainer, dict[Lang, dict[str, str]]]] = {}
    journals = [SHARED, *(j for spec in SPECS if (j := spec.explainer()) is not None)]
    for journal in journals:
        labels = {lang: {**SHARED.words(lang), **journal.words(lang)} for lang in LANGS}
        for event, explain in journal.events.items():
            found[event] = (explain, labels)
    return found


def explain_entry(entry: Mapping[str, Any], lang: Lang, *, verbose: bool = False) -> list[str]:
    """What one entry says: its service's lines for a known event, ``key: value`` for the rest.

    ``verbose`` adds the fields the curated lines left out.
    """
    fields = Fields(entry)
    known = _explainers().get(str(entry.get("event", "")))
    lines = known[0](fields, known[1][lang]) if known else []
    rest = fields.rest()
    if known is None or verbose:
        lines += [f"{key}: {short(value)}" for key, value in rest.items()]
    return lines


def build_timeline(
    entries: Iterable[Mapping[str, Any]], lang: Lang, *, verbose: bool = False
) -> list[TurnView]:
    """Group entries by turn (in order of first appearance) and explain each one."""
    groups: dict[str | None, list[Mapping[str, Any]]] = {}
    for entry in entries:
        groups.setdefault(entry.get("turn_id"), []).append(entry)
    turns = []
    for turn_id, group in groups.items():
        ordered = sorted(group, key=_time_key)
        turns.append(_turn_view(turn_id, ordered, lang, verbose))
    return turns


def _turn_view(
    turn_id: str | None, entries: list[Mapping[str, Any]], lang: Lang, verbose: bool
) -> TurnView:
    started = next((e for e in entries if e.get("event") == "turn.started"), None)
    start_at = parse_at(started.get("at")) if started else None
    if start_at is None:
        start_at = next((parse_at(e.get("at")) for e in entries if parse_at(e.get("at"))), None)
    steps = []
    for entry in entries:
        at = parse_at(entry.get("at"))
        since = (at - start_at).total_seconds() * 1000 if at and start_at else None
        steps.append(
            Step(
                at=at,
                since_start_ms=since,
                service=str(entry.get("service", "?")),
                event=str(entry.get("event", "?")),
                lines=explain_entry(entry, lang, verbose=verbose),
            )
        )
    delivered = [s for s in steps if s.event == "reply.delivered" and s.since_start_ms is not None]
    messages = started.get("messages") if started else None
    seq = started.get("seq") if started else None
    return TurnView(
        turn_id=turn_id,
        seq=seq if isinstance(seq, int) else None,
        started_at=start_at,
        business_time=str(started["now"]) if started and started.get("now") else None,
        messages=[str(m) for m in messages] if isinstance(messages, list) else [],
        steps=steps,
        total_ms=delivered[0].since_start_ms if delivered else None,
    )


def format_ms(ms: float | None) -> str:
    if ms is None:
        return "     ?"
    if abs(ms) < 10_000:
        return f"{ms:+6.0f}ms"
    return f"{ms / 1000:+6.1f}s"


def render_turn(turn: TurnView, lang: Lang) -> list[str]:
    """The lines of one turn: a header, the merged messages, then every step."""
    labels = LABELS[lang]
    if turn.turn_id is None:
        header = f"── {labels['outside']}"
    else:
        number = f" {turn.seq}" if turn.seq is not None else ""
        header = f"── {labels['turn']}{number} · {turn.turn_id}"
        if turn.started_at is not None:
            header += f" · {turn.started_at.isoformat(timespec='milliseconds')}"
    lines = [header]
    if turn.messages:
        lines.append(f"   {labels['messages']} ({len(turn.messages)}):")
        lines += [f"     › {short(m, 400)}" for m in turn.messages]
    for step in turn.steps:
        lines.append(f"   {format_ms(step.since_start_ms)}  {step.service:<12} {step.event}")
        lines += [f"              {' ' * 12} {line}" for line in step.lines]
    if turn.total_ms is not None:
        lines.append(f"   {labels['total']}: {turn.total_ms:.0f} ms")
    return lines


def render_timeline(
    conversation_id: str,
    entries: Iterable[Mapping[str, Any]],
    lang: Lang,
    *,
    verbose: bool = False,
) -> str:
    """The whole conversation as text."""
    labels = LABELS[lang]
    entries = list(entries)
    lines = [f"{labels['conversation']} {conversation_id}"]
    if not entries:
        return "\n".join([*lines, labels["no_entries"]])
    for turn in build_timeline(entries, lang, verbose=verbose):
        lines.append("")
        lines += render_turn(turn, lang)
    return "\n".join(lines)
