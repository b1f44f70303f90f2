"""The figures of the dialog evaluation, computed from finished runs (pure).

``orquestra eval dialogs`` runs every step of every dialog (``scenario_run`` with
``keep_going``) and hands each result here with the conversation's journal. Per dialog:

- goal reached: every expectation held, at every step (the final state — booked with the
  right student, date and time, or cancelled, or not booked — and every question answered);
- turns to book: the customer's turns (steps) until the trial stage first read ``booked``;
- loops: the bot asking the same question three times or more in a row (the trial's ``asked``
  field in ``trial.decided``, or triage's clarification menu, in consecutive turns), or
  sending the very same reply three times or more; a repeated reply inside such a run is the
  same loop, not a second one;
- questions left unanswered: ``reply`` expectations that did not hold. In the corpus a
  ``reply`` pattern is something the customer must be told: the answer to each question
  they asked, or a rule they must hear (the minimum age, the guardian's authorization).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from orquestra.scenario_check import ScenarioResult, fold, resolve_path

LOOP_LENGTH = 3
BOOKED_STAGE = "booked"
# Triage's clarification steps that put a question to the person, by the question they ask.
CLARIFICATION_QUESTIONS = {
    "n1_menu": "menu",
    "n1_invalid": "menu",
    "n2_confirm": "intent",
    "n2_confirm_again": "intent",
}


@dataclass(frozen=True)
class Unanswered:
    """A ``reply`` expectation that did not hold: the step, the pattern and what was said."""

    step: int
    said: str
    pattern: str
    reply: str


@dataclass(frozen=True)
class DialogFigures:
    """One dialog's outcome."""

    source: str
    name: str
    persona: str | None
    goal: str | None
    conversation_id: str
    steps: int
    reached: bool
    booked: bool
    turns_to_book: int | None
    loops: list[str]
    questions: int
    unanswered: list[Unanswered]
    # State expectations that did not hold and errors (no reply, API failure), one line each.
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Totals:
    """The corpus's figures."""

    dialogs: int
    reached: int
    reached_pct: float
    booking_dialogs: int
    booked_right: int
    turns_to_book_median: float | None
    turns_to_book_max: int | None
    loops: int
    dialogs_with_loops: int
    questions: int
    unanswered: int


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", fold(text).lower()).strip()


def turn_questions(entries: Sequence[Mapping[str, Any]]) -> list[tuple[str, str | None]]:
    """The question each turn ended on, as (turn id, key), in the journal's order.

    The key is the trial's ``asked`` field when the trial decided the turn (None: it asked
    nothing), else triage's clarification (``menu`` for the option menu and its retry,
    ``intent`` for "did you mean…?"; None for an answered clarification). Turns neither
    service asked in are left out: they do not break a run.
    """
    order: list[str] = []
    trial: dict[str, str | None] = {}
    triage: dict[str, str | None] = {}
    for entry in entries:
        turn = str(entry.get("turn_id"))
        if turn not in order:
            order.append(turn)
        if entry.get("event") == "trial.decided":
            asked = entry.get("asked")
            trial[turn] = str(asked) if asked is not None else None
        elif entry.get("event") == "triage.decided" and entry.get("clarification"):
            triage[turn] = CLARIFICATION_QUESTIONS.get(str(entry["clarification"]))
    questions: list[tuple[str, str | None]] = []
    for turn in order:
        if turn in trial:
            questions.append((turn, trial[turn]))
        elif turn in triage:
            questions.append((turn, triage[turn]))
    return questions


def asked_loops(entries: Sequence[Mapping[str, Any]]) -> list[tuple[str, set[str]]]:
    """Runs of the same question in consecutive turns (``turn_questions``).

    Returns each run of ``LOOP_LENGTH`` or more as (label, the turns it spans).
    """
    runs: list[tuple[str, set[str]]] = []
    current: str | None = None
    turns: list[str] = []

    def close() -> None:
        if current is not None and len(turns) >= LOOP_LENGTH:
            runs.append((f"asked {current} {len(turns)}x", set(turns)))

    for turn, asked in turn_questions(entries):
        if asked is not None and asked == current:
            turns.append(turn)
            continue
        close()
        current = asked
        turns = [turn] if asked is not None else []
    close()
    return runs


def repeated_replies(
    replies: Iterable[tuple[str, str]], covered: set[str]
) -> list[tuple[str, int]]:
    """Reply texts sent ``LOOP_LENGTH`` times or more, as (text, count).

    ``replies`` are (turn id, text); a text all of whose turns are in ``covered`` (an asked
    loop already counted) is left out.
    """
    counts: Counter[str] = Counter()
    turns: dict[str, set[str]] = {}
    first: dict[str, str] = {}
    for turn, text in replies:
        key = _norm(text)
        if not key:
            continue
        counts[key] += 1
        turns.setdefault(key, set()).add(turn)
        first.setdefault(key, text)
    return [
        (first[key], count)
        for key, count in counts.items()
        if count >= LOOP_LENGTH and not turns[key] <= covered
    ]


def loops_of(result: ScenarioResult, entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every loop of a dialog, labelled (see the module docstring)."""
    runs = asked_loops(entries)
    covered = set().union(*(turns for _, turns in runs)) if runs else set()
    pairs = [
        (turn, text)
        for step in result.steps
        for turn, text in zip(step.reply_turns, step.replies, strict=False)
    ]
    repeats = repeated_replies(pairs, covered)
    short = [(t if len(t) <= 60 else t[:59] + "…", n) for t, n in repeats]
    return [label for label, _ in runs] + [f'same reply {n}x: "{t}"' for t, n in short]


def _turns_to_book(result: ScenarioResult) -> int | None:
    for step in result.steps:
        if resolve_path(step.state, "trial.stage") == BOOKED_STAGE:
            return step.index + 1
    return None


def figures(result: ScenarioResult, entries: Sequence[Mapping[str, Any]]) -> DialogFigures:
    """One dialog's figures from its run and its conversation's journal."""
    scenario = result.scenario
    unanswered: list[Unanswered] = []
    problems: list[str] = []
    questions = 0
    for step, outcome in zip(scenario.steps, result.steps, strict=False):
        said = " / ".join(outcome.messages)
        reply = "\n".join(outcome.replies) or "<no reply>"
        questions += len(step.expect.reply)
        failed = {m.subject for m in outcome.mismatches if m.kind == "reply"}
        for pattern in step.expect.reply:
            if pattern in failed or outcome.error is not None:
                unanswered.append(Unanswered(outcome.index + 1, said, pattern, reply))
        if outcome.error is not None:
            problems.append(f"step {outcome.index + 1}: {outcome.error}")
        problems += [
            f"step {outcome.index + 1}: {m.kind} {m.subject}: expected {m.expected}, got {m.actual}"
            for m in outcome.mismatches
            if m.kind != "reply"
        ]
    for step in scenario.steps[len(result.steps) :]:
        questions += len(step.expect.reply)
    if result.error is not None:
        problems.append(result.error)
    complete = len(result.steps) == len(scenario.steps)
    turns = _turns_to_book(result)
    return DialogFigures(
        source=result.source,
        name=scenario.name,
        persona=scenario.persona,
        goal=scenario.goal,
        conversation_id=result.conversation_id,
        steps=len(scenario.steps),
        reached=result.passed and complete,
        booked=turns is not None,
        turns_to_book=turns,
        loops=loops_of(result, entries),
        questions=questions,
        unanswered=unanswered,
        problems=problems,
    )


def totals(dialogs: Sequence[DialogFigures]) -> Totals:
    """The corpus's figures; turns to book over the booking dialogs that reached their goal."""
    reached = sum(d.reached for d in dialogs)
    booking = [d for d in dialogs if d.goal == "booked"]
    booked_right = [d for d in booking if d.reached and d.turns_to_book is not None]
    turns = [d.turns_to_book for d in booked_right if d.turns_to_book is not None]
    unanswered_questions = sum(len(d.unanswered) for d in dialogs)
    return Totals(
        dialogs=len(dialogs),
        reached=reached,
        reached_pct=round(100 * reached / len(dialogs), 1) if dialogs else 0.0,
        booking_dialogs=len(booking),
        booked_right=len(booked_right),
        turns_to_book_median=statistics.median(turns) if turns else None,
        turns_to_book_max=max(turns) if turns else None,
        loops=sum(len(d.loops) for d in dialogs),
        dialogs_with_loops=sum(bool(d.loops) for d in dialogs),
        questions=sum(d.questions for d in dialogs),
        unanswered=unanswered_questions,
    )


def dialog_line(d: DialogFigures) -> str:
    """One dialog on one line: outcome, goal, turns to book, loops, unanswered questions."""
    mark = "✓" if d.reached else "✗"
    parts = [f"goal {d.goal or '-'}"]
    if d.turns_to_book is not None:
        parts.append(f"booked at turn {d.turns_to_book}/{d.steps}")
    parts.append(f"loops {len(d.loops)}")
    parts.append(f"unanswered {len(d.unanswered)}/{d.questions}")
    return f"{mark} {d.name} ({', '.join(parts)})"


def detail_lines(d: DialogFigures) -> list[str]:
    """What went wrong in a dialog, indented under its line."""
    lines = [f"    conversation {d.conversation_id}"] if not d.reached else []
    lines += [f"    loop: {loop}" for loop in d.loops]
    for miss in d.unanswered:
        reply = miss.reply.replace("\n", " ")
        reply = reply if len(reply) <= 140 else reply[:139] + "…"
        lines.append(f'    unanswered at step {miss.step} "{miss.said}": /{miss.pattern}/')
        lines.append(f"      reply: {reply}")
    lines += [f"    {problem}" for problem in d.problems]
    return lines


def totals_lines(t: Totals) -> list[str]:
    median = "-" if t.turns_to_book_median is None else f"{t.turns_to_book_median:g}"
    return [
        f"dialogs: {t.dialogs}",
        f"goal reached: {t.reached}/{t.dialogs} ({t.reached_pct:g}%)",
        f"booked as asked: {t.booked_right}/{t.booking_dialogs} booking dialogs"
        f" (turns to book: median {median}, max {t.turns_to_book_max or '-'})",
        f"loops: {t.loops} in {t.dialogs_with_loops} dialog(s)",
        f"questions left unanswered: {t.unanswered}/{t.questions}",
    ]


def as_json(dialogs: Sequence[DialogFigures]) -> dict[str, Any]:
    """The whole report as plain data (``--json``)."""
    return {"totals": asdict(totals(dialogs)), "dialogs": [asdict(d) for d in dialogs]}
