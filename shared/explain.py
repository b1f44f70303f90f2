"""How a journal entry explains itself (pure).

Every service journals its decisions as ``{"at", "service", "turn_id", "event", ...fields}``
(``shared/state.py: journal_entry``). The service that writes an event also says how to read
it: its package's ``journal.py`` exports a :class:`JournalExplainer` (its events' explainers and
the labels they use, in Portuguese and English), named by its spec's ``journal``. ``orquestra
explain`` and the chat's ``/why`` look each event up there; an event nobody explains is shown
field by field, so the timeline never breaks when a service journals something new.

This module holds what every explainer shares: the field reader, the value formatting, and the
explainer of the events ``shared/`` itself writes (the LLM calls of any service).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Lang = Literal["pt", "en"]
LANGS: tuple[Lang, ...] = ("pt", "en")

# Fields every entry has (and the trace id, with tracing on); never repeated in a step's details.
ENVELOPE = ("at", "service", "turn_id", "event", "trace_id")
MAX_VALUE_CHARS = 160


def short(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """A field value on one line: strings as they are, the rest as compact JSON."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return "" if value is None else str(value)


def listing(values: Any, labels: Mapping[str, str]) -> str:
    if not values:
        return labels["none"]
    if isinstance(values, list | tuple):
        return ", ".join(short(v) for v in values)
    return short(values)


class Fields:
    """An entry's fields, remembering which ones an explainer already said."""

    def __init__(self, entry: Mapping[str, Any]) -> None:
        self.data = {k: v for k, v in entry.items() if k not in ENVELOPE}
        self.used: set[str] = set()

    def get(self, key: str) -> Any:
        self.used.add(key)
        return self.data.get(key)

    def has(self, key: str) -> bool:
        return self.data.get(key) not in (None, "", [], {})

    def rest(self) -> dict[str, Any]:
        return {k: v for k, v in self.data.items() if k not in self.used}

    def labelled(self, t: Mapping[str, str], *keys: str, **labels: str) -> list[str]:
        """``label: value`` for each of ``keys`` the entry has, in order; a key is its own
        label unless ``labels`` names another (``reply="reply_key"``)."""
        return [
            f"{t[labels.get(key, key)]}: {short(self.get(key))}" for key in keys if self.has(key)
        ]


# An event's explanation: its fields and the labels of the reader's language → lines.
Explainer = Callable[[Fields, Mapping[str, str]], list[str]]


@dataclass(frozen=True)
class JournalExplainer:
    """The events a service journals, each with how it reads, and the labels they use: each
    label's words in Portuguese and in English, side by side."""

    events: Mapping[str, Explainer]
    labels: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def words(self, lang: Lang) -> dict[str, str]:
        index = LANGS.index(lang)
        return {key: pair[index] for key, pair in self.labels.items()}


def _llm(f: Fields, t: Mapping[str, str]) -> list[str]:
    line = f"{t['purpose']}: {short(f.get('purpose') or '?')}"
    if f.has("kind"):
        line += f" ({t['kind']}: {short(f.get('kind'))})"
    return [line]


# Written by ``shared/service.py: ask_llm`` for whichever service asked.
SHARED = JournalExplainer(
    events={"llm.used": _llm, "llm.fallback": _llm},
    # Also the words more than one service's explainer uses.
    labels={
        "purpose": ("uso", "purpose"),
        "kind": ("falha", "failure"),
        "source": ("fonte", "source"),
        "reason": ("motivo", "reason"),
        "stage": ("etapa", "stage"),
        "bubbles": ("balões", "bubbles"),
        "handoff": ("transferência para humano", "handoff to a person"),
        "violation": ("violação", "violation"),
        "none": ("nenhuma", "none"),
        "yes": ("sim", "yes"),
        "no": ("não", "no"),
    },
)
