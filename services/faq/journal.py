"""How the FAQ's journal events read (``orquestra explain``): the entries it answered from."""

from __future__ import annotations

from collections.abc import Mapping

from shared.explain import Fields, JournalExplainer, listing, short


def _answered(f: Fields, t: Mapping[str, str]) -> list[str]:
    line = f"{t['entries']}: {listing(f.get('entry_ids'), t)}"
    if f.has("source"):
        line += f" ({t['source']}: {short(f.get('source'))})"
    lines = [line]
    if f.has("unanswered"):
        lines.append(f"{t['unanswered']}: {listing(f.get('unanswered'), t)}")
    lines += f.labelled(t, "scores")
    if f.has("topic"):
        lines.append(f"{t['topic']}: {short(f.get('topic'))}")
    if f.has("inherited"):
        lines.append(f"{t['inherited']}: {listing(f.get('inherited'), t)}")
    if f.has("ages"):
        lines.append(f"{t['ages']}: {listing(f.get('ages'), t)}")
    if f.get("oferta_pointer"):
        lines.append(t["oferta_pointer"])
    return lines


JOURNAL = JournalExplainer(
    events={"faq.answered": _answered},
    labels={
        "entries": ("respostas da base", "knowledge-base answers"),
        "unanswered": ("sem resposta", "unanswered"),
        "scores": ("pontuação", "scores"),
        "oferta_pointer": ("convite para a oferta", "pointer to the offer"),
        "topic": ("assunto da conversa", "conversation topic"),
        "inherited": ("continuação do assunto", "follow-ups of the topic"),
        "ages": ("idades perguntadas", "ages asked about"),
    },
)
