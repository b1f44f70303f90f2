"""How the trial's journal events read (``orquestra explain``): the booking flow's step, the
tool gate's verdict, the store's result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.explain import Fields, JournalExplainer, short


def _decided(f: Fields, t: Mapping[str, str]) -> list[str]:
    before, after = f.get("stage_before"), f.get("stage_after")
    lines = [f"{t['stage']}: {short(before or '?')} → {short(after or '?')}"]
    lines += f.labelled(
        t, "extracted", "action", "booking_code", "validation", "asked", "reply",
        "tool_result", "handoff", reply="reply_key",
    )  # fmt: skip
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


JOURNAL = JournalExplainer(
    events={"trial.decided": _decided},
    labels={
        "extracted": ("extraído", "extracted"),
        "action": ("ação", "action"),
        "validation": ("validação", "validation"),
        "reply_key": ("texto", "text"),
        "asked": ("pergunta", "asks"),
        "booking_code": ("código", "code"),
        "attempts": ("tentativas", "attempts"),
        "gate": ("tool gate", "tool gate"),
        "injected": ("injetado", "injected"),
        "defaults": ("padrões", "defaults"),
        "tool_result": ("resultado da tool", "tool result"),
    },
)
