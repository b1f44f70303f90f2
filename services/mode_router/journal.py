"""How the mode router's journal events read (``orquestra explain``): the funnel mode's move."""

from __future__ import annotations

from collections.abc import Mapping

from shared.explain import Fields, JournalExplainer, number, short


def _mode(f: Fields, t: Mapping[str, str]) -> list[str]:
    current, final = f.get("current_mode"), f.get("final_mode")
    decision = f.get("validator_decision")
    head = f"{t['mode']}: {short(current or '?')} → {short(final or '?')}"
    lines = [f"{head} ({t['decision']}: {short(decision or '?')})"]
    intent = f.get("detected_intent")
    if intent is not None:
        why = [number(f.get("intent_confidence")), short(f.get("intent_evidence") or "")]
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


JOURNAL = JournalExplainer(
    events={"MODE_DECISION": _mode},
    labels={
        "pt": {
            "mode": "modo",
            "decision": "decisão",
            "intent": "intenção",
            "proposed": "proposta",
            "pending": "transição pendente",
            "bootstrapped": "primeiro turno (bootstrap)",
        },
        "en": {
            "mode": "mode",
            "decision": "decision",
            "intent": "intent",
            "proposed": "proposed",
            "pending": "pending transition",
            "bootstrapped": "first turn (bootstrap)",
        },
    },
)
