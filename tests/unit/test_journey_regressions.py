"""Bugs the end-to-end journeys found in the pure cores and packs, pinned at unit level."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from services.faq.core import answer
from services.trial.flow import plan_turn
from services.trial.models import TrialOutcome, TrialState
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.pack import load_pack
from shared.trial.config import load_trial_config

TZ = ZoneInfo("America/Sao_Paulo")


def test_a_yes_before_a_question_is_not_a_faq_topic() -> None:
    """Mid-booking "sim, e onde fica?" goes to trial and faq; the FAQ answered the vestiário
    too, because its answer says "Temos sim!" and a bare "sim" matched it as a topic."""
    pack = load_pack("ctsmash")
    index = FaqIndex(pack.section("faq", FaqConfig))
    for text in ("sim, e onde fica?", "ss e quanto custa?"):
        result = answer(text, mode=None, index=index, texts=pack, seed="t")
        assert len(result.entry_ids) == 1, (text, result.entry_ids)
        assert "vestiario" not in result.entry_ids
    assert answer("tem vestiário?", mode=None, index=index, texts=pack, seed="t").entry_ids == [
        "vestiario"
    ]


def test_a_plain_no_while_the_booking_asks_a_field_stops_the_flow() -> None:
    """ "não quero mais" while the trial asked for the name was asked again and counted as a
    failed answer; the third refusal handed the person to the team "because the bot could not
    help". A refusal without any data now stops the flow, keeping what was collected."""
    pack = load_pack("ctsmash")
    config = load_trial_config(pack)
    now = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)

    def turn(text: str, state: TrialState) -> TrialOutcome:
        plan = plan_turn(
            text,
            state=state,
            context=None,
            now=now,
            tz=TZ,
            config=config,
            pack=pack,
            seed="t",
            seats_taken={},
            allowed_tools=None,
        )
        assert plan.outcome is not None
        return plan.outcome

    for text in ("não quero mais", "agora não, vou pensar", "deixa pra lá"):
        asked_name = turn(text, TrialState(asked="nome", attempts={"nome": 2}))
        assert asked_name.journal["reply"] == "trial_flow_stopped", text
        assert asked_name.state.stage != "handoff_requested" and asked_name.state.attempts == {}
    kept = turn("não", TrialState(stage="ask_date", nome="Ana", idade=30, nivel="iniciante"))
    assert kept.journal["reply"] == "trial_flow_stopped"
    assert (kept.state.stage, kept.state.nome) == ("ask_date", "Ana")
    # Data with the "no" is an answer; at the confirmation "não" goes back to the date.
    assert turn("não, me chamo Maria", TrialState(asked="nome")).state.nome == "Maria"
    confirming = TrialState(
        stage="awaiting_confirmation",
        nome="Ana",
        idade=30,
        nivel="iniciante",
        desired_date="2026-02-10",
        desired_time="19:00",
    )
    assert turn("não", confirming).journal["reply"] == "trial_confirmation_declined"
