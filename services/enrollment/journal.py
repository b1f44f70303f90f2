"""How enrollment's journal events read (``orquestra explain``): what the message was read as,
the step, the request made."""

from __future__ import annotations

from collections.abc import Mapping

from shared.explain import Fields, JournalExplainer, short


def _decided(f: Fields, t: Mapping[str, str]) -> list[str]:
    before = f.get("from")
    stage = f"{short(before)} → {short(f.get('stage') or '?')}" if before else short(f.get("stage"))
    lines = [f"{t['stage']}: {stage}"]
    for key in ("reading", "answer", "request_id", "summary", "refused", "violation"):
        if f.has(key):
            lines.append(f"{t[key]}: {short(f.get(key))}")
    if f.get("reask"):
        lines.append(t["reask"])
    return lines


JOURNAL = JournalExplainer(
    events={"enrollment.decided": _decided},
    labels={
        "pt": {
            "reading": "entendido",
            "answer": "resposta à confirmação",
            "request_id": "pedido",
            "summary": "resumo para a equipe",
            "refused": "recusado",
            "reask": "pergunta repetida",
        },
        "en": {
            "reading": "read as",
            "answer": "answer to the confirmation",
            "request_id": "request",
            "summary": "summary for staff",
            "refused": "refused",
            "reask": "question asked again",
        },
    },
)
