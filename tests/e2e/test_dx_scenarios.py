"""Every YAML scenario under scenarios/ against the session's real system, plus ``orquestra
test`` itself (exit status, diff, JUnit XML).

The scenarios run concurrently once per module (each in its own conversation); every scenario
is then its own test, failing with the runner's diff.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from orquestra.cli import main
from orquestra.client import Client
from orquestra.scenario_check import ScenarioResult, render_result
from orquestra.scenario_run import Runner
from orquestra.scenario_schema import Scenario
from orquestra.scenarios import find_files, load
from orquestra.style import Style
from tests.system import ROOT, System

FILES = find_files([str(Path(ROOT) / "scenarios")])
LOADED, INVALID = load(FILES)
CASES = [(Path(f.source).name, s) for f in LOADED for s in f.scenarios]


def test_scenario_files_are_valid_and_cover_every_seed() -> None:
    assert INVALID == []
    tags = {tag for _, scenario in CASES for tag in scenario.tags}
    seeds = {"seed-triage", "seed-trial-ask-date", "seed-clarification", "seed-tool-gate"}
    assert seeds | {"seed-mode-router"} <= tags


@pytest.fixture(scope="module")
def results(system: System) -> dict[tuple[str, str], ScenarioResult]:
    now = datetime.now(UTC)

    def run(case: tuple[str, Scenario]) -> ScenarioResult:
        with Client(system.base_url) as client:
            return Runner(client).run(case[1], case[0], now=now)

    with ThreadPoolExecutor(max_workers=8) as pool:
        done = list(pool.map(run, CASES))
    return {(r.source, r.scenario.name): r for r in done}


@pytest.mark.parametrize(
    ("source", "name"), [(source, s.name) for source, s in CASES], ids=[s.name for _, s in CASES]
)
def test_scenario(results: dict[tuple[str, str], ScenarioResult], source: str, name: str) -> None:
    result = results[(source, name)]
    assert result.passed, "\n" + "\n".join(render_result(result, Style(False)))


FAILING = """
name: A deliberately wrong expectation
steps:
  - say: onde fica a CT?
    expect:
      reply: avenida paulista
      state: {triage.last_intents: [trial]}
"""


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def orquestra_test(capsys: pytest.CaptureFixture[str]):
    """``orquestra test ARGS`` run in this process, with its output."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(["test", "--color", "never", *args])
        out, err = capsys.readouterr()
        return Run(code, out, err)

    return run


def test_the_command_reports_a_failure_with_a_diff_and_junit(
    system: System, tmp_path: Path, orquestra_test
) -> None:
    scenario = tmp_path / "wrong.yaml"
    scenario.write_text(FAILING, encoding="utf-8")
    junit = tmp_path / "out" / "junit.xml"
    done = orquestra_test(str(scenario), "--url", system.base_url, "--junit", str(junit))
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "✗ A deliberately wrong expectation" in out
    assert "- expected: /avenida paulista/" in out and "Rua das Palmeiras" in out
    diff = ["state triage.last_intents:", '- expected: ["trial"]', '+ actual:   ["faq"]']
    assert "\n".join(f"        {line}" for line in diff) in out
    assert "0 passed, 1 failed" in out
    case = ET.parse(junit).getroot().find("testcase")
    assert case is not None and case.find("failure") is not None


def test_the_command_passes_and_flags_invalid_files(
    system: System, tmp_path: Path, orquestra_test
) -> None:
    passing = orquestra_test(str(Path(ROOT) / "scenarios" / "faq.yaml"), "--url", system.base_url)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "3 passed" in passing.stdout
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nsteps: [{say: oi, expcet: {}}]\n", encoding="utf-8")
    invalid = orquestra_test(str(broken), "--url", system.base_url)
    assert invalid.returncode == 1
    assert "expcet" in invalid.stderr and "1 invalid file(s)" in invalid.stdout
    missing = orquestra_test(str(tmp_path / "nope.yaml"), "--url", system.base_url)
    assert missing.returncode == 2 and "no such file" in missing.stderr
