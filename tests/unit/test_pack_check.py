"""``orquestra pack check``: every pack in the repo is consistent, and each kind of problem is
found in a copy of the CT Smash pack broken on purpose."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from orquestra.cli import main
from orquestra.pack_check import check_pack, models_checked
from services.registry import SPECS
from shared.pack import PACKS_DIR, load_pack

PACKS = sorted(p.name for p in PACKS_DIR.iterdir() if p.is_dir())


@pytest.mark.parametrize("name", PACKS)
def test_every_pack_in_the_repo_checks_clean(name: str) -> None:
    assert check_pack(name) == []
    assert main(["pack", "check", name]) == 0


def test_the_command_exits_non_zero_on_a_broken_pack(tmp_path: Path) -> None:
    broken = _copy(tmp_path, "trial.yaml", lambda d: d["texts"].pop("trial_still_need_nome"))
    done = subprocess.run(
        [sys.executable, "-m", "orquestra.cli", "pack", "check", str(broken)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "missing_text: trial_still_need_nome" in done.stdout


def _copy(tmp_path: Path, file: str, edit: Callable[[dict], object]) -> Path:
    folder = tmp_path / "pack"
    shutil.copytree(PACKS_DIR / "ctsmash", folder)
    path = folder / file
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return folder


def _kinds(folder: Path) -> set[tuple[str, str]]:
    return {(p.kind, p.where) for p in check_pack(str(folder))}


def _faq_entry(data: dict, entry_id: str) -> dict:
    return next(e for e in data["faq"]["entries"] if e["id"] == entry_id)


def test_the_faq_states_the_rules_minimum_age() -> None:
    pack = load_pack("ctsmash")
    rules = pack.sections["trial"]["min_age"]
    answer = _faq_entry(pack.sections, "idade")["answer"]
    assert rules == 8
    assert f"a partir dos *{rules} anos*" in answer


def test_a_changed_rule_changes_the_faq(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "trial.yaml", lambda d: d["trial"].update(min_age=10))
    assert (
        "a partir dos *10 anos*" in _faq_entry(load_pack(str(folder)).sections, "idade")["answer"]
    )


def test_a_class_time_the_rules_do_not_have_is_a_contradiction(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        _faq_entry(data, "aula_experimental")["answer"] = "Às terças, às 07:00 ou 21:00."

    assert ("contradiction", "faq.aula_experimental") in _kinds(_copy(tmp_path, "faq.yaml", edit))


def test_a_placeholder_nothing_fills_is_reported(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        data["texts"]["trial_reask_nome"] = "Qual é o seu {apelido}?"

    assert ("placeholder", "trial_reask_nome") in _kinds(_copy(tmp_path, "trial.yaml", edit))


def test_a_reference_naming_nothing_fails_the_load(tmp_path: Path) -> None:
    def edit(data: dict) -> None:
        _faq_entry(data, "idade")["answer"] = "A partir dos {trial.idade_minima} anos."

    assert {kind for kind, _ in _kinds(_copy(tmp_path, "faq.yaml", edit))} == {"load"}


def test_a_section_its_service_would_refuse_is_reported(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "trial.yaml", lambda d: d["trial"].update(adult_age=5))
    assert ("section", "trial") in _kinds(folder)


def test_every_section_a_service_declares_is_checked(tmp_path: Path) -> None:
    """The check's sections are the specs' (a new service's section needs no edit here)."""
    declared = {section for spec in SPECS for section, _ in spec.pack}
    assert {"trial", "faq", "triage", "modes", "enrollment"} <= declared
    assert set(models_checked()) == declared

    def two_plans_of_three(data: dict) -> None:
        data["enrollment"]["plans"]["duas_vezes"]["classes_per_week"] = 3

    folder = _copy(tmp_path, "enrollment.yaml", two_plans_of_three)
    assert ("section", "enrollment") in _kinds(folder)


def test_a_route_to_no_registered_specialist_is_reported(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "triage.yaml", lambda d: d["triage"]["routes"].update(faq="loyalty"))
    problems = [p for p in check_pack(str(folder)) if p.where == "triage"]
    assert problems and "loyalty" in problems[0].message, problems
