"""A conversation's decision journal as a readable timeline, turn by turn (pure).

Journal entries are JSON objects ``{"at", "service", "turn_id", "event", ...fields}`` written by
every service. This module groups them by turn, orders them by ``at``, measures the
time of every step from the turn's start, and says in Portuguese or English what each step
decided. Known events get a curated sentence built from their fields; any other event (a new
service, a new field) is rendered generically from its fields, so the timeline never breaks
when the services learn to journal something new.

Used by ``orquestra explain`` and by the chat's ``/why``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Lang = Literal["pt", "en"]
LANGS: tuple[Lang, ...] = ("pt", "en")

LABELS: dict[Lang, dict[str, str]] = {
    "pt": {
        "conversation": "Conversa",
        "no_entries": "Nenhuma entrada no diário desta conversa.",
        "turn": "Turno",
        "outside": "Fora de turnos",
        "messages": "mensagens juntadas no turno",
        "business_time": "hora do negócio",
        "total": "do início à entrega",
        "intents": "intenções",
        "source": "fonte",
        "routes": "especialistas",
        "inline": "triagem responde sozinha",
        "clarification": "clarificação",
        "forced": "rota forçada pela clarificação",
        "pending_expired": "clarificação pendente expirou",
        "pending_superseded": "clarificação pendente substituída por pedido claro",
        "active_context": "contexto ativo",
        "confidences": "confiança",
        "reason": "motivo",
        "stage": "etapa",
        "extracted": "extraído",
        "action": "ação",
        "validation": "validação",
        "reply_key": "texto",
        "asked": "pergunta",
        "booking_code": "código",
        "attempts": "tentativas",
        "gate": "tool gate",
        "injected": "injetado",
        "defaults": "padrões",
        "violation": "violação",
        "tool_result": "resultado da tool",
        "handoff": "transferência para humano",
        "entries": "respostas da base",
        "unanswered": "sem resposta",
        "scores": "pontuação",
        "oferta_pointer": "convite para a oferta",
        "mode": "modo",
        "intent": "intenção",
        "proposed": "proposta",
        "decision": "decisão",
        "pending": "transição pendente",
        "bootstrapped": "primeiro turno (bootstrap)",
        "sources": "partes",
        "missing": "faltaram",
        "dropped": "descartadas",
        "bubbles": "balões",
        "partial": "resposta parcial (prazo estourado)",
        "delivered": "entrega",
        "channel": "canal",
        "detail": "detalhe",
        "purpose": "uso",
        "kind": "falha",
        "none": "nenhuma",
        "yes": "sim",
        "no": "não",
    },
    "en": {
        "conversation": "Conversation",
        "no_entries": "No journal entries for this conversation.",
        "turn": "Turn",
        "outside": "Outside turns",
        "messages": "messages merged into the turn",
        "business_time": "business time",
        "total": "from start to delivery",
        "intents": "intents",
        "source": "source",
        "routes": "specialists",
        "inline": "triage answers alone",
        "clarification": "clarification",
        "forced": "route forced by the clarification",
        "pending_expired": "pending clarification expired",
        "pending_superseded": "pending clarification superseded by a clear request",
        "active_context": "active context",
        "confidences": "confidence",
        "reason": "reason",
        "stage": "stage",
        "extracted": "extracted",
        "action": "action",
        "validation": "validation",
        "reply_key": "text",
        "asked": "asks",
        "booking_code": "code",
        "attempts": "attempts",
        "gate": "tool gate",
        "injected": "injected",
        "defaults": "defaults",
        "violation": "violation",
        "tool_result": "tool result",
        "handoff": "handoff to a person",
        "entries": "knowledge-base answers",
        "unanswered": "unanswered",
        "scores": "scores",
        "oferta_pointer": "pointer to the offer",
        "mode": "mode",
        "intent": "intent",
        "proposed": "proposed",
        "decision": "decision",
        "pending": "pending transition",
        "bootstrapped": "first turn (bootstrap)",
        "sources": "parts",
        "missing": "missing",
        "dropped": "dropped",
        "bubbles": "bubbles",
        "partial": "partial reply (deadline passed)",
        "delivered": "delivery",
        "channel": "channel",
        "detail": "detail",
        "purpose": "purpose",
        "kind": "failure",
        "none": "none",
        "yes": "yes",
        "no": "no",
    },
}

# Fields every entry has; never repeated in a step's details.
ENVELOPE = ("at", "service", "turn_id", "event")
MAX_VALUE_CHARS = 160


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


def short(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A field value on one line: strings as they are, the rest as compact JSON."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "" if value is None else str(value)


def _time_key(entry: Mapping[str, Any]) -> float:
    """Entries without a readable ``at`` keep their place at the end (sorting is stable)."""
    at = parse_at(entry.get("at"))
    return at.timestamp() if at is not None else float("inf")


def _listing(values: Any, labels: Mapping[str, str]) -> str:
    if not values:
        return labels["none"]
    if isinstance(values, list | tuple):
        return ", ".join(short(v) for v in values)
    return short(values)


class _Fields:
    """An entry's fields, remembering which ones a formatter already said."""

    def __init__(self, entry: Mapping[str, Any]) -> None:
        self.data = {k: v for k, v in entry.items() if k not in ENVELOPE}
        self.used: set[str] = set()

    def get(self, key: str) -> Any:
        self.used.add(key)
        return self.data.get(key)

    def has(self, key: str) -> bool:
        return self.data.get(key) not in (None, "", [], {})

    def rest(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k not in self.used}


Formatter = Callable[[_Fields, Mapping[str, str]], list[str]]


def _turn_started(f: _Fields, t: Mapping[str, str]) -> list[str]:
    lines = []
    if f.has("now"):
        lines.append(f"{t['business_time']}: {f.get('now')}")
    return lines


def _triage(f: _Fields, t: Mapping[str, str]) -> list[str]:
    intents = f.get("intents")
    source = f.get("source")
    lines = [f"{t['intents']}: {_listing(intents, t)} ({t['source']}: {short(source or '?')})"]
    if f.has("confidences"):
        scores = f.get("confidences")
        if isinstance(scores, dict):
            shown = ", ".join(f"{name} {_number(value)}" for name, value in scores.items())
            lines.append(f"{t['confidences']}: {shown}")
    routes = f.get("routes")
    if routes:
        lines.append(f"{t['routes']}: {_listing(routes, t)}")
    elif routes is not None:
        lines.append(t["inline"])
    if f.has("clarification"):
        lines.append(f"{t['clarification']}: {short(f.get('clarification'))}")
    if f.get("forced_by_clarification"):
        lines.append(t["forced"])
    for key in ("pending_expired", "pending_superseded"):
        if f.has(key):
            lines.append(f"{t[key]} ({short(f.get(key))})")
    if f.has("active_context"):
        lines.append(f"{t['active_context']}: {short(f.get('active_context'))}")
    if f.has("reason"):
        lines.append(f"{t['reason']}: {short(f.get('reason'))}")
    return lines


def _trial(f: _Fields, t: Mapping[str, str]) -> list[str]:
    before, after = f.get("stage_before"), f.get("stage_after")
    lines = [f"{t['stage']}: {short(before or '?')} → {short(after or '?')}"]
    for key, label in (
        ("extracted", "extracted"),
        ("action", "action"),
        ("booking_code", "booking_code"),
        ("validation", "validation"),
        ("asked", "asked"),
        ("reply", "reply_key"),
        ("tool_result", "tool_result"),
        ("handoff", "handoff"),
    ):
        if f.has(key):
            lines.append(f"{t[label]}: {short(f.get(key))}")
    attempts = f.get("attempts")
    if attempts:
        lines.append(f"{t['attempts']}: {short(attempts)}")
    gate = f.get("gate")
    if isinstance(gate, dict):
        lines.extend(_gate(gate, t))
    return lines


def _gate(gate: Mapping[str, Any], t: Mapping[str, str]) -> list[str]:
    outcome = gate.get("outcome")
    refusal = gate.get("refusal")
    head = f"{t['gate']}: {short(gate.get('tool') or '?')} → {short(outcome or '?')}"
    lines = [head + (f" ({short(refusal)})" if refusal else "")]
    for injection in gate.get("injections") or []:
        if isinstance(injection, dict):
            lines.append(
                f"  {t['injected']}: {injection.get('arg')} ← {injection.get('context_key')}"
                f" = {short(injection.get('value'))}"
            )
    if gate.get("defaults_applied"):
        lines.append(f"  {t['defaults']}: {short(gate['defaults_applied'])}")
    if gate.get("violation"):
        lines.append(f"  {t['violation']}: {short(gate['violation'])}")
    return lines


def _faq(f: _Fields, t: Mapping[str, str]) -> list[str]:
    line = f"{t['entries']}: {_listing(f.get('entry_ids'), t)}"
    if f.has("source"):
        line += f" ({t['source']}: {short(f.get('source'))})"
    lines = [line]
    if f.has("unanswered"):
        lines.append(f"{t['unanswered']}: {_listing(f.get('unanswered'), t)}")
    if f.has("scores"):
        lines.append(f"{t['scores']}: {short(f.get('scores'))}")
    if f.get("oferta_pointer"):
        lines.append(t["oferta_pointer"])
    return lines


def _mode(f: _Fields, t: Mapping[str, str]) -> list[str]:
    current, final = f.get("current_mode"), f.get("final_mode")
    decision = f.get("validator_decision")
    head = f"{t['mode']}: {short(current or '?')} → {short(final or '?')}"
    lines = [f"{head} ({t['decision']}: {short(decision or '?')})"]
    intent = f.get("detected_intent")
    if intent is not None:
        why = [_number(f.get("intent_confidence")), short(f.get("intent_evidence") or "")]
        lines.append(f"{t['intent']}: {short(intent)} ({', '.join(w for w in why if w)})")
    trigger = f.get("trigger")
    if f.has("proposed_mode"):
        proposed = f"{t['proposed']}: {short(f.get('proposed_mode'))}"
        lines.append(f"{proposed} ({short(trigger)})" if trigger else proposed)
    if f.has("transition_reason"):
        lines.append(f"{t['reason']}: {short(f.get('transition_reason'))}")
    if f.has("pending_transition"):
        lines.append(f"{t['pending']}: {short(f.get('pending_transition'))}")
    if f.get("bootstrapped"):
        lines.append(t["bootstrapped"])
    return lines


def _merge(f: _Fields, t: Mapping[str, str]) -> list[str]:
    lines = [f"{t['sources']}: {_listing(f.get('sources'), t)}"]
    for key in ("missing", "dropped"):
        if f.has(key):
            lines.append(f"{t[key]}: {_listing(f.get(key), t)}")
    if f.has("bubbles"):
        lines.append(f"{t['bubbles']}: {short(f.get('bubbles'))}")
    return lines


def _delivered(f: _Fields, t: Mapping[str, str]) -> list[str]:
    line = f"{t['delivered']}: {short(f.get('status') or '?')}"
    if f.has("channel"):
        line += f" ({t['channel']}: {short(f.get('channel'))})"
    lines = [line]
    if f.has("detail"):
        lines.append(f"{t['detail']}: {short(f.get('detail'))}")
    if f.has("bubbles"):
        lines.append(f"{t['bubbles']}: {short(f.get('bubbles'))}")
    if f.get("partial"):
        lines.append(t["partial"])
    return lines


def _llm(f: _Fields, t: Mapping[str, str]) -> list[str]:
    line = f"{t['purpose']}: {short(f.get('purpose') or '?')}"
    if f.has("kind"):
        line += f" ({t['kind']}: {short(f.get('kind'))})"
    return [line]


def _formatter(event: str, fields: _Fields) -> Formatter | None:
    """The curated formatter of an event: by name, or by the fields that identify it."""
    if event == "turn.started":
        return _turn_started
    if event in ("merge.complete", "merge.partial"):
        return _merge
    if event == "reply.delivered":
        return _delivered
    if event.startswith("llm."):
        return _llm
    if "validator_decision" in fields.data or event.upper() == "MODE_DECISION":
        return _mode
    if event.startswith("triage.") and "intents" in fields.data:
        return _triage
    if event.startswith("trial.") and "stage_after" in fields.data:
        return _trial
    if event.startswith("faq.") and "entry_ids" in fields.data:
        return _faq
    return None


def explain_entry(entry: Mapping[str, Any], lang: Lang, *, verbose: bool = False) -> list[str]:
    """What one entry says: curated lines for known events, ``key: value`` for the rest.

    ``verbose`` adds the fields the curated lines left out.
    """
    labels = LABELS[lang]
    fields = _Fields(entry)
    formatter = _formatter(str(entry.get("event", "")), fields)
    lines = formatter(fields, labels) if formatter else []
    rest = fields.rest()
    if formatter is None or verbose:
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
