"""How the gateway's journal events read (``orquestra explain``): a turn's start, a delivery."""

from __future__ import annotations

from collections.abc import Mapping

from shared.explain import Fields, JournalExplainer, short


def _turn_started(f: Fields, t: Mapping[str, str]) -> list[str]:
    return [f"{t['business_time']}: {f.get('now')}"] if f.has("now") else []


def _delivered(f: Fields, t: Mapping[str, str]) -> list[str]:
    line = f"{t['delivered']}: {short(f.get('status') or '?')}"
    if f.has("channel"):
        line += f" ({t['channel']}: {short(f.get('channel'))})"
    lines = [line, *f.labelled(t, "detail", "bubbles")]
    if f.get("partial"):
        lines.append(t["partial"])
    return lines


def _answered_before(f: Fields, t: Mapping[str, str]) -> list[str]:
    return [t["answered_before"], *f.labelled(t, "message_ids")]


JOURNAL = JournalExplainer(
    events={
        "turn.started": _turn_started,
        "reply.delivered": _delivered,
        "turn.answered_before": _answered_before,
    },
    labels={
        "business_time": ("hora do negócio", "business time"),
        "delivered": ("entrega", "delivery"),
        "channel": ("canal", "channel"),
        "detail": ("detalhe", "detail"),
        "partial": ("resposta parcial (prazo estourado)", "partial reply (deadline passed)"),
        "answered_before": (
            "mensagens já respondidas (a resposta saiu, a liberação do turno se perdeu): não "
            "respondidas de novo",
            "messages already answered (the reply went out, the turn's release was lost): not "
            "answered again",
        ),
        "message_ids": ("mensagens", "messages"),
    },
)
