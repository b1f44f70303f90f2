"""``orquestra eval dialogs`` against the session's real system, on the corpus's smoke subset.

Checks the report's shape and that it accounts for every dialog, step and question; not that
the goals are met (that is the figure the command measures).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orquestra.cli import main
from orquestra.scenarios import find_files, load, selected
from tests.system import ROOT, System

CORPUS = Path(ROOT) / "tests" / "data" / "dialogs"


def test_the_smoke_dialogs_are_measured_and_reported_as_json(
    system: System, capsys: pytest.CaptureFixture[str]
) -> None:
    loaded, invalid = load(find_files([str(CORPUS)]))
    assert invalid == []
    smoke = [s for f in loaded for s in f.scenarios if selected(s, "smoke")]
    assert any(step.gap for s in smoke for step in s.steps), "the subset has a spaced burst"
    capsys.readouterr()
    code = main(["eval", "dialogs", str(CORPUS), "--url", system.base_url, "-k", "smoke", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    dialogs, totals = report["dialogs"], report["totals"]
    assert sorted(d["name"] for d in dialogs) == sorted(s.name for s in smoke)
    by_name = {s.name: s for s in smoke}
    for d in dialogs:
        scenario = by_name[d["name"]]
        assert d["goal"] == scenario.goal and d["persona"] == scenario.persona
        assert d["steps"] == len(scenario.steps)
        assert d["questions"] == sum(len(step.expect.reply) for step in scenario.steps)
        assert isinstance(d["reached"], bool) and isinstance(d["loops"], list)
        assert d["conversation_id"].startswith("scn-")
        assert d["problems"] == [] or d["reached"] is False
        for miss in d["unanswered"]:
            assert set(miss) == {"step", "said", "pattern", "reply"}
            assert miss["reply"] != "<no reply>", "every step was answered"
    assert totals["dialogs"] == len(smoke)
    assert totals["reached"] == sum(d["reached"] for d in dialogs)
    assert totals["questions"] == sum(d["questions"] for d in dialogs)
    assert totals["unanswered"] == sum(len(d["unanswered"]) for d in dialogs)
    assert totals["booking_dialogs"] == sum(s.goal == "booked" for s in smoke)


def test_a_bad_path_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "dialogs", str(tmp_path / "nope")]) == 2
    assert "no such file" in capsys.readouterr().err
