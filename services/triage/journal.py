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
    lines += f.labelled(t, "clarification")
    if f.get("forced_by_clarification"):
        lines.append(t["forced"])
    for key in ("pending_expired", "pending_superseded"):
        if f.has(key):
            lines.append(f"{t[key]} ({short(f.get(key))})")
    return lines + f.labelled(t, "active_context", "reason")


def _memory(f: Fields, t: Mapping[str, str]) -> list[str]:
    noted = f.get("noted")
    lines = []
    if isinstance(noted, dict) and noted:
        shown = ", ".join(f"{name}={short(value)}" for name, value in noted.items())
        lines.append(f"{t['noted']}: {shown}")
    for key in ("corrected", "dropped"):
        if f.has(key):
            lines.append(f"{t[key]}: {listing(f.get(key), t)}")
    return lines


JOURNAL = JournalExplainer(
    events={"triage.decided": _decided, "memory.noted": _memory},
    labels={
        "intents": ("intenções", "intents"),
        "routes": ("especialistas", "specialists"),
        "inline": ("triagem responde sozinha", "triage answers alone"),
        "clarification": ("clarificação", "clarification"),
        "forced": ("rota forçada pela clarificação", "route forced by the clarification"),
        "pending_expired": ("clarificação pendente expirou", "pending clarification expired"),
        "pending_superseded": (
            "clarificação pendente substituída por pedido claro",
            "pending clarification superseded by a clear request",
        ),
        "active_context": ("contexto ativo", "active context"),
        "confidences": ("confiança", "confidence"),
        "noted": ("memória anotou", "memory noted"),
        "corrected": ("corrigido", "corrected"),
        "dropped": ("esquecido (outra pessoa)", "dropped (another person)"),
    },
)
