"""How triage's journal events read (``orquestra explain``): intents, routes, clarification."""

from __future__ import annotations

from collections.abc import Mapping

from shared.explain import Fields, JournalExplainer, listing, number, short


def _decided(f: Fields, t: Mapping[str, str]) -> list[str]:
    intents = f.get("intents")
    source = f.get("source")
    lines = [f"{t['intents']}: {listing(intents, t)} ({t['source']}: {short(source or '?')})"]
    if f.has("confidences"):
        scores = f.get("confidences")
        if isinstance(scores, dict):
            shown = ", ".join(f"{name} {number(value)}" for name, value in scores.items())
            lines.append(f"{t['confidences']}: {shown}")
    routes = f.get("routes")
    if routes:
        lines.append(f"{t['routes']}: {listing(routes, t)}")
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


JOURNAL = JournalExplainer(
    events={"triage.decided": _decided},
    labels={
        "pt": {
            "intents": "intenções",
            "routes": "especialistas",
            "inline": "triagem responde sozinha",
            "clarification": "clarificação",
            "forced": "rota forçada pela clarificação",
            "pending_expired": "clarificação pendente expirou",
            "pending_superseded": "clarificação pendente substituída por pedido claro",
            "active_context": "contexto ativo",
            "confidences": "confiança",
        },
        "en": {
            "intents": "intents",
            "routes": "specialists",
            "inline": "triage answers alone",
            "clarification": "clarification",
            "forced": "route forced by the clarification",
            "pending_expired": "pending clarification expired",
            "pending_superseded": "pending clarification superseded by a clear request",
            "active_context": "active context",
            "confidences": "confidence",
        },
    },
)
