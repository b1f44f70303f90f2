"""How the merger's journal events read (``orquestra explain``): which parts made the reply."""

from __future__ import annotations

from collections.abc import Mapping

from shared.explain import Fields, JournalExplainer, listing, short


def _merge(f: Fields, t: Mapping[str, str]) -> list[str]:
    lines = [f"{t['sources']}: {listing(f.get('sources'), t)}"]
    for key in ("missing", "dropped"):
        if f.has(key):
            lines.append(f"{t[key]}: {listing(f.get(key), t)}")
    if f.has("bubbles"):
        lines.append(f"{t['bubbles']}: {short(f.get('bubbles'))}")
    return lines


JOURNAL = JournalExplainer(
    events={"merge.complete": _merge, "merge.partial": _merge},
    labels={
        "pt": {"sources": "partes", "missing": "faltaram", "dropped": "descartadas"},
        "en": {"sources": "parts", "missing": "missing", "dropped": "dropped"},
    },
)
