"""How one reply is composed from a turn's parts. Pure: no I/O, no clock.

Policy, in order:
1. triage's inline parts (general reply, clarification) first;
2. then each expected specialist in the pack's configured order — a specialist that did not
   answer before the deadline is replaced by its fallback line — answers before questions: a
   part that asks (the booking's next step) comes after the parts that answer, so the reply
   ends on the one thing the person has to do next; an "I don't know" about something that
   was no question (``data.unknown_only``) is left out when another specialist answered;
3. then mode_router's micro-confirmation, dropped when another part already asks a question
   (one question per message);
4. a greeting repeated by a later part is removed (one "Olá!" per reply);
5. the text is split into bubbles within the channel's size limit, at paragraph, then sentence,
   then word boundaries.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel

from shared.contracts import Part, TurnPlan
from shared.nlu.normalize import normalize

TRIAGE = "triage"
MODE_ROUTER = "mode_router"


class MergerConfig(BaseModel):
    order: list[str] = [TRIAGE, "trial", "faq", MODE_ROUTER]
    max_bubble_chars: int = 4096
    fallback_text_key: str = "fallback_missing_part"
    greetings: list[str] = ["oi", "ola", "bom dia", "boa tarde", "boa noite", "e ai", "opa"]


@dataclass
class Composition:
    text: str
    bubbles: list[str]
    sources: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


_SENTENCE = re.compile(r"(?<=[.!?…])\s+")


def _greeting_prefix(text: str, greetings: list[str]) -> str | None:
    """The leading greeting sentence of ``text`` ("Olá!", "Oi, tudo bem?"), if any."""
    first = _SENTENCE.split(text.strip(), maxsplit=1)[0]
    words = normalize(first).split()
    for greeting in greetings:
        g = greeting.split()
        if words[: len(g)] == g and len(words) <= len(g) + 3:
            return first
    return None


def _strip_repeated_greetings(texts: list[str], greetings: list[str]) -> list[str]:
    out: list[str] = []
    greeted = False
    for text in texts:
        prefix = _greeting_prefix(text, greetings)
        if prefix and greeted:
            text = text.strip()[len(prefix) :].strip()
        greeted = greeted or prefix is not None
        if text:
            out.append(text)
    return out


def split_bubbles(text: str, limit: int) -> list[str]:
    """Split at paragraphs, then sentences, then words, so no bubble exceeds ``limit``."""
    bubbles: list[str] = []
    current = ""
    for piece in _pieces(text, limit):
        joined = f"{current}\n\n{piece}" if current else piece
        if len(joined) <= limit:
            current = joined
        else:
            bubbles.append(current)
            current = piece
    if current:
        bubbles.append(current)
    return bubbles


def _pieces(text: str, limit: int) -> list[str]:
    pieces: list[str] = []
    for paragraph in [p.strip() for p in text.split("\n\n") if p.strip()]:
        if len(paragraph) <= limit:
            pieces.append(paragraph)
            continue
        line = ""
        for word in " ".join(_SENTENCE.split(paragraph)).split(" "):
            while len(word) > limit:
                if line:
                    pieces.append(line)
                    line = ""
                pieces.append(word[:limit])
                word = word[limit:]
            candidate = f"{line} {word}" if line else word
            if len(candidate) <= limit:
                line = candidate
            else:
                pieces.append(line)
                line = word
        if line:
            pieces.append(line)
    return pieces


def compose(
    plan: TurnPlan | None,
    parts: dict[str, Part],
    config: MergerConfig,
    fallback: Callable[[str], str],
) -> Composition:
    """One reply from what arrived. ``fallback(source)`` gives the line for a missing part."""
    texts: list[str] = []
    sources: list[str] = []
    missing: list[str] = []
    dropped: list[str] = []
    asks_question = False

    inline = plan.parts if plan else []
    for said in inline:
        if said.text:
            texts.append(said.text)
            sources.append(said.source)
            asks_question = asks_question or said.asks_question

    expected = list(plan.expected) if plan else []
    if plan is None:
        missing.append(TRIAGE)
        texts.append(fallback(TRIAGE))
    specialists = [s for s in config.order if s not in (TRIAGE, MODE_ROUTER)]
    specialists += [s for s in expected if s not in specialists and s != MODE_ROUTER]
    answers: list[tuple[str, str]] = []
    questions: list[tuple[str, str]] = []
    arrived = [s for s in specialists if s in expected and s in parts]
    for source in specialists:
        if source not in expected:
            continue
        part = parts.get(source)
        if part is None:
            missing.append(source)
            answers.append(("", fallback(source)))
            continue
        if not part.text:
            continue
        others = [s for s in arrived if s != source and parts[s].text]
        if part.data.get("unknown_only") and others:
            dropped.append(source)
            continue
        (questions if part.asks_question else answers).append((source, part.text))
        asks_question = asks_question or part.asks_question
    for source, text in [*answers, *questions]:
        texts.append(text)
        if source:
            sources.append(source)

    router = parts.get(MODE_ROUTER)
    if router is not None and router.text:
        if asks_question and router.asks_question:
            dropped.append(MODE_ROUTER)
        else:
            texts.append(router.text)
            sources.append(MODE_ROUTER)

    texts = _strip_repeated_greetings(texts, config.greetings)
    text = "\n\n".join(texts)
    return Composition(
        text=text,
        bubbles=split_bubbles(text, config.max_bubble_chars),
        sources=sources,
        missing=missing,
        dropped=dropped,
    )
