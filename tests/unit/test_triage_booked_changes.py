"""A booked class moved to another day or hour reaches the booking flow.

Once a class is booked the flow is idle, so triage places a message by its own words: "trocar
pra quinta?" or "dá pra mudar pras 7h?" names no class, only where it moves to.
"""

from __future__ import annotations

import pytest

from services.triage.config import load_config
from services.triage.rules import classify
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)


@pytest.mark.parametrize(
    "text",
    [
        "tem como mudar pras 7h na mesma terça?",
        "queria trocar pra terça seguinte, pode?",
        "consigo alterar para as 19h?",
    ],
)
def test_moving_a_booked_class_goes_to_the_trial(text: str) -> None:
    result = classify(text, trial_stage="booked", config=CONFIG, pack=PACK)
    assert "trial" in result.intents


def test_changing_something_else_is_not_a_booking() -> None:
    result = classify(
        "posso trocar a raquete depois?", trial_stage="booked", config=CONFIG, pack=PACK
    )
    assert "trial" not in result.intents
