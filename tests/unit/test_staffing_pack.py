"""The staffing pack (Revoluna, the mode-router seed's domain) as a deployment of its own: it
checks clean, and with it triage routes no turn to the trial and enrollment specialists, whose
sections it lacks (those services idle, out of its turns)."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from orquestra.cli import main
from orquestra.pack_check import check_pack
from services.registry import SPECS
from services.triage.app import load_routed_config
from services.triage.core import triage_turn
from services.triage.evaluate import DEFAULT_CORPUS, load_corpus
from services.triage.faq_evidence import faq_knows
from services.triage.models import TriageDecision
from shared.pack import PACKS_DIR, PackError, load_pack

PACK = load_pack("staffing")
CONFIG = load_routed_config(PACK)
KNOWS = faq_knows(PACK, CONFIG)
NOW = datetime(2026, 7, 1, 13, tzinfo=UTC)
# What doctors write to Julia, and everything the CT Smash corpus has people write to book a
# trial class or enroll: none of it may reach a service the staffing pack leaves out.
DOCTORS = [
    "tem vaga de plantão?",
    "quanto paga o plantão de sábado?",
    "vocês reservam a vaga pra mim?",
    "quero fechar esse plantão",
    "quem é você?",
    "oi, tudo bem?",
    "não tenho interesse, obrigado",
]
MESSAGES = DOCTORS + [m.text for m in load_corpus(DEFAULT_CORPUS)]


def decide(text: str, *, seed: str, mode_pending: bool) -> TriageDecision:
    """Triage with the staffing pack, for a new conversation."""
    return triage_turn(
        text,
        state=None,
        trial_stage=None,
        now=NOW,
        config=CONFIG,
        pack=PACK,
        seed=seed,
        mode_pending=mode_pending,
        knows=KNOWS,
    )


def test_the_staffing_pack_checks_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_pack("staffing") == []
    assert main(["pack", "check", "staffing"]) == 0
    said = "staffing: ok; out of its turns: trial (no trial), enrollment (no enrollment), "
    assert capsys.readouterr().out == said + "scheduler (no reminders)\n"


def test_trial_enrollment_and_scheduler_are_out_of_its_turns() -> None:
    out = {spec.name for spec in SPECS if spec.out_of(PACK)}
    assert out == {"trial", "enrollment", "scheduler"}
    assert not any(spec.out_of(load_pack("ctsmash")) for spec in SPECS)


@pytest.mark.parametrize("pending", [False, True], ids=["no-question", "mode-question"])
def test_triage_routes_no_turn_to_a_service_out_of_the_pack(pending: bool) -> None:
    routed: set[str] = set()
    for index, text in enumerate(MESSAGES):
        routed |= set(decide(text, seed=str(index), mode_pending=pending).routes)
    assert routed == {"faq"}


def test_a_yes_to_the_bridge_question_is_answered_by_triage_and_reserves_nothing() -> None:
    decision = decide("sim, pode ser", seed="t1", mode_pending=True)
    assert decision.routes == []
    accepted = PACK.sections["texts"]["modes_bridge_accepted"]
    assert decision.inline_text in accepted


def test_a_route_to_a_service_whose_section_the_pack_lacks_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "staffing"
    shutil.copytree(PACKS_DIR / "staffing", folder)
    path = folder / "triage.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["triage"]["routes"]["trial"] = "trial"
    data["triage"]["intents"]["trial"] = {"keywords": {"plantao": 0.6}}
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")

    with pytest.raises(PackError, match=r"\['trial'\], out of this pack's turns"):
        load_routed_config(load_pack(str(folder)))
    assert [(p.kind, p.where) for p in check_pack(str(folder))] == [("section", "triage")]
