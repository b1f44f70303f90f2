"""How enrollment's journal events read (``orquestra explain``): what the message was read as,
the step, the request made."""

from __future__ import annotations

from collections.abc import Mapping

from shared.explain import Fields, JournalExplainer, short


def _decided(f: Fields, t: Mapping[str, str]) -> list[str]:
    before = f.get("from")
    stage = f"{short(before)} → {short(f.get('stage') or '?')}" if before else short(f.get("stage"))
    lines = [f"{t['stage']}: {stage}"]
    lines += f.labelled(t, "reading", "answer", "request_id", "summary", "refused", "violation")
    if f.get("reask"):
        lines.append(t["reask"])
    return lines


JOURNAL = JournalExplainer(
    events={"enrollment.decided": _decided},
    labels={
        "reading": ("entendido", "read as"),
        "answer": ("resposta à confirmação", "answer to the confirmation"),
        "request_id": ("pedido", "request"),
        "summary": ("resumo para a equipe", "summary for staff"),
        "refused": ("recusado", "refused"),
        "reask": ("pergunta repetida", "question asked again"),
    },
)
