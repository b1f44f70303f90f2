"""``orquestra eval dialogs`` without a system: the text report, and the files it refuses
before starting anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from orquestra.cli import main
from orquestra.dialog_figures import DialogFigures, Unanswered
from orquestra.eval_dialogs import report


def dialog(source: str, name: str, *, reached: bool, **kw: object) -> DialogFigures:
    fields: dict[str, object] = {
        "persona": "p",
        "goal": "booked",
        "conversation_id": f"scn-{name}",
        "steps": 3,
        "booked": reached,
        "turns_to_book": 3 if reached else None,
        "loops": [],
        "questions": 1,
        "unanswered": [],
    }
    fields.update(kw)
    return DialogFigures(source=source, name=name, reached=reached, **fields)  # type: ignore[arg-type]


def test_the_report_groups_dialogs_by_file_and_ends_with_the_totals() -> None:
    missed = Unanswered(2, "onde fica?", "palmeiras", "Qual o seu nome?")
    dialogs = [
        dialog("a.yaml", "ok", reached=True),
        dialog("a.yaml", "lost", reached=False, loops=["asked nome 3x"], unanswered=[missed]),
        dialog("b.yaml", "other", reached=True),
    ]
    text = report(dialogs, details=True)
    lines = text.splitlines()
    assert lines[0] == "a.yaml" and lines[1].startswith("  ✓ ok (")
    assert "  ✗ lost (goal booked, loops 1, unanswered 1/1)" in lines
    assert '      unanswered at step 2 "onde fica?": /palmeiras/' in lines
    assert "      loop: asked nome 3x" in lines
    assert "b.yaml" in lines
    assert lines[-5:] == [
        "dialogs: 3",
        "goal reached: 2/3 (66.7%)",
        "booked as asked: 2/3 booking dialogs (turns to book: median 3, max 3)",
        "loops: 1 in 1 dialog(s)",
        "questions left unanswered: 1/3",
    ]
    assert "unanswered at step" not in report(dialogs, details=False)


def test_bad_paths_and_files_are_refused_before_a_system_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "dialogs", str(tmp_path / "missing")]) == 2
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\ngoal: won\nsteps: [{say: oi}]\n", encoding="utf-8")
    assert main(["eval", "dialogs", str(broken)]) == 2
    assert "goal" in capsys.readouterr().err
    assert main(["eval", "triage", str(broken)]) == 2
    assert "takes no paths" in capsys.readouterr().err
