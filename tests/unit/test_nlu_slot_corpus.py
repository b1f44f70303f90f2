"""The slot extractors against a labelled corpus of the project's own sentences.

Each case must come out exactly (a field it leaves out must be None), and the accuracy per field
is printed (``pytest -s``) so a change can report its figures before and after.
"""

from __future__ import annotations

from datetime import date, datetime, time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from shared.nlu.extract import extract_slots
from shared.nlu.models import Slots
from shared.pack import load_pack
from shared.trial.config import load_trial_config

CORPUS = yaml.safe_load((Path(__file__).parents[1] / "data" / "slot_corpus.yaml").read_text())
TODAY: date = CORPUS["today"]
TZ = ZoneInfo("America/Sao_Paulo")
FIELDS = ("nome", "idade", "nivel", "other")
# The CT Smash pack's rule for the level of a time played ("jogo há 2 anos").
LEVELS = load_trial_config(load_pack("ctsmash")).levels_by_time


def _read(case: dict[str, Any]) -> dict[str, Any]:
    slots: Slots = extract_slots(
        case["text"],
        datetime.combine(TODAY, time(12), TZ),
        TZ,
        case.get("expecting"),
        levels_by_time=LEVELS,
    )
    return {
        "nome": slots.nome,
        "idade": slots.idade,
        "nivel": slots.nivel,
        "other": slots.for_someone_else,
    }


@pytest.mark.parametrize("case", CORPUS["cases"], ids=lambda case: case["text"][:40])
def test_each_sentence_reads_as_labelled(case: dict[str, Any]) -> None:
    expected = {field: case.get(field) for field in FIELDS}
    if "other" not in case:
        got = _read(case)
        expected["other"] = got["other"]
    assert _read(case) == expected


def test_accuracy_per_field() -> None:
    right = dict.fromkeys(FIELDS, 0)
    for case in CORPUS["cases"]:
        got = _read(case)
        for field in FIELDS:
            if (field == "other" and "other" not in case) or got[field] == case.get(field):
                right[field] += 1
    total = len(CORPUS["cases"])
    print({field: f"{count}/{total}" for field, count in right.items()})
    assert all(count == total for count in right.values())
