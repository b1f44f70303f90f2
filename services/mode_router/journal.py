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
    lines += f.labelled(t, "transition_reason", "pending_transition",
                        transition_reason="reason", pending_transition="pending")  # fmt: skip
    if f.get("bootstrapped"):
        lines.append(t["bootstrapped"])
    return lines


JOURNAL = JournalExplainer(
    events={"MODE_DECISION": _mode},
    labels={
        "mode": ("modo", "mode"),
        "decision": ("decisão", "decision"),
        "intent": ("intenção", "intent"),
        "proposed": ("proposta", "proposed"),
        "pending": ("transição pendente", "pending transition"),
        "bootstrapped": ("primeiro turno (bootstrap)", "first turn (bootstrap)"),
    },
)
