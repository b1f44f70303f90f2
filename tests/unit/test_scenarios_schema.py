"""The scenario file format: what parses, what is rejected with a clear message, the clock."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from orquestra.scenario_schema import (
    Step,
    message_times,
    parse_duration,
    parse_scenarios,
    substitute,
    with_variables,
)

ONE = """
name: Booking
start: 2026-02-05T10:00:00-03:00
steps:
  - say: quero agendar
    expect:
      reply: qual .* nome
      intents: [trial]
      state: {trial.stage: collect_client_info}
      journal: [turn.started, {event: merge.complete, sources: [trial]}]
  - say: [oi, tudo bem]
    after: 2m
  - say: 41
    sent_at: 2026-02-06T09:00:00-03:00
"""


def test_a_single_scenario_file_parses_with_its_shorthands() -> None:
    (scenario,) = parse_scenarios(ONE, "one.yaml").scenarios
    first, burst, number = scenario.steps
    assert first.say == ["quero agendar"]
    assert first.expect.reply == ["qual .* nome"]
    merged = {"event": "merge.complete", "sources": ["trial"]}
    assert first.expect.journal == ["turn.started", merged]
    assert burst.say == ["oi", "tudo bem"] and burst.after == timedelta(minutes=2)
    assert number.say == ["41"]
    assert burst.expect.is_empty() and not first.expect.is_empty()


def test_several_scenarios_under_one_key() -> None:
    text = "scenarios:\n  - {name: a, steps: [{say: oi}]}\n  - {name: b, steps: [{say: ola}]}\n"
    parsed = parse_scenarios(text, "many.yaml")
    assert [s.name for s in parsed.scenarios] == ["a", "b"]
    assert parsed.source == "many.yaml"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\nsteps: [{say: oi, expcet: {reply: a}}]", "expcet"),
        ("name: x\nsteps: [{say: oi, expect: {reply: '(unclosed'}}]", "invalid regex"),
        ("name: x\nsteps: [{say: oi, expect: {journal: [{sources: [a]}]}}]", "'event' name"),
        ("name: x\nsteps: [{say: oi, after: soon}]", "not a duration"),
        ("name: x\nsteps: []", "steps"),
        ("name: x\nsteps: [{say: '  '}]", "some text"),
        ("name: x\nsteps: [{say: oi, save: {'9code': trial.booking_id}}]", "variable names"),
        ("scenarios: [{name: a, steps: [{say: oi}]}]\nname: b", "only key"),
        ("name: [unclosed", "not valid YAML"),
        ("- just\n- a list", "not a mapping"),
        ("name: x\nsteps: [{say: [a, b], gap: 0s}]", "gap is more than 0"),
        ("name: x\nsteps: [{say: [a, b], gap: 2m}]", "at most 30s"),
        ("name: x\nsteps: [{say: oi, gap: 1s}]", "say needs 2 or more"),
        ("name: x\ngoal: married\nsteps: [{say: oi}]", "goal"),
    ],
)
def test_invalid_files_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"bad\.yaml") as error:
        parse_scenarios(text, "bad.yaml")
    assert message in str(error.value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2m", timedelta(minutes=2)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("45s", timedelta(seconds=45)),
        ("8d", timedelta(days=8)),
        ("250ms", timedelta(milliseconds=250)),
        ("1m30s", timedelta(seconds=90)),
        ("1.5s", timedelta(seconds=1.5)),
        (90, timedelta(seconds=90)),
    ],
)
def test_durations(value: object, expected: timedelta) -> None:
    assert parse_duration(value) == expected


@pytest.mark.parametrize("value", ["", "2x", "m", "-2m", True])
def test_bad_durations(value: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(value)


def test_the_clock_advances_by_after_and_jumps_to_sent_at() -> None:
    (scenario,) = parse_scenarios(ONE, "one.yaml").scenarios
    start = datetime.fromisoformat("2026-02-05T10:00:00-03:00")
    times = message_times(scenario, datetime.fromisoformat("2030-01-01T00:00:00+00:00"))
    assert times == [
        start,
        start + timedelta(minutes=2),
        datetime.fromisoformat("2026-02-06T09:00:00-03:00"),
    ]


def test_without_a_start_the_runner_clock_is_used() -> None:
    (scenario,) = parse_scenarios("name: x\nsteps: [{say: a, after: 1m}]", "x").scenarios
    now = datetime.fromisoformat("2026-03-01T12:00:00+00:00")
    assert message_times(scenario, now) == [now + timedelta(minutes=1)]


def test_saved_values_fill_messages_and_expectations() -> None:
    step = Step.model_validate(
        {
            "say": "cancelar {code}",
            "expect": {
                "reply": "codigo {code}",
                "state": {"trial.booking_id": "{code}", "x": {"match": "^{code}$"}},
                "journal": [{"event": "trial.decided", "booking_code": "{code}"}],
            },
        }
    )
    filled = with_variables(step, {"code": "AE-1+2"})
    assert filled.say == ["cancelar AE-1+2"]
    assert filled.expect.reply == [r"codigo AE\-1\+2"]
    assert filled.expect.state == {"trial.booking_id": "AE-1+2", "x": {"match": r"^AE\-1\+2$"}}
    assert filled.expect.journal == [{"event": "trial.decided", "booking_code": "AE-1+2"}]
    assert substitute("{unknown} {code}", {"code": "x"}) == "{unknown} x"


def test_a_dialog_names_its_persona_and_goal_and_spaces_its_burst() -> None:
    text = (
        "name: impatient\npersona: teenager, types in fragments\ngoal: booked\n"
        "steps:\n  - say: [oi, queria saber, quanto custa]\n    gap: 1.5s\n  - say: ok\n"
    )
    (dialog,) = parse_scenarios(text, "d.yaml").scenarios
    assert (dialog.persona, dialog.goal) == ("teenager, types in fragments", "booked")
    burst, single = dialog.steps
    assert burst.message_offsets() == [timedelta(0), timedelta(seconds=1.5), timedelta(seconds=3)]
    assert single.gap is None and single.message_offsets() == [timedelta(0)]


def test_an_enrollment_dialog_has_its_own_goal() -> None:
    text = "name: joins\npersona: after the trial\ngoal: enrolled\nsteps: [{say: quero o de 3x}]"
    (dialog,) = parse_scenarios(text, "d.yaml").scenarios
    assert dialog.goal == "enrolled"


def test_a_scenario_without_the_dialog_fields_still_parses() -> None:
    (scenario,) = parse_scenarios(ONE, "one.yaml").scenarios
    assert scenario.persona is None and scenario.goal is None
    assert all(step.gap is None for step in scenario.steps)
