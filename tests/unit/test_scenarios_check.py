"""The scenario runner's judgement: matchers, mismatches, the diff and the JUnit report."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from orquestra.scenario_check import (
    MISSING,
    Mismatch,
    Observation,
    ScenarioResult,
    StepResult,
    check_step,
    junit_xml,
    render_mismatch,
    render_result,
    resolve_path,
    summary_line,
    text_matches,
    value_matches,
)
from orquestra.scenario_schema import Expect, Scenario
from orquestra.style import Style

PLAIN = Style(False)
STATE = {
    "triage": {"last_intents": ["trial", "faq"], "pending": None},
    "trial": {"stage": "ask_date", "idade": 27, "desired_date": "2026-02-10", "attempts": {}},
    "mode": {"mode": "oferta", "pending_transition": None, "_v": 3},
}
ENTRIES = [
    {
        "at": "2026-02-05T13:00:00+00:00",
        "service": "gateway",
        "turn_id": "t1",
        "event": "turn.started",
        "messages": ["oi"],
    },
    {
        "at": "2026-02-05T13:00:00.010+00:00",
        "service": "trial",
        "turn_id": "t1",
        "event": "trial.decided",
        "stage_after": "ask_date",
        "gate": {"outcome": "approved", "injections": [{"arg": "booking_id"}]},
    },
    {
        "at": "2026-02-05T13:00:00.020+00:00",
        "service": "merger",
        "turn_id": "t1",
        "event": "merge.complete",
        "sources": ["trial", "faq"],
        "missing": [],
    },
]
SEEN = Observation(
    replies=["Fechado para terça, 10/02. Qual horário você prefere?"], state=STATE, entries=ENTRIES
)


def expect(**fields: object) -> Expect:
    return Expect.model_validate(fields)


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("nao consegui", "Não consegui entender", True),
        ("NÃO", "nao", True),
        ("qual horario", "Qual horário você prefere?", True),
        (r"\d{2}/\d{2}", "terça, 10/02", True),
        ("^terca$", "terça, 10/02", False),
        ("sabado", "sábado", True),
    ],
)
def test_reply_patterns_ignore_case_and_accents(pattern: str, text: str, found: bool) -> None:
    assert text_matches(pattern, text) is found


def test_paths_reach_into_slices_lists_and_missing_values() -> None:
    assert resolve_path(STATE, "trial.stage") == "ask_date"
    assert resolve_path(STATE, "triage.last_intents.1") == "faq"
    assert resolve_path(STATE, "triage.last_intents.-1") == "faq"
    assert resolve_path(STATE, "triage.pending") is None
    assert resolve_path(STATE, "triage.last_intents.5") is MISSING
    assert resolve_path(STATE, "trial.nope.deeper") is MISSING
    assert resolve_path(ENTRIES[1], "gate.injections.0.arg") == "booking_id"


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        ("ask_date", "ask_date", True),
        ("ask_date", "booked", False),
        (27, 27, True),
        ("27", 27, True),
        (True, 1, False),
        (None, None, True),
        (None, MISSING, True),
        (None, "x", False),
        ("x", MISSING, False),
        (["trial", "faq"], ["trial", "faq"], True),
        (["faq", "trial"], ["trial", "faq"], False),
        ({"mode": "oferta"}, {"mode": "oferta", "_v": 3}, True),
        ({"mode": "discovery"}, {"mode": "oferta"}, False),
        ({"match": "^AE-"}, "AE-7K3Q9P", True),
        ({"match": "^AE-"}, None, False),
        ({"contains": "trial"}, ["trial", "faq"], True),
        ({"contains": ["faq", "trial"]}, ["trial", "faq"], True),
        ({"contains": "handoff"}, ["trial"], False),
        ({"contains": "10/02"}, "terça, 10/02", True),
        ({"one_of": ["ask_date", "booked"]}, "booked", True),
        ({"exists": True}, "x", True),
        ({"exists": True}, None, False),
        ({"exists": False}, MISSING, True),
        ({"not": "booked"}, "ask_date", True),
        ({"not": None}, "x", True),
        ({"match": "trial"}, ["trial"], True),
    ],
)
def test_value_matchers(expected: object, actual: object, ok: bool) -> None:
    assert value_matches(expected, actual) is ok


def test_a_step_that_holds_has_no_mismatch() -> None:
    step = expect(
        reply=["fechado para terca", "qual horario"],
        reply_not="agendado",
        state={"trial.stage": "ask_date", "mode": {"mode": "oferta"}},
        intents=["faq", "trial"],
        journal=[
            "turn.started",
            {"event": "trial.decided", "gate.injections.0.arg": "booking_id"},
            {"event": "merge.complete", "sources": {"contains": "faq"}},
        ],
        journal_not=["faq.answered", {"event": "trial.decided", "stage_after": "booked"}],
    )
    assert check_step(step, SEEN) == []


def test_every_kind_of_mismatch_is_reported_with_what_was_found() -> None:
    step = expect(
        reply="agendado",
        reply_not="qual horario",
        state={"trial.stage": "booked", "mode": {"mode": "discovery"}},
        intents=["trial"],
        journal=[{"event": "trial.decided", "stage_after": "booked"}, "faq.answered"],
        journal_not=["merge.complete"],
    )
    found = check_step(step, SEEN)
    assert [m.kind for m in found] == [
        "reply",
        "reply_not",
        "state",
        "state",
        "intents",
        "journal",
        "journal",
        "journal_not",
    ]
    by_subject = {m.subject: m for m in found}
    assert by_subject["trial.stage"].actual == '"ask_date"'
    # A mapping shows only the keys it named, not the whole slice.
    assert by_subject["mode"].actual == '{"mode": "oferta"}'
    journal = by_subject['trial.decided {"stage_after": "booked"}']
    assert journal.actual.splitlines()[0] == 'trial.decided {"stage_after": "ask_date"}'
    assert "turn.started, trial.decided, merge.complete" in journal.actual
    assert by_subject["faq.answered"].actual.startswith("no faq.answered")


def test_no_reply_reads_as_such() -> None:
    (mismatch,) = check_step(expect(reply="oi"), Observation([], STATE, []))
    assert mismatch.actual == "<no reply>"


def test_a_diff_marks_expected_and_actual_lines() -> None:
    short = render_mismatch(Mismatch("state", "trial.stage", '"booked"', '"ask_date"'), PLAIN)
    assert short == ["state trial.stage:", '- expected: "booked"', '+ actual:   "ask_date"']
    long = render_mismatch(Mismatch("state", "trial", '{\n  "a": 1\n}', '{\n  "a": 2\n}'), PLAIN)
    assert '-  "a": 1' in long and '+  "a": 2' in long
    colored = render_mismatch(Mismatch("reply", "x", "/x/", "y"), Style(True))
    assert "\033[31m- expected: /x/\033[0m" in colored


def result_with(step: StepResult, *, error: str | None = None) -> ScenarioResult:
    scenario = Scenario.model_validate(
        {"name": "Booking", "steps": [{"say": "oi", "note": "first"}, {"say": "tchau"}]}
    )
    return ScenarioResult("s.yaml", scenario, "scn-1", [step], seconds=1.25, error=error)


def test_a_failed_scenario_names_the_step_what_was_said_and_the_diff() -> None:
    failed = result_with(
        StepResult(0, ["oi"], ["Olá!"], [Mismatch("reply", "tchau", "/tchau/", "Olá!")])
    )
    text = "\n".join(render_result(failed, PLAIN))
    assert "✗ Booking" in text and "conversation: scn-1" in text
    assert 'step 1 › "oi"  (first)' in text
    assert "- expected: /tchau/" in text and "+ found:    Olá!" in text
    assert "(1 later step(s) not run)" in text
    passed = result_with(StepResult(0, ["oi"], ["Olá!"]))
    assert render_result(passed, PLAIN) == ["  ✓ Booking (2 steps, 1.2s)"]


def test_junit_has_one_case_per_scenario_and_one_error_per_bad_file() -> None:
    ok = result_with(StepResult(0, ["oi"], ["Olá!"]))
    failed = result_with(StepResult(0, ["oi"], [], error="no reply within 30s"))
    broken = result_with(StepResult(0, ["oi"]), error="cannot reach the gateway")
    xml = junit_xml([ok, failed, broken], [("bad.yaml", "not valid YAML")], 4.0)
    suite = ET.fromstring(xml.split("\n", 1)[1])
    assert suite.attrib | {"time": "x"} == {
        "name": "orquestra scenarios",
        "tests": "4",
        "failures": "1",
        "errors": "2",
        "time": "x",
    }
    cases = suite.findall("testcase")
    assert [c.attrib["classname"] for c in cases] == ["s.yaml"] * 3 + ["bad.yaml"]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.attrib["message"] == "step 1: no reply within 30s"
    assert "no reply within 30s" in (failure.text or "")
    assert cases[2].find("error") is not None and cases[3].find("error") is not None


def test_summary_line() -> None:
    ok = result_with(StepResult(0, ["oi"], ["Olá!"]))
    failed = result_with(StepResult(0, ["oi"], [], error="x"))
    assert summary_line([ok, failed], 1, 2.0) == "1 passed, 1 failed, 1 invalid file(s) in 2.0s"
    assert summary_line([ok], 0, 0.5) == "1 passed in 0.5s"
