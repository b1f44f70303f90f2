"""How the merger's journal events read (``orquestra explain``): which parts made the reply."""

from __future__ import annotations

from collections.abc import Mapping

from shared.explain import Fields, JournalExplainer, listing


def _merge(f: Fields, t: Mapping[str, str]) -> list[str]:
    lines = [f"{t['sources']}: {listing(f.get('sources'), t)}"]
    for key in ("missing", "dropped"):
        if f.has(key):
            lines.append(f"{t[key]}: {listing(f.get(key), t)}")
    return lines + f.labelled(t, "bubbles")


JOURNAL = JournalExplainer(
    events={"merge.complete": _merge, "merge.partial": _merge},
    labels={
        "sources": ("partes", "parts"),
        "missing": ("faltaram", "missing"),
        "dropped": ("descartadas", "dropped"),
    },
)
