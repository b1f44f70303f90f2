"""N1/N2 clarification through triage_turn: menu, choices, confirmation, expiry, override."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.triage.config import TriageConfig, load_config
from services.triage.core import answers_pending, asks_llm, triage_turn
from services.triage.models import PendingClarification, TriageDecision, TriageState
from services.triage.rules import classify
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)
T0 = datetime(2026, 2, 3, 15, 0, tzinfo=UTC)
ORIGINAL = (
    "oi tudo bem, minha irma fez aula ai ano passado e gostou muito, eu to meio sem tempo esse "
    "semestre por causa da faculdade mas fiquei pensando nisso desde que ela comentou comigo"
)


def turn(
    text: str,
    state: TriageState | None = None,
    *,
    now: datetime = T0,
    stage: str | None = None,
    seed: str = "turn",
    config: TriageConfig = CONFIG,
) -> TriageDecision:
    return triage_turn(
        text, state=state, trial_stage=stage, now=now, config=config, pack=PACK, seed=seed
    )


def variants(key: str) -> list[str]:
    value = PACK.sections["texts"][key]
    return [value] if isinstance(value, str) else value


def menu_opened() -> TriageDecision:
    return turn(ORIGINAL)


def pending_state(stage: str, *, chosen: str | None = None, at: datetime = T0) -> TriageState:
    return TriageState(
        pending=PendingClarification(
            stage=stage, original_message=ORIGINAL, chosen_option=chosen, created_at=at, asked_at=at
        )
    )


def test_unplaceable_message_opens_the_menu_from_the_pack() -> None:
    decision = menu_opened()
    assert decision.routes == [] and decision.intents == []
    assert decision.asks_question is True
    labels = [PACK.text(option.label_key) for option in CONFIG.clarification.options]
    assert [f"{n}. {label}" for n, label in enumerate(labels, 1)] == decision.inline_text.split(
        "\n\n", 1
    )[1].splitlines()
    assert decision.inline_text.split("\n\n")[0] in variants("clarify_ask")
    pending = decision.state.pending
    assert pending is not None
    assert (pending.stage, pending.original_message) == ("awaiting_context", ORIGINAL)
    assert pending.created_at == T0
    assert decision.journal["clarification"] == "n1_menu"
    assert decision.journal["reason"] == "long_without_action"


def test_short_message_with_no_intent_opens_the_menu_but_a_greeting_does_not() -> None:
    assert turn("hmm").journal["clarification"] == "n1_menu"
    greeting = turn("oi")
    assert greeting.intents == ["general"] and greeting.state.pending is None
    assert greeting.inline_text in variants("general_greeting")


def test_menu_texts_vary_across_turns() -> None:
    asks = {turn(ORIGINAL, seed=f"turn-{i}").inline_text for i in range(30)}
    assert len(asks) > 1


@pytest.mark.parametrize("answer", ["1", "a primeira", "agendar", "quero agendar", "1️⃣"])
def test_choice_of_a_confirming_option_asks_n2(answer: str) -> None:
    decision = turn(answer, menu_opened().state, now=T0 + timedelta(minutes=2))
    assert decision.routes == [] and decision.asks_question
    pending = decision.state.pending
    assert pending is not None
    assert (pending.stage, pending.chosen_option) == ("awaiting_confirmation", "trial")
    assert pending.original_message == ORIGINAL
    assert pending.created_at == T0 and pending.asked_at == T0 + timedelta(minutes=2)
    subject = PACK.text("clarify_subject_trial")
    assert decision.inline_text in [v.format(subject=subject) for v in variants("clarify_confirm")]
    assert decision.journal["clarification"] == "n2_confirm"


@pytest.mark.parametrize("answer", ["2", "a segunda", "dúvida", "tirar uma duvida", "2️⃣"])
def test_choice_of_an_option_without_confirmation_routes_the_original(answer: str) -> None:
    decision = turn(answer, menu_opened().state)
    assert decision.routes == ["faq"] and decision.intents == ["faq"]
    assert decision.text == ORIGINAL
    assert decision.forced_by_clarification is True
    assert decision.state.pending is None
    assert decision.inline_text is None
    assert decision.journal["clarification"] == "n1_chosen"


@pytest.mark.parametrize("answer", ["abc", "7", "1 ou 2", "0"])
def test_invalid_choice_asks_again_with_the_menu(answer: str) -> None:
    opened = menu_opened()
    decision = turn(answer, opened.state, now=T0 + timedelta(minutes=3))
    assert decision.routes == [] and decision.asks_question
    intro, menu = decision.inline_text.split("\n\n", 1)
    assert intro in variants("clarify_invalid")
    assert menu == opened.inline_text.split("\n\n", 1)[1]
    pending = decision.state.pending
    assert pending is not None and pending.stage == "awaiting_context"
    assert pending.original_message == ORIGINAL
    assert pending.asked_at == T0 + timedelta(minutes=3)
    assert decision.journal["clarification"] == "n1_invalid"


@pytest.mark.parametrize("answer", ["4", "cancelar", "deixa pra lá", "a quarta"])
def test_cancel_option_clears_the_pending_clarification(answer: str) -> None:
    decision = turn(answer, menu_opened().state)
    assert decision.routes == [] and decision.state.pending is None
    assert decision.inline_text in variants("clarify_cancelled")
    assert decision.asks_question is False
    assert decision.journal["clarification"] == "n1_cancelled"


@pytest.mark.parametrize("yes", ["sim", "pode ser", "👍", "siiim"])
def test_n2_yes_routes_the_original_message_as_forced(yes: str) -> None:
    decision = turn(yes, pending_state("awaiting_confirmation", chosen="trial"))
    assert decision.routes == ["trial"] and decision.intents == ["trial"]
    assert decision.text == ORIGINAL
    assert decision.forced_by_clarification is True
    assert decision.state.pending is None
    assert decision.state.last_intents == ["trial"]
    assert decision.journal["clarification"] == "n2_yes"


def test_n2_yes_for_handoff_goes_to_the_handoff_owner() -> None:
    decision = turn("sim", pending_state("awaiting_confirmation", chosen="handoff"))
    assert decision.intents == ["handoff"] and decision.routes == ["trial"]
    assert decision.forced_by_clarification


def test_handoff_choice_by_number_then_yes() -> None:
    chosen = turn("3", menu_opened().state)
    assert chosen.state.pending is not None and chosen.state.pending.chosen_option == "handoff"
    confirmed = turn("sim", chosen.state)
    assert confirmed.intents == ["handoff"] and confirmed.text == ORIGINAL


@pytest.mark.parametrize("no", ["não", "nao", "agora nao"])
def test_n2_no_clears(no: str) -> None:
    decision = turn(no, pending_state("awaiting_confirmation", chosen="trial"))
    assert decision.routes == [] and decision.state.pending is None
    assert decision.inline_text in variants("clarify_declined")
    assert decision.journal["clarification"] == "n2_no"


def test_n2_unclear_answer_asks_again() -> None:
    decision = turn(
        "hmm", pending_state("awaiting_confirmation", chosen="trial"), now=T0 + timedelta(minutes=1)
    )
    pending = decision.state.pending
    assert pending is not None and pending.stage == "awaiting_confirmation"
    assert pending.asked_at == T0 + timedelta(minutes=1)
    subject = PACK.text("clarify_subject_trial")
    assert decision.inline_text in [
        v.format(subject=subject) for v in variants("clarify_confirm_again")
    ]
    assert decision.journal["clarification"] == "n2_confirm_again"


def test_pending_clarification_expires_on_business_time() -> None:
    limit = timedelta(minutes=CONFIG.clarification.expire_after_minutes)
    state = menu_opened().state
    within = turn("2", state, now=T0 + limit)
    assert within.forced_by_clarification and within.routes == ["faq"]
    after = turn("2", state, now=T0 + limit + timedelta(seconds=1))
    assert not after.forced_by_clarification
    assert after.journal["pending_expired"] == "awaiting_context"
    greeting = turn(
        "oi",
        pending_state("awaiting_confirmation", chosen="trial"),
        now=T0 + limit + timedelta(minutes=5),
    )
    assert greeting.intents == ["general"] and greeting.state.pending is None


def test_expiry_time_is_configurable() -> None:
    clarify = CONFIG.clarification.model_copy(update={"expire_after_minutes": 5})
    config = CONFIG.model_copy(update={"clarification": clarify})
    decision = turn(
        "sim",
        pending_state("awaiting_confirmation", chosen="trial"),
        now=T0 + timedelta(minutes=6),
        config=config,
    )
    assert decision.forced_by_clarification is False
    assert decision.journal["pending_expired"] == "awaiting_confirmation"


def test_clear_new_request_wins_over_the_menu() -> None:
    decision = turn("onde fica a CT?", menu_opened().state)
    assert decision.routes == ["faq"] and decision.text == "onde fica a CT?"
    assert decision.forced_by_clarification is False
    assert decision.state.pending is None
    assert decision.journal["pending_superseded"] == "awaiting_context"


@pytest.mark.parametrize("text", ["quanto custa a mensalidade?", "não, quero saber o preço"])
def test_clear_new_request_wins_over_the_confirmation(text: str) -> None:
    decision = turn(text, pending_state("awaiting_confirmation", chosen="trial"))
    assert decision.routes == ["faq"] and decision.text == text
    assert decision.state.pending is None
    assert decision.journal["pending_superseded"] == "awaiting_confirmation"


def test_greeting_during_the_menu_is_not_a_new_request() -> None:
    decision = turn("oi", menu_opened().state)
    assert decision.journal["clarification"] == "n1_invalid"
    assert decision.state.pending is not None


def test_disabled_clarification_answers_with_the_fallback() -> None:
    clarify = CONFIG.clarification.model_copy(update={"enabled": False})
    config = CONFIG.model_copy(update={"clarification": clarify})
    decision = turn("hmm", config=config)
    assert decision.intents == ["general"] and decision.state.pending is None
    assert decision.inline_text in variants("general_fallback")


def test_state_slice_round_trips_as_json() -> None:
    state = turn("1", menu_opened().state).state
    assert TriageState.model_validate_json(state.model_dump_json()) == state


def test_a_yes_or_no_to_the_funnel_question_is_that_answer_not_the_menu() -> None:
    from datetime import UTC, datetime

    from services.triage.config import load_config
    from services.triage.core import triage_turn
    from shared.pack import load_pack

    pack = load_pack("ctsmash")
    config = load_config(pack)
    now = datetime(2026, 2, 5, 13, 0, tzinfo=UTC)

    def decide(text: str, mode_pending: bool):
        return triage_turn(
            text, state=None, trial_stage=None, now=now, config=config, pack=pack, seed="s",
            mode_pending=mode_pending,
        )  # fmt: skip

    yes = decide("sim, pode ser", True)
    assert yes.routes == ["trial"] and yes.inline_text is None
    assert yes.journal["clarification"] == "mode_yes"
    no = decide("não, obrigado", True)
    assert no.routes == [] and no.intents == ["general"] and no.inline_text
    assert decide("sim, pode ser", False).journal["clarification"] == "n1_menu"
    assert decide("onde fica a CT?", True).routes == ["faq"]


def test_answers_pending_only_when_the_rules_settle_the_turn_alone() -> None:
    menu = menu_opened().state
    limit = timedelta(minutes=CONFIG.clarification.expire_after_minutes)
    n2 = pending_state("awaiting_confirmation", chosen="trial")
    assert answers_pending("2", menu, T0, CONFIG)
    assert answers_pending("sim", n2, T0, CONFIG)
    # Not settled by the rules alone: no menu, an expired one, free text, or a no (which a
    # clear new request may override).
    assert not answers_pending("2", None, T0, CONFIG)
    assert not answers_pending("2", menu, T0 + limit + timedelta(minutes=1), CONFIG)
    assert not answers_pending("vc é um robo?", menu, T0, CONFIG)
    assert not answers_pending("não", n2, T0, CONFIG)
    # A word names an option, but the message is a question: not a menu choice.
    assert answers_pending("aula", menu, T0, CONFIG)
    assert not answers_pending("tem aula pra criança?", menu, T0, CONFIG)


def test_asks_llm_by_mode() -> None:
    unsure = menu_opened()  # "hmm"-like text: the rules place nothing
    rules = classify("hmm", trial_stage=None, config=CONFIG, pack=PACK)
    assert asks_llm("llm", "2", rules, unsure.state, T0, CONFIG)
    assert not asks_llm("rules", "hmm", rules, None, T0, CONFIG)
    assert asks_llm("hybrid", "hmm", rules, None, T0, CONFIG)
    assert not asks_llm("hybrid", "2", rules, unsure.state, T0, CONFIG)
