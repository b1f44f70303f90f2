"""Wishes and choices in the words people use for them: every person of the verbs, trying as
wanting, choosing a plan, and the verbs that are goodbyes only when said alone."""

from __future__ import annotations

import pytest

from services.triage.config import load_config
from services.triage.rules import classify
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)


def intents(text: str) -> list[str]:
    return classify(text, trial_stage=None, config=CONFIG, pack=PACK).intents


@pytest.mark.parametrize(
    "text",
    [
        "meus sobrinhos querem experimentar",
        "eles queriam conhecer a aula de vocês",
        "as meninas gostariam de fazer uma aula",
        "vi o vídeo de vocês e quero tentar",
        "a gente queria testar antes de decidir",
        # "falou" tells what someone said here; the message wants the class.
        "minha irmã falou que vocês são ótimos, quero tentar também",
    ],
)
def test_wanting_the_class_in_any_person_or_as_trying_it_is_the_booking(text: str) -> None:
    assert intents(text) == ["trial"]


@pytest.mark.parametrize(
    "text", ["vou optar pelo horário livre", "escolho o de 3x", "vou fechar com o de 2 vezes"]
)
def test_choosing_a_plan_is_the_enrollment(text: str) -> None:
    assert "enrollment" in intents(text)


@pytest.mark.parametrize("text", ["falou", "valeu, falou!", "ok, fui", "flw"])
def test_falou_and_fui_alone_or_after_a_closing_word_say_goodbye(text: str) -> None:
    result = classify(text, trial_stage=None, config=CONFIG, pack=PACK, seed="s")
    assert result.intents == ["general"]
    assert result.general_response in PACK.sections["texts"]["general_bye"]


def test_falou_telling_what_someone_said_is_no_goodbye() -> None:
    result = classify("o professor falou comigo ontem", trial_stage=None, config=CONFIG, pack=PACK)
    assert result.general_response not in PACK.sections["texts"]["general_bye"]
