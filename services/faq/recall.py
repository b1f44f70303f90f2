"""FAQ recall on dialogs written by others: of the questions people asked, how many got an
answer from the knowledge base and how many an honest "não tenho essa informação".

``eval faq`` measures the FAQ on questions its own authors labelled, one at a time. This reads
a file of dialogs in the development set's format (``name``, ``start``, ``steps`` of ``user`` or
``burst`` with ``after`` and ``expect``) at run time, keeps the messages that ask something,
and asks the FAQ each of them in order, carrying the conversation's topic from one to the
next as the service does (so "e no sábado?" is measured as a follow-up). A step whose expected
reply accepts the pack's own "não sei" texts is one the writer meant the FAQ not to know:
answering it counts as a false answer, not as recall. Nothing of the file is kept.

    uv run python -m services.faq.recall ../shared/dialogs/03-questions-context.json [-v]
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from services.faq.core import retrieve
from services.faq.topic import FaqState, current_topic, current_unknown, remember
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.nlu.normalize import strip_accents
from shared.pack import Pack, load_pack

_AFTER = re.compile(r"^(\d+)\s*(s|m|h|d)$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_INTERROGATIVES = frozenset(
    [
        "onde",
        "qual",
        "quais",
        "quanto",
        "quantos",
        "quantas",
        "quando",
        "como",
        "oq",
        "qto",
        "qnto",
        "qnt",
        "qd",
        "qdo",
        "qnd",
    ]
)


@dataclass(frozen=True)
class Asked:
    """One question message and what the FAQ made of it."""

    dialog: str
    text: str
    entry_ids: list[str]
    # None: the step expects no particular reply (left out of recall and false answers).
    expects_unknown: bool | None

    @property
    def answered(self) -> bool:
        return bool(self.entry_ids)


def _after(value: str | None) -> timedelta:
    match = _AFTER.match((value or "0s").strip())
    if not match:
        raise ValueError(f"unreadable 'after': {value!r}")
    return timedelta(**{_UNITS[match[2]]: int(match[1])})


def _folded(text: str) -> str:
    return strip_accents(text.casefold())


def _unknown_texts(pack: Pack, config: FaqConfig) -> list[str]:
    value = pack.sections.get("texts", {}).get(config.unknown_text_key, [])
    return [_folded(t) for t in ([value] if isinstance(value, str) else value)]


def _expects_unknown(expect: dict[str, Any], unknown: list[str]) -> bool | None:
    """Whether the expected reply accepts the pack's "não sei" in every wording it has (one
    wording alone may happen to hold an expected word: "com certeza"); None when the step
    expects no particular reply."""
    patterns = expect.get("reply") or []
    if not patterns:
        return None
    return all(all(re.search(_folded(p), text) for p in patterns) for text in unknown)


def _asks(text: str) -> bool:
    """A question as a reader sees one: a "?" or an interrogative first ("onde fica"). The
    FAQ's own question words are looser on purpose ("pode", "tem" start a question there, and
    "pode confirmar" would count)."""
    folded = _folded(text)
    return "?" in folded or any(
        line.split()[:1] and line.split()[0] in _INTERROGATIVES for line in folded.splitlines()
    )


def measure(dialogs_path: str | Path, pack_name: str = "ctsmash") -> list[Asked]:
    """Every question message of the file, asked of the pack's FAQ in conversation order."""
    pack = load_pack(pack_name)
    config = pack.section("faq", FaqConfig)
    index = FaqIndex(config)
    unknown_texts = _unknown_texts(pack, config)
    dialogs = json.loads(Path(dialogs_path).read_text(encoding="utf-8"))
    asked: list[Asked] = []
    for dialog in dialogs:
        now = datetime.fromisoformat(dialog["start"])
        state: FaqState | None = None
        for step in dialog["steps"]:
            now += _after(step.get("after"))
            text = step.get("user") or "\n".join(step.get("burst") or [])
            if not _asks(text):
                continue
            topic = current_topic(state, now, config.follow_up)
            unknown = current_unknown(state, now, config.follow_up)
            retrieval = retrieve(
                text, index=index, topic=topic, message=text, now=now, unknown=unknown
            )
            state = remember(state, retrieval.answered, now, retrieval.unanswered)
            asked.append(
                Asked(
                    dialog=dialog["name"],
                    text=text,
                    entry_ids=retrieval.entry_ids,
                    expects_unknown=_expects_unknown(step.get("expect", {}), unknown_texts),
                )
            )
    return asked


def report(asked: list[Asked], *, verbose: bool = False) -> str:
    """Counts, recall on the questions meant to be known, false answers on the others."""
    meant = [a for a in asked if a.expects_unknown is False]
    unknowable = [a for a in asked if a.expects_unknown is True]
    answered = sum(a.answered for a in meant)
    false = sum(a.answered for a in unknowable)
    rows = [
        ("question messages", str(len(asked))),
        ("answered from the FAQ", str(sum(a.answered for a in asked))),
        ("'não tenho essa informação'", str(sum(not a.answered for a in asked))),
        ("meant to be known", str(len(meant))),
        ("recall (answered / meant to be known)", f"{answered / max(len(meant), 1):.3f}"),
        ("meant to be unknown", str(len(unknowable))),
        ("false answers (answered / unknown)", f"{false / max(len(unknowable), 1):.3f}"),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value:>6}" for name, value in rows]
    if verbose:
        for a in asked:
            mark = "    " if a.expects_unknown is None else "ok  "
            if a.expects_unknown is not None and a.answered == a.expects_unknown:
                mark = "MISS"
            lines.append(f"{mark} {a.dialog} :: {a.text!r} -> {a.entry_ids or 'não sei'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="FAQ recall on a file of dialogs.")
    parser.add_argument("dialogs", help="a JSON file of dialogs (development set format)")
    parser.add_argument("--pack", default="ctsmash", help="pack name or folder")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every question")
    args = parser.parse_args(argv)
    print(report(measure(args.dialogs, args.pack), verbose=args.verbose))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
