"""Checking a scenario step against what the system did, and reporting it (pure).

The runner (``scenario_run``) sends the messages and collects an ``Observation``: the replies,
the conversation's state slices and the journal entries of the step's turns. ``check_step``
compares it with the step's ``Expect`` and returns every mismatch, each carrying what was
expected and what was found, so a failure reads as a diff. ``render_result`` prints a whole
scenario and ``junit_xml`` writes the results for CI.

Value matchers for ``state`` and journal fields:

- a scalar, list or mapping: equal (a mapping only needs the keys it names, recursively);
- ``null``: absent or null;
- ``{match: REGEX}``: the value as text matches (case- and accent-insensitive);
- ``{contains: X}`` / ``{contains: [X, Y]}``: a list holding those items (or a text holding X);
- ``{one_of: [A, B]}``: equal to one of them;
- ``{exists: true|false}``: present and not null, or not;
- ``{not: V}``: does not match ``V``.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from orquestra.scenario_schema import Expect, Scenario
from orquestra.style import Style

OPERATORS = frozenset({"match", "contains", "one_of", "exists", "not"})


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


def fold(text: str) -> str:
    """Text without accents, for accent-insensitive matching ("não" ~ "nao")."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def text_matches(pattern: str, text: str) -> bool:
    """A regex search ignoring case and accents on both sides."""
    return re.search(fold(pattern), fold(text), re.IGNORECASE | re.DOTALL) is not None


def resolve_path(data: Any, path: str) -> Any:
    """``trial.stage`` → ``data["trial"]["stage"]``; a number indexes a list; MISSING if absent."""
    current = data
    for part in path.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and re.fullmatch(r"-?\d+", part):
            index = int(part)
            if not -len(current) <= index < len(current):
                return MISSING
            current = current[index]
        else:
            return MISSING
    return current


def is_operator(expected: Any) -> bool:
    return isinstance(expected, Mapping) and bool(expected) and set(expected) <= OPERATORS


def value_matches(expected: Any, actual: Any) -> bool:
    """Whether ``actual`` satisfies ``expected`` (matchers in the module docstring)."""
    if is_operator(expected):
        return all(_operator(op, arg, actual) for op, arg in expected.items())
    if expected is None:
        return actual is None or actual is MISSING
    if actual is MISSING:
        return False
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(
            value_matches(v, actual.get(k, MISSING)) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(value_matches(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual
    if isinstance(expected, str) and isinstance(actual, str):
        return expected == actual
    # A YAML date/number given for a string slot ("2026-02-10", 27) compares as text.
    return str(expected) == str(actual)


def _operator(op: str, arg: Any, actual: Any) -> bool:
    present = actual is not MISSING and actual is not None
    if op == "exists":
        return present == bool(arg)
    if op == "not":
        return not value_matches(arg, actual)
    if op == "one_of":
        return any(value_matches(option, actual) for option in _items(arg))
    if not present:
        return False
    if op == "match":
        text = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
        return text_matches(str(arg), text)
    if isinstance(actual, str):
        return all(text_matches(re.escape(str(item)), actual) for item in _items(arg))
    if isinstance(actual, list):
        return all(any(value_matches(item, a) for a in actual) for item in _items(arg))
    return False


def _items(arg: Any) -> list[Any]:
    return list(arg) if isinstance(arg, list) else [arg]


def _missing_or_str(value: Any) -> str:
    return "<missing>" if value is MISSING else str(value)


def show(value: Any) -> str:
    """A value as a diff shows it: JSON, indented when it spans several lines."""
    if value is MISSING:
        return "<missing>"
    text = json.dumps(value, ensure_ascii=False, default=_missing_or_str, sort_keys=True)
    if len(text) <= 80:
        return text
    return json.dumps(value, ensure_ascii=False, default=_missing_or_str, indent=2, sort_keys=True)


def project(actual: Any, expected: Any) -> Any:
    """The part of ``actual`` an expected mapping talks about (the rest would be noise)."""
    if isinstance(expected, Mapping) and not is_operator(expected) and isinstance(actual, Mapping):
        return {k: project(actual.get(k, MISSING), v) for k, v in expected.items()}
    return actual


@dataclass(frozen=True)
class Mismatch:
    """One expectation that did not hold."""

    kind: str  # reply, reply_not, state, intents, journal, journal_not
    subject: str  # the pattern, state path or event
    expected: str
    actual: str


@dataclass(frozen=True)
class Observation:
    """What the system did for one step."""

    replies: list[str]
    state: Mapping[str, Any]
    entries: list[Mapping[str, Any]]

    @property
    def reply_text(self) -> str:
        return "\n\n".join(self.replies)


def entry_summary(entry: Mapping[str, Any]) -> str:
    """An entry on one line: its event and fields, for the "found" side of a journal diff."""
    fields = {k: v for k, v in entry.items() if k not in ("at", "service", "turn_id", "event")}
    body = json.dumps(fields, ensure_ascii=False, default=str, sort_keys=True)
    body = body if len(body) <= 160 else body[:159] + "…"
    return f"{entry.get('event')} {body}"


def _entry_matches(expected: str | Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    if isinstance(expected, str):
        return entry.get("event") == expected
    return all(
        value_matches(value, entry.get("event") if key == "event" else resolve_path(entry, key))
        for key, value in expected.items()
    )


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=_missing_or_str)


def _label(expected: str | Mapping[str, Any]) -> str:
    """``event {"path": value, ...}`` on one line."""
    if isinstance(expected, str):
        return expected
    fields = {k: v for k, v in expected.items() if k != "event"}
    return f"{expected['event']} {_compact(fields)}" if fields else str(expected["event"])


def _journal_found(expected: str | Mapping[str, Any], entries: list[Mapping[str, Any]]) -> str:
    """What the turn's journal has instead: the same event's values at the expected paths,
    then every event of the turn."""
    name = expected if isinstance(expected, str) else expected["event"]
    paths = [] if isinstance(expected, str) else [k for k in expected if k != "event"]
    lines = [
        f"{name} {_compact({p: resolve_path(e, p) for p in paths})}"
        for e in entries
        if e.get("event") == name and paths
    ]
    if not any(e.get("event") == name for e in entries):
        lines.append(f"no {name}")
    events = ", ".join(str(e.get("event")) for e in entries) or "none"
    return "\n".join([*lines, f"(events of this turn: {events})"])


def check_step(expect: Expect, seen: Observation) -> list[Mismatch]:
    """Every expectation of ``expect`` that ``seen`` does not satisfy, in the file's order."""
    found: list[Mismatch] = []
    reply = seen.reply_text
    for pattern in expect.reply:
        if not text_matches(pattern, reply):
            found.append(Mismatch("reply", pattern, f"/{pattern}/", reply or "<no reply>"))
    for pattern in expect.reply_not:
        if text_matches(pattern, reply):
            found.append(Mismatch("reply_not", pattern, f"not /{pattern}/", reply))
    for path, expected in expect.state.items():
        actual = resolve_path(seen.state, path)
        if not value_matches(expected, actual):
            found.append(Mismatch("state", path, show(expected), show(project(actual, expected))))
    if expect.intents is not None:
        actual = resolve_path(seen.state, "triage.last_intents")
        if not isinstance(actual, list) or sorted(map(str, actual)) != sorted(expect.intents):
            found.append(
                Mismatch("intents", "triage.last_intents", show(expect.intents), show(actual))
            )
    for wanted in expect.journal:
        if not any(_entry_matches(wanted, entry) for entry in seen.entries):
            label = _label(wanted)
            found.append(Mismatch("journal", label, label, _journal_found(wanted, seen.entries)))
    for unwanted in expect.journal_not:
        hits = [entry_summary(e) for e in seen.entries if _entry_matches(unwanted, e)]
        if hits:
            label = _label(unwanted)
            found.append(Mismatch("journal_not", label, f"no {label}", "\n".join(hits)))
    return found


@dataclass
class StepResult:
    index: int
    messages: list[str]
    replies: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    error: str | None = None
    # The turn each reply answered, and the conversation's state once the step was checked.
    reply_turns: list[str] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not self.mismatches and self.error is None


@dataclass
class ScenarioResult:
    source: str
    scenario: Scenario
    conversation_id: str
    steps: list[StepResult] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and all(s.passed for s in self.steps)

    @property
    def failed_step(self) -> StepResult | None:
        return next((s for s in self.steps if not s.passed), None)


KIND_TITLES = {
    "reply": "reply should match",
    "reply_not": "reply should not match",
    "state": "state",
    "intents": "intents (triage.last_intents, any order)",
    "journal": "journal should have",
    "journal_not": "journal should not have",
}


def render_mismatch(m: Mismatch, style: Style) -> list[str]:
    """A mismatch as ``- expected`` / ``+ actual`` lines (a line diff for multi-line values)."""
    title = KIND_TITLES.get(m.kind, m.kind)
    lines = [f"{title} {m.subject}:" if m.kind == "state" else f"{title}:"]
    if m.kind in ("reply", "reply_not", "journal", "journal_not"):
        lines.append(style.red(f"- expected: {m.expected}"))
        found = m.actual.splitlines() or [""]
        lines.append(style.green(f"+ found:    {found[0]}"))
        lines += [style.green(f"            {line}") for line in found[1:]]
        return lines
    expected, actual = m.expected.splitlines(), m.actual.splitlines()
    if len(expected) == 1 and len(actual) == 1:
        lines.append(style.red(f"- expected: {m.expected}"))
        lines.append(style.green(f"+ actual:   {m.actual}"))
        return lines
    for line in difflib.unified_diff(expected, actual, "expected", "actual", lineterm="", n=2):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            line = style.red(line)
        elif line.startswith("+"):
            line = style.green(line)
        lines.append(line)
    return lines


def render_result(result: ScenarioResult, style: Style) -> list[str]:
    """One scenario: a pass line, or the failing step with its messages, reply and diffs."""
    scenario = result.scenario
    took = f"{result.seconds:.1f}s"
    if result.passed:
        steps = len(scenario.steps)
        return [f"  {style.green('✓')} {scenario.name} {style.dim(f'({steps} steps, {took})')}"]
    lines = [f"  {style.red('✗')} {style.bold(scenario.name)} {style.dim(f'({took})')}"]
    lines.append(f"      conversation: {result.conversation_id}")
    if result.error:
        lines.append(f"      {style.red(result.error)}")
    step = result.failed_step
    if step is None:
        return lines
    note = scenario.steps[step.index].note
    said = " / ".join(f'"{m}"' for m in step.messages)
    lines.append(f"      step {step.index + 1} › {said}" + (f"  ({note})" if note else ""))
    if step.error:
        lines.append(f"        {style.red(step.error)}")
    for mismatch in step.mismatches:
        lines += [f"        {line}" for line in render_mismatch(mismatch, style)]
    remaining = len(scenario.steps) - step.index - 1
    if remaining:
        lines.append(style.dim(f"      ({remaining} later step(s) not run)"))
    return lines


def failure_text(result: ScenarioResult) -> str:
    """The plain-text failure report of one scenario (for JUnit)."""
    return "\n".join(line.strip("\n") for line in render_result(result, Style(False))[1:])


def summary_line(results: Sequence[ScenarioResult], errors: int, seconds: float) -> str:
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    parts = [f"{passed} passed"]
    if failed:
        parts.append(f"{failed} failed")
    if errors:
        parts.append(f"{errors} invalid file(s)")
    return f"{', '.join(parts)} in {seconds:.1f}s"


def junit_xml(
    results: Sequence[ScenarioResult], invalid: Sequence[tuple[str, str]], seconds: float
) -> str:
    """JUnit XML: one testcase per scenario (classname = its file), one error per bad file."""
    suite = ET.Element(
        "testsuite",
        name="orquestra scenarios",
        tests=str(len(results) + len(invalid)),
        failures=str(sum(not r.passed and r.error is None for r in results)),
        errors=str(len(invalid) + sum(r.error is not None for r in results)),
        time=f"{seconds:.3f}",
    )
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=result.source,
            name=result.scenario.name,
            time=f"{result.seconds:.3f}",
        )
        if result.passed:
            continue
        step = result.failed_step
        if result.error is not None:
            tag, message = "error", result.error
        elif step is not None and step.error is not None:
            tag, message = "failure", f"step {step.index + 1}: {step.error}"
        else:
            kinds = ", ".join(sorted({m.kind for m in step.mismatches})) if step else ""
            tag, message = "failure", f"step {step.index + 1 if step else '?'}: {kinds}"
        element = ET.SubElement(case, tag, message=message)
        element.text = failure_text(result)
    for source, error in invalid:
        case = ET.SubElement(suite, "testcase", classname=source, name="(file)", time="0")
        ET.SubElement(case, "error", message="invalid scenario file").text = error
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode")
