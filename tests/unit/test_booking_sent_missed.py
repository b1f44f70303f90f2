"""What the booking sends (its confirmation, its code, a reminder), said to be missing: a
question about how the booking stands, looked up, not left unrouted for the menu."""

from __future__ import annotations

import pytest

from services.triage.config import load_config as load_triage
from services.triage.rules import classify
from services.trial.extraction import detect_action
from shared.nlu.normalize import normalize
from tests.unit.test_trial_flow import CONFIG, PACK, booked_chat

TRIAGE = load_triage(PACK)


@pytest.mark.parametrize(
    "text",
    [
        "por que eu não recebi o código?",
        "vc n me mandou a conf",
        "o lembrete ainda não chegou",
        "até agora nenhuma mensagem de confirmação chegou... nunca me veio confirmação",
    ],
)
def test_what_the_booking_sends_missed_is_its_status(text: str) -> None:
    assert "trial" in classify(text, trial_stage="booked", config=TRIAGE, pack=PACK).intents
    assert "trial" in classify(text, trial_stage=None, config=TRIAGE, pack=PACK).intents
    assert detect_action(text, [], CONFIG) == "status"
    plan = booked_chat().plan_for(text, intents=["trial"])
    assert plan.tool_call is not None
    assert plan.tool_call.tool == "get_booking"


@pytest.mark.parametrize("text", ["recebi o código, obrigada", "a mensagem chegou sim"])
def test_what_the_booking_sends_received_is_no_status(text: str) -> None:
    assert detect_action(text, [], CONFIG) is None


def test_the_clipped_confirmation_is_read_whole() -> None:
    assert normalize("cadê a conf?") == "cade a confirmacao"
