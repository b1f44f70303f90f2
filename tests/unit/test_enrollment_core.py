"""The enrollment flow's pure decisions: reading a message, the order of the questions, the
request made once on a yes, and the mode's permission."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services.enrollment.config import load_config
from services.enrollment.core import EnrollmentState, Outcome, decide, read, request_id
from services.triage.config import load_config as load_triage
from services.triage.rules import active_flow, classify
from shared.contracts import FlowView
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)
NOW = datetime(2026, 2, 12, 21, 0, tzinfo=UTC)


def turn(text: str, state: EnrollmentState | None, *, allowed: bool = True, n: int = 0) -> Outcome:
    return decide(
        text,
        state=state,
        config=CONFIG,
        texts=PACK,
        seed=f"t{n}",
        now=NOW,
        conversation_id="c1",
        turn_id=f"t{n}",
        allowed=allowed,
    )


@pytest.mark.parametrize(
    ("text", "stage", "expected"),
    [
        ("quero fechar o plano de 3x", None, {"plan": "tres_vezes"}),
        ("plano de duas vezes por semana", None, {"plan": "duas_vezes"}),
        ("o de 2", "ask_plan", {"plan": "duas_vezes"}),
        ("3", "ask_plan", {"plan": "tres_vezes"}),
        ("quero o horário livre", None, {"plan": "horario_livre"}),
        (
            "segunda e quarta às 19h",
            "ask_schedule",
            {"days": ["segunda", "quarta"], "time": "19:00"},
        ),
        ("seg, qua e sex as 7h", None, {"days": ["segunda", "quarta", "sexta"], "time": "07:00"}),
        ("19", "ask_schedule", {"time": "19:00"}),
        # Plural weekdays name a weekly habit; a range names the days between its ends.
        ("tercas e quintas", "ask_schedule", {"days": ["terça", "quinta"]}),
        (
            "Segundas e quartas, às 7 da manhã.",
            None,
            {"days": ["segunda", "quarta"], "time": "07:00"},
        ),
        (
            "de seg a sex, umas 20h",
            "ask_schedule",
            {"days": ["segunda", "terça", "quarta", "quinta", "sexta"], "time": "20:00"},
        ),
        ("segunda até quarta", None, {"days": ["segunda", "terça", "quarta"]}),
        ("segunda a noite, 19h", None, {"days": ["segunda"], "time": "19:00"}),
        ("no cartão de crédito", None, {"payment": "cartao"}),
        ("pix", "ask_payment", {"payment": "pix"}),
        # A question chooses nothing: "aceitam cartão?" asks about a way to pay.
        ("quero o de 3x. vocês aceitam cartão?", None, {"plan": "tres_vezes"}),
        # Only the last comma piece of a "?" sentence asks: the plan before it is chosen.
        ("quero me matricular no de 3x, aceita cartao?", None, {"plan": "tres_vezes"}),
        ("tem horário livre?", None, {}),
        # A sentence that opens as a question is asked whole.
        ("vcs aceitam pix, cartao?", "ask_payment", {}),
        ("e o de 3x, quanto fica?", None, {}),
        # A plan's count is not an hour.
        ("plano de 3x", "ask_schedule", {"plan": "tres_vezes"}),
        # Days a week count classes a week.
        ("vou treinar 3 dias por semana", None, {"plan": "tres_vezes"}),
    ],
)
def test_read(text: str, stage: str | None, expected: dict[str, object]) -> None:
    reading = read(text, CONFIG, stage=stage)  # type: ignore[arg-type]
    assert reading.model_dump(exclude_defaults=True, exclude={"answer"}) == expected


def test_the_questions_come_in_order_and_a_yes_makes_one_request() -> None:
    first = turn("como faço pra me matricular?", None)
    assert first.state is not None and first.state.stage == "ask_plan" and first.asks_question
    steps = ["3x", "segunda e quarta", "às 19h", "pix"]
    state = first.state
    stages = []
    for n, text in enumerate(steps, start=1):
        outcome = turn(text, state, n=n)
        assert outcome.request is None and outcome.events == []
        state = outcome.state
        assert state is not None
        stages.append(state.stage)
    assert stages == ["ask_schedule", "ask_schedule", "ask_payment", "awaiting_confirmation"]
    done = turn("sim", state, n=9)
    assert done.request is not None and done.state is not None
    assert done.state.stage == "requested" and done.state.request_id == done.request.id
    assert done.request.id == request_id("c1", "t9", "MT")  # the same for a redelivered turn
    assert [e["type"] for e in done.events] == ["enrollment.requested", "handoff.requested"]
    handoff = done.events[1]["data"]
    assert handoff["reason"] == "enrollment" and done.request.id in handoff["summary"]
    again = turn("quero me matricular", done.state, n=10)
    assert again.request is None and again.events == [] and not again.asks_question


def test_everything_in_one_message_goes_straight_to_the_confirmation() -> None:
    text = "quero o plano de 3 vezes, terça e quinta às 8 da noite, pago no pix"
    outcome = turn(text, None)
    assert outcome.state == EnrollmentState(
        stage="awaiting_confirmation",
        plan="tres_vezes",
        days=["terça", "quinta"],
        time="20:00",
        payment="pix",
        asks=1,
    )


def test_a_no_asks_what_to_change_and_a_new_value_is_read_back() -> None:
    state = EnrollmentState(
        stage="awaiting_confirmation",
        plan="duas_vezes",
        days=["sexta"],
        time="18:00",
        payment="pix",
    )
    assert turn("não", state).state == state.model_copy(update={"asks": 1})
    changed = turn("prefiro cartão", state)
    assert changed.state is not None and changed.state.payment == "cartao"
    assert changed.state.stage == "awaiting_confirmation" and changed.request is None


def test_a_day_said_with_also_is_added_to_those_chosen_and_otherwise_replaces_them() -> None:
    state = EnrollmentState(
        stage="awaiting_confirmation",
        plan="duas_vezes",
        days=["terça", "quinta"],
        time="18:00",
        payment="pix",
    )
    added = turn("pera, melhor o de 3x, coloca sexta tbm", state).state
    assert added is not None and added.plan == "tres_vezes"
    assert added.days == ["terça", "quinta", "sexta"]
    assert added.stage == "awaiting_confirmation"
    replaced = turn("prefiro segunda e sexta", state).state
    assert replaced is not None and replaced.days == ["segunda", "sexta"]


@pytest.mark.parametrize("text", ["pode mandar", "agora sim", "isso, pode mandar"])
def test_the_usual_ways_to_say_send_it_make_the_request(text: str) -> None:
    state = EnrollmentState(
        stage="awaiting_confirmation",
        plan="duas_vezes",
        days=["terça"],
        time="19:00",
        payment="pix",
    )
    outcome = turn(text, state)
    assert outcome.request is not None and outcome.state is not None
    assert outcome.state.stage == "requested"


def test_an_empty_task_re_asks_the_pending_step() -> None:
    state = EnrollmentState(stage="ask_payment", plan="tres_vezes", days=["sexta"], time="18:00")
    outcome = turn("", state)
    assert outcome.state == state and outcome.asks_question and outcome.journal["reask"]


def test_a_mode_that_does_not_allow_it_starts_nothing_and_requests_nothing() -> None:
    refused = turn("quero me matricular", None, allowed=False)
    assert refused.state is None and refused.journal["refused"] == "not_allowed"
    state = EnrollmentState(
        stage="awaiting_confirmation",
        plan="duas_vezes",
        days=["sexta"],
        time="18:00",
        payment="pix",
    )
    held = turn("sim", state, allowed=False)
    assert held.request is None and held.state == state


def test_triage_hands_the_answers_of_an_enrollment_going_on_to_it() -> None:
    pack_config = load_triage(PACK)
    slices = {"trial": FlowView(stage="booked"), "enrollment": FlowView(stage="ask_payment")}
    config, stage = active_flow(pack_config, slices)
    assert stage == "ask_payment" and config.active_context.intent == "enrollment"
    # "pix" alone is the answer, not a question for the FAQ.
    assert classify("pix", trial_stage=stage, config=config, pack=PACK).intents == ["enrollment"]
    asked = classify("vcs aceitam pix?", trial_stage=stage, config=config, pack=PACK).intents
    assert "faq" in asked
    # A requested enrollment is idle: the trial's stage is the context again.
    idle = {"trial": FlowView(stage="booked"), "enrollment": FlowView(stage="requested")}
    assert active_flow(pack_config, idle) == (pack_config, "booked")


@pytest.mark.parametrize("text", ["queria um horário de manhã", "queria uma vaga à noite"])
def test_a_slot_wished_for_a_part_of_the_day_mid_enrollment_is_the_enrollments(text: str) -> None:
    """Out of any flow a wish for a slot is a trial class asked; while the enrollment asks its
    time, a part of the day is its answer."""
    pack_config = load_triage(PACK)
    slices = {"trial": FlowView(stage="booked"), "enrollment": FlowView(stage="ask_schedule")}
    config, stage = active_flow(pack_config, slices)
    assert classify(text, trial_stage=stage, config=config, pack=PACK).intents == ["enrollment"]
    assert classify(text, trial_stage=None, config=pack_config, pack=PACK).intents == ["trial"]


@pytest.mark.parametrize(
    "text", ["blz, quero o de 2x entao", "vou querer o horario livre", "fico com o de 3 vezes"]
)
def test_wanting_a_plan_named_by_its_count_or_name_is_an_enrollment(text: str) -> None:
    intents = classify(text, trial_stage=None, config=load_triage(PACK), pack=PACK).intents
    assert intents == ["enrollment"]


@pytest.mark.parametrize("text", ["vou querer o de 280", "beleza, fico com aquele de 450"])
def test_wanting_a_plan_named_by_its_price_is_an_enrollment(text: str) -> None:
    intents = classify(text, trial_stage="booked", config=load_triage(PACK), pack=PACK).intents
    assert "enrollment" in intents
    assert (
        "enrollment"
        not in classify(
            "quero o de 100 anos", trial_stage=None, config=load_triage(PACK), pack=PACK
        ).intents
    )


def test_having_done_the_trial_class_is_no_request_for_one() -> None:
    config = load_triage(PACK)
    done = (
        "minha filha fez a aula experimental ontem e quer continuar. como faço pra matricular ela?"
    )
    assert classify(done, trial_stage=None, config=config, pack=PACK).intents == ["enrollment"]
    again = "fiz a aula experimental e quero marcar outra"
    assert classify(again, trial_stage=None, config=config, pack=PACK).intents == ["trial"]


@pytest.mark.parametrize(
    "text",
    [
        "já fiz a experimental faz uns dias, curti muito e quero me matricular",
        "participei da aula teste na terça, como faço a matrícula?",
        "tive minha experimental ontem, quero me matricular",
    ],
)
def test_a_trial_class_done_in_other_words_is_no_request_for_one(text: str) -> None:
    assert classify(text, trial_stage=None, config=load_triage(PACK), pack=PACK).intents == [
        "enrollment"
    ]


def test_wanting_a_plan_without_a_verb_for_it_is_enrolling() -> None:
    config = load_triage(PACK)
    for text in ("agora eu quero um plano", "queria pegar um plano mensal"):
        assert "enrollment" in classify(text, trial_stage=None, config=config, pack=PACK).intents
    assert (
        "enrollment"
        not in classify("quero saber os planos", trial_stage=None, config=config, pack=PACK).intents
    )


def test_asking_about_debit_or_credit_beside_enrolling_is_answered_too() -> None:
    config = load_triage(PACK)
    text = "oii como faz pra matricula? da pra pagar no debito?"
    assert set(classify(text, trial_stage=None, config=config, pack=PACK).intents) == {
        "enrollment",
        "faq",
    }


def test_a_question_is_asked_at_most_max_asks_times_then_staff_take_over() -> None:
    """The seed's rule for a question that gets no answer: asked again, then a handoff with
    what is known, never a loop."""
    state = turn("quero fechar o plano de 3x, segunda e quarta às 19h", None).state
    assert state is not None and state.stage == "ask_payment"
    said = []
    for n in range(1, 1 + CONFIG.max_asks):
        outcome = turn("hmm não sei", state, n=n)
        said.append(outcome)
        state = outcome.state
    assert all(o.asks_question and o.events == [] for o in said[:-1])
    handed = said[-1]
    assert not handed.asks_question and handed.state is not None
    assert handed.state.stage == "handed_off"
    assert [e["type"] for e in handed.events] == ["handoff.requested"]
    data = handed.events[0]["data"]
    assert data["reason"] == CONFIG.handoff_reason and "3x por semana" in data["summary"]
    assert handed.text == PACK.text("enrollment_handoff", seed=f"t{CONFIG.max_asks}")


def test_progress_and_other_specialists_turns_do_not_count_as_asks() -> None:
    state = turn("quero me matricular", None).state
    for n in range(1, 6):
        # Triage's re-ask after another specialist answered (empty text) is no failed answer.
        state = turn("", state, n=n).state
    assert state is not None and state.stage == "ask_plan"
    state = turn("o de 2", state, n=7).state
    state = turn("não sei ainda", state, n=8).state
    assert state is not None and state.stage == "ask_schedule"


def test_after_staff_hand_it_back_the_flow_resumes_with_what_it_knew() -> None:
    state = EnrollmentState(stage="handed_off", plan="tres_vezes", asks=2)
    outcome = turn("segunda e quarta às 19h", state, n=1)
    assert outcome.state is not None and outcome.state.stage == "ask_payment"
    assert outcome.state.plan == "tres_vezes" and outcome.state.asks == 1


def test_the_plan_and_payment_named_before_the_flow_starts_are_kept() -> None:
    earlier = ["acho que o de 2 vezes por semana é o meu", "pagaria no pix. vocês abrem sábado?"]
    outcome = decide(
        "show, quero me matricular",
        state=None,
        config=CONFIG,
        texts=PACK,
        seed="t3",
        now=NOW,
        conversation_id="c1",
        turn_id="t3",
        allowed=True,
        earlier=earlier,
    )
    assert outcome.state is not None
    assert (outcome.state.plan, outcome.state.payment) == ("duas_vezes", "pix")
    assert (outcome.state.days, outcome.state.stage) == ([], "ask_schedule")
    # Once the flow runs, only the message itself counts.
    going = turn("pago no cartão", outcome.state, n=4)
    assert going.state is not None and going.state.payment != "pix"


@pytest.mark.parametrize(
    ("text", "plan"),
    [
        ("vou querer aquele de 280", "duas_vezes"),
        ("fico com o plano de R$ 450 por mês", "horario_livre"),
        ("me inscreve no de 360 reais", "tres_vezes"),
    ],
)
def test_a_plan_is_named_by_its_price(text: str, plan: str) -> None:
    assert read(text, CONFIG, stage=None).plan == plan


def test_an_hour_or_a_count_is_no_price() -> None:
    assert read("segunda às 18:00", CONFIG, stage="ask_schedule").plan is None
    assert read("umas 20 pessoas treinam?", CONFIG, stage=None).plan is None


def test_a_closed_day_is_said_back_and_left_out_of_the_choice() -> None:
    outcome = turn("plano 3x: quinta, sexta e domingos, às 18h", None)
    assert outcome.state is not None and outcome.state.days == ["quinta", "sexta"]
    assert outcome.text.startswith(
        PACK.text("enrollment_closed_days", seed="t0", fechados="domingo")
    )
    assert outcome.state.stage == "ask_payment"


def test_more_days_than_the_plan_offers_the_plan_that_covers_them() -> None:
    outcome = turn("quero o de 2 vezes: terça, quarta e quinta de noite às 20h", None)
    state = outcome.state
    assert state is not None and state.stage == "ask_plan"
    assert state.offered_plan == "tres_vezes" and state.plan == "duas_vezes"
    assert "3 dias" in outcome.text and "R$ 360" in outcome.text
    taken = turn("beleza, pode ser", state, n=1).state
    assert taken is not None and taken.plan == "tres_vezes" and taken.stage == "ask_payment"
    fewer = turn("então só terça e quinta", state, n=1).state
    assert fewer is not None and fewer.plan == "duas_vezes" and fewer.stage == "ask_payment"


def test_days_named_before_a_plan_say_which_plan_it_is() -> None:
    """Asked for a plan, the person answers with the days they would train: the days say
    the plan, offered once with its price (not the list of plans again), and a yes takes it;
    what else they say meanwhile is kept, and the offer stands until they answer it."""
    start = turn("quero me matricular", None).state
    assert start is not None and start.stage == "ask_plan"
    offer = turn("eu iria nas terças, quintas e sábados", start, n=1)
    state = offer.state
    assert state is not None and state.stage == "ask_plan" and state.plan is None
    assert state.offered_plan == "tres_vezes" and state.days == ["terça", "quinta", "sábado"]
    assert "3x por semana" in offer.text and "R$ 360" in offer.text
    assert "2x por semana" not in offer.text
    timed = turn("sempre de manhã", state, n=2)
    assert timed.state is not None and timed.state.offered_plan == "tres_vezes"
    assert timed.state.time == "manha" and "3x por semana" in timed.text
    taken = turn("fechou", timed.state, n=3).state
    assert taken is not None and taken.plan == "tres_vezes" and taken.stage == "ask_payment"


@pytest.mark.parametrize(
    ("days", "offered"),
    [("só às quartas", "duas_vezes"), ("segunda a sexta", "horario_livre")],
)
def test_a_plan_is_offered_for_any_number_of_days(days: str, offered: str) -> None:
    """One day fits the plan with the fewest classes; more days than any counted plan, the
    plan without a limit."""
    start = turn("quero fazer a matrícula", None).state
    outcome = turn(days, start, n=1)
    assert outcome.state is not None and outcome.state.offered_plan == offered


def test_every_weekday_is_more_than_any_counted_plan_so_the_open_plan_is_offered() -> None:
    outcome = turn("plano de 3x, de segunda a sábado às 6h", None)
    assert outcome.state is not None and outcome.state.offered_plan == "horario_livre"


def test_pointing_at_the_plan_just_asked_about_starts_with_it() -> None:
    outcome = decide(
        "show, quero esse",
        state=None,
        config=CONFIG,
        texts=PACK,
        seed="t9",
        now=NOW,
        conversation_id="c1",
        turn_id="t9",
        allowed=True,
        earlier=["bom dia", "e pra quem vai duas vezes na semana, quanto é?"],
    )
    assert outcome.state is not None and outcome.state.plan == "duas_vezes"
    assert outcome.state.stage == "ask_schedule"


def test_every_day_names_every_open_day_and_the_free_schedule_plan_takes_it() -> None:
    """ "todo dia" is each day the business opens: with the free-schedule plan the request
    goes on to the confirmation, nothing asked again."""
    chosen = turn("quero o plano de horário livre", None)
    outcome = turn("todos os dias cedinho, lá pelas 6h. pago no cartão", chosen.state, n=1)
    assert outcome.state.stage == "awaiting_confirmation"
    assert outcome.state.days == ["segunda", "terça", "quarta", "quinta", "sexta", "sábado"]
    assert outcome.state.time == "06:00"


@pytest.mark.parametrize(
    "text", ["vou de horário livre", "prefiro o ilimitado", "pode ser o plano livre"]
)
def test_a_plan_with_no_fixed_days_asks_no_days(text: str) -> None:
    """ "Horário livre" has no fixed days (``free_days`` in the pack): the time is asked, not
    which days, and the request goes on without them."""
    chosen = turn(text, None)
    assert chosen.state is not None and chosen.state.stage == "ask_schedule"
    assert "quais dias" not in chosen.text.lower() and "sem dias fixos" in chosen.text
    timed = turn("lá pelas 18h", chosen.state, n=1)
    assert timed.state is not None and timed.state.stage == "ask_payment"
    assert timed.state.days == [] and timed.state.time == "18:00"
    paid = turn("boleto", timed.state, n=2)
    assert paid.state is not None and paid.state.stage == "awaiting_confirmation"
    assert "dias livres às 18:00" in paid.text


def test_a_plan_with_fixed_days_still_asks_them() -> None:
    chosen = turn("quero o de 3x", None)
    timed = turn("às 19h", chosen.state, n=1)
    assert timed.state is not None and timed.state.stage == "ask_schedule"
    assert "dias da semana" in timed.text


@pytest.mark.parametrize(
    ("said", "part", "back"),
    [("bem de manhã", "manha", "de manhã"), ("prefiro à noite", "noite", "à noite")],
)
def test_a_part_of_the_day_is_the_preferred_time(said: str, part: str, back: str) -> None:
    """Asked the time, "de manhã" is a preference staff can arrange: it is taken and said back
    as such, not asked again (which ends in a handoff)."""
    chosen = turn("quero o plano de 2x, terça e quinta", None)
    assert chosen.state is not None and chosen.state.stage == "ask_schedule"
    timed = turn(said, chosen.state, n=1)
    assert timed.state is not None and timed.state.stage == "ask_payment"
    assert timed.state.time == part
    assert f"terça e quinta {back}" in timed.text
    paid = turn("pix", timed.state, n=2)
    assert f"terça e quinta {back}, pagamento por Pix" in paid.text


@pytest.mark.parametrize(
    "text",
    [
        "amei a aula, quero seguir treinando com vcs",
        "pretendo continuar nas aulas",
        "quero virar aluna de vocês",
        "fechou, onde assino?",
        "gostava de me inscrever no plano mensal",
        "vou querer fazer o mensal",
    ],
)
def test_staying_on_said_without_a_word_of_the_plans_is_enrolling(text: str) -> None:
    """After the trial people say they go on, become students or sign: enrolling, not the FAQ
    about the plans nor another trial class."""
    config = load_triage(PACK)
    for stage in (None, "booked"):
        assert classify(text, trial_stage=stage, config=config, pack=PACK).intents[-1:] == [
            "enrollment"
        ]
        assert "trial" not in classify(text, trial_stage=stage, config=config, pack=PACK).intents


def test_going_on_with_the_booking_is_no_enrollment() -> None:
    config = load_triage(PACK)
    for text in ("sim, pode seguir", "quero continuar o agendamento"):
        intents = classify(text, trial_stage="ask_date", config=config, pack=PACK).intents
        assert "enrollment" not in intents


@pytest.mark.parametrize(
    ("text", "plan"),
    [
        ("acho que 2 treinos por semana", "duas_vezes"),
        ("três aulas semanais", "tres_vezes"),
        ("umas duas vzs na semana ta otimo", "duas_vezes"),
        ("3 vz por semana", "tres_vezes"),
    ],
)
def test_classes_a_week_counted_in_classes_or_trainings_or_abbreviated_name_the_plan(
    text: str, plan: str
) -> None:
    """People count a week in classes or trainings as often as in times or days, and write
    "vz"/"vzs" for "vezes": the count names the plan, and is no hour."""
    reading = read(text, CONFIG, stage="ask_plan")
    assert (reading.plan, reading.time) == (plan, None)


def test_wanting_a_count_of_classes_a_week_is_enrolling_not_a_trial_class() -> None:
    text = "quero fazer umas 3 aulas por semana"
    intents = classify(text, trial_stage="booked", config=load_triage(PACK), pack=PACK).intents
    assert intents == ["enrollment"]


@pytest.mark.parametrize(
    ("text", "plan"),
    [
        ("pode ser o mais em conta", "duas_vezes"),
        ("acho que o mais baratinho mesmo", "duas_vezes"),
        ("me vê o mais completo", "horario_livre"),
        # A count said too wins over the price's rank.
        ("o mais barato, mas 3x na semana", "tres_vezes"),
    ],
)
def test_a_plan_chosen_by_its_price_rank_is_the_cheapest_or_the_dearest(
    text: str, plan: str
) -> None:
    """ "o mais barato" names no plan by its words: the price list says which one it is."""
    assert read(text, CONFIG, stage="ask_plan").plan == plan


def test_asking_which_is_the_cheapest_chooses_nothing() -> None:
    assert read("qual sai mais em conta?", CONFIG, stage="ask_plan").plan is None


@pytest.mark.parametrize("text", ["nossa, amei! quero continuar", "vou seguir"])
def test_going_on_said_bare_with_a_class_booked_is_enrolling(text: str) -> None:
    """Once the class is booked, "quero continuar" can only mean staying on; before or during
    the booking the same words say nothing of a plan (they may answer "quer seguir?")."""
    config = load_triage(PACK)
    assert classify(text, trial_stage="booked", config=config, pack=PACK).intents == ["enrollment"]
    for stage in (None, "ask_date"):
        intents = classify(text, trial_stage=stage, config=config, pack=PACK).intents
        assert "enrollment" not in intents
