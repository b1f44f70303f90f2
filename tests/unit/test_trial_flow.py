"""The trial specialist's core, turn by turn, with the CT Smash pack.

Business time is the seed's: Thursday 2026-02-05 10:00 in São Paulo, so "terça dia 10 de
fevereiro" is the coming class day. Tool results are given as the store would return them.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from services.trial.flow import TrialPlan, finish_turn, plan_turn
from services.trial.models import (
    ContextState,
    ToolResult,
    TrialExtraction,
    TrialOutcome,
    TrialState,
)
from shared.pack import Pack, load_pack
from shared.trial.bookings import BookingView
from shared.trial.config import TrialConfig, load_trial_config

TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)
PACK = load_pack("ctsmash")
CONFIG = load_trial_config(PACK)
CLIENT = {"nome": "João", "idade": 27, "nivel": "iniciante"}


class Chat:
    """Feeds messages to the core as the shell would, keeping the slices between turns."""

    def __init__(
        self,
        *,
        state: TrialState | None = None,
        context: ContextState | None = None,
        now: datetime = NOW,
        seats: dict[tuple[str, str], int] | None = None,
        allowed_tools: set[str] | None = None,
        config: TrialConfig = CONFIG,
        pack: Pack = PACK,
    ) -> None:
        self.state = state
        self.context = context
        self.now = now
        self.seats = seats or {}
        self.allowed_tools = allowed_tools
        self.config = config
        self.pack = pack
        self.turns = 0
        self.plan: TrialPlan | None = None

    def plan_for(
        self,
        text: str,
        *,
        extraction: TrialExtraction | None = None,
        intents: list[str] | None = None,
    ) -> TrialPlan:
        self.turns += 1
        self.plan = plan_turn(
            text,
            state=self.state,
            context=self.context,
            now=self.now,
            tz=TZ,
            config=self.config,
            pack=self.pack,
            seed=f"turn-{self.turns}",
            seats_taken=self.seats,
            allowed_tools=self.allowed_tools,
            mode="discovery",
            conversation_id="conv-1",
            extraction=extraction,
            intents=intents,
        )
        return self.plan

    def say(
        self,
        text: str,
        *,
        result: ToolResult | None = None,
        extraction: TrialExtraction | None = None,
        intents: list[str] | None = None,
    ) -> TrialOutcome:
        plan = self.plan_for(text, extraction=extraction, intents=intents)
        if plan.tool_call is not None:
            assert result is not None, f"unexpected tool call {plan.tool_call}"
            outcome = finish_turn(plan, result)
        else:
            assert result is None, "a tool result was given but no tool was called"
            assert plan.outcome is not None
            outcome = plan.outcome
        self.state, self.context = outcome.state, outcome.context
        return outcome

    def text(self, key: str, **values: object) -> str:
        """What the pack says for ``key`` on the last turn, with the reply's own values."""
        return self.pack.text(key, seed=f"turn-{self.turns}", **values)


def at_stage(stage: str, **fields: object) -> TrialState:
    return TrialState(stage=stage, **{**CLIENT, **fields})  # type: ignore[arg-type]


def booked_chat(*, set_at: datetime = NOW, **kwargs: object) -> Chat:
    state = at_stage(
        "booked",
        desired_date="2026-02-10",
        desired_time="19:00",
        booking_id="AE-7K3Q9P",
        booking_created=True,
    )
    context = ContextState().with_value("active_booking_id", "AE-7K3Q9P", set_at)
    return Chat(state=state, context=context, **kwargs)  # type: ignore[arg-type]


def view(booking_id: str, date: str, time: str, status: str = "active") -> BookingView:
    return BookingView(booking_id=booking_id, date=date, time=time, status=status)  # type: ignore[arg-type]


# Collecting the client's data


def test_first_message_asks_for_the_name_with_the_seed_defaults() -> None:
    chat = Chat()
    out = chat.say("quero marcar uma aula experimental")
    assert out.state.stage == "collect_client_info"
    assert (out.state.booking_created, out.state.handoff_requested) == (False, False)
    assert out.state.asked == "nome"
    assert out.text == chat.text("trial_ask_name", horarios="07:00, 18:00, 19:00 e 20:00")
    assert out.asks_question


def test_client_info_one_field_per_message() -> None:
    chat = Chat()
    chat.say("oi, quero agendar uma aula")
    assert chat.say("João").state.asked == "idade"
    assert chat.say("27").state.asked == "nivel"
    out = chat.say("iniciante")
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("João", 27, "iniciante")
    assert out.state.stage == "ask_date"
    assert out.journal["reply"] == "trial_ask_date"
    assert "terça, 10/02" in out.text


def test_client_info_all_in_one_message() -> None:
    out = Chat().say("Sou o João, tenho 27 anos e sou iniciante")
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("João", 27, "iniciante")
    assert out.state.stage == "ask_date"


def test_a_date_given_before_the_name_is_kept_for_later() -> None:
    chat = Chat()
    out = chat.say("Quero uma aula experimental na terça dia 10 de fevereiro às 19h")
    assert out.state.stage == "collect_client_info"
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-10", "19:00")
    chat.say("João")
    chat.say("27")
    out = chat.say("intermediário")
    assert out.state.stage == "awaiting_confirmation"
    assert "terça, 10/02 às 19:00" in out.text


def test_merge_never_erases_collected_data() -> None:
    chat = Chat(state=at_stage("ask_date", desired_date="2026-02-10"))
    out = chat.say("19:00")
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("João", 27, "iniciante")
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-10", "19:00")


def test_an_age_no_person_has_is_asked_again() -> None:
    chat = Chat(state=TrialState(nome="João", asked="idade"))
    out = chat.say("tenho 120 anos")
    assert out.state.idade is None
    assert out.journal["validation"] == "invalid_age"
    assert out.state.asked == "idade"
    assert out.text == chat.text("trial_invalid_age")
    assert chat.say("27").state.idade == 27


def test_an_llm_extraction_is_used_instead_of_the_rules() -> None:
    chat = Chat()
    llm = TrialExtraction(nome="Maria", idade=31, nivel="avancado")
    out = chat.say("texto que as regras não entendem", extraction=llm)
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("Maria", 31, "avancado")


# Date and time: the seed's progressive scenario and every error code


def test_seed_progressive_scenario() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("Quero na terça dia 10 de fevereiro")
    assert out.state.stage == "ask_date"
    assert out.journal["validation"] == "missing_time"
    assert out.state.desired_date == "2026-02-10"
    assert out.text.startswith("Fechado para terça, 10/02.")
    assert "2026-02-10" not in out.text

    out = chat.say("19:00")
    assert out.state.stage == "awaiting_confirmation"
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-10", "19:00")
    assert "terça, 10/02 às 19:00" in out.text
    assert "(sim/não)" in out.text


@pytest.mark.parametrize(
    ("message", "extraction", "seats", "code", "shown"),
    [
        ("tanto faz", None, {}, "missing_date", "terça, 10/02"),
        (
            "dia 10/02/2026",
            TrialExtraction(desired_date="10/02/2026"),
            {},
            "invalid_date_format",
            "",
        ),
        ("quarta dia 11 às 19h", None, {}, "not_tuesday", "terça, 10/02"),
        ("terça 3 de fevereiro às 19h", None, {}, "past_date", "terça, 10/02"),
        ("terça 10/02", None, {}, "missing_time", "terça, 10/02"),
        (
            "terça 10/02 às 19h",
            TrialExtraction(desired_date="2026-02-10", desired_time="19h"),
            {},
            "invalid_time_format",
            "",
        ),
        ("terça 10/02 às 15h", None, {}, "unavailable_time", "terça, 10/02 às 07:00, 18:00, 19:00"),
        (
            "terça 10/02 às 19h",
            None,
            {("2026-02-10", "19:00"): 6},
            "slot_full",
            "terça, 10/02 às 07:00, 18:00 e 20:00; ou terça, 24/02",
        ),
    ],
)
def test_every_error_code_has_its_own_reply(
    message: str,
    extraction: TrialExtraction | None,
    seats: dict[tuple[str, str], int],
    code: str,
    shown: str,
) -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"), seats=seats)
    out = chat.say(message, extraction=extraction)
    assert out.journal["validation"] == code
    assert out.state.last_error == code
    assert out.state.stage == "ask_date"
    assert out.journal["reply"] == f"trial_{code}"
    assert shown in out.text
    assert not re.search(r"\d{4}-\d{2}-\d{2}", out.text)


def test_error_replies_are_distinct_per_code() -> None:
    codes = [
        "missing_date",
        "invalid_date_format",
        "not_tuesday",
        "past_date",
        "missing_time",
        "invalid_time_format",
        "unavailable_time",
        "slot_full",
        "invalid_age",
    ]
    texts = {PACK.sections["texts"][f"trial_{code}"] for code in codes}
    assert len(texts) == len(codes)


def test_a_class_that_already_started_today_is_unavailable() -> None:
    tuesday_evening = datetime(2026, 2, 10, 19, 30, tzinfo=TZ)
    chat = Chat(state=at_stage("ask_date", asked="date"), now=tuesday_evening)
    out = chat.say("hoje às 19h")
    assert out.journal["validation"] == "unavailable_time"
    assert "terça, 10/02 às 20:00" in out.text


def test_past_date_is_reported_before_asking_for_the_time() -> None:
    out = Chat(state=at_stage("ask_date", asked="date")).say("dia 3 de fevereiro")
    assert out.journal["validation"] == "past_date"


def test_date_is_judged_in_the_business_timezone() -> None:
    # 01:30 UTC on Wednesday is still Tuesday 22:30 in São Paulo: Tuesday 10/02 is not past.
    utc_now = datetime(2026, 2, 11, 1, 30, tzinfo=ZoneInfo("UTC"))
    chat = Chat(state=at_stage("ask_date", asked="date"), now=utc_now)
    out = chat.say("x", extraction=TrialExtraction(desired_date="2026-02-10", desired_time="20:00"))
    assert out.journal["validation"] == "unavailable_time"


# Confirmation


def confirming_chat(**kwargs: object) -> Chat:
    state = at_stage(
        "awaiting_confirmation",
        desired_date="2026-02-10",
        desired_time="19:00",
        asked="confirmation",
    )
    return Chat(state=state, **kwargs)  # type: ignore[arg-type]


def test_yes_books_through_the_gate() -> None:
    chat = confirming_chat()
    plan = chat.plan_for("sim")
    assert plan.tool_call is not None
    assert plan.tool_call.tool == "create_booking"
    assert plan.tool_call.args == {
        "date": "2026-02-10",
        "time": "19:00",
        "nome": "João",
        "idade": 27,
        "nivel": "iniciante",
        "idempotency_key": "turn-1",
    }
    out = finish_turn(
        plan, ToolResult(status="created", booking=view("AE-7K3Q9P", "2026-02-10", "19:00"))
    )
    assert out.state.stage == "booked"
    assert (out.state.booking_id, out.state.booking_created) == ("AE-7K3Q9P", True)
    assert out.context.entries["active_booking_id"].value == "AE-7K3Q9P"
    assert out.context.entries["active_booking_id"].set_at == NOW
    assert out.events == [
        {
            "type": "trial.booked",
            "data": {
                "booking_id": "AE-7K3Q9P",
                "date": "2026-02-10",
                "time": "19:00",
                "nome": "João",
                "idade": 27,
                "nivel": "iniciante",
            },
        }
    ]
    assert "AE-7K3Q9P" in out.text and "terça, 10/02 às 19:00" in out.text
    assert not out.asks_question


def test_no_goes_back_to_ask_date_keeping_the_client_info() -> None:
    out = confirming_chat().say("não")
    assert out.state.stage == "ask_date"
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("João", 27, "iniciante")
    assert (out.state.desired_date, out.state.desired_time) == (None, None)
    assert out.journal["reply"] == "trial_confirmation_declined"


@pytest.mark.parametrize(
    ("message", "field", "value"),
    [
        ("não, a idade está errada: tenho 29", "idade", 29),
        ("nao, o nível é intermediário", "nivel", "intermediario"),
    ],
)
def test_a_no_that_corrects_a_field_keeps_the_class_and_asks_again(
    message: str, field: str, value: object
) -> None:
    out = confirming_chat().say(message)
    assert out.state.stage == "awaiting_confirmation"
    assert getattr(out.state, field) == value
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-10", "19:00")
    assert out.journal["reply"] == "trial_ask_confirmation"
    assert "terça, 10/02 às 19:00" in out.text


def test_a_new_date_in_the_confirmation_reply_is_validated_not_booked() -> None:
    chat = confirming_chat()
    plan = chat.plan_for("sim, mas pode ser dia 24 de fevereiro?")
    assert plan.tool_call is None
    assert plan.outcome is not None
    out = plan.outcome
    assert out.state.stage == "awaiting_confirmation"
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-24", "19:00")
    assert "terça, 24/02 às 19:00" in out.text


def test_a_new_invalid_time_in_the_confirmation_reply_is_reported() -> None:
    out = confirming_chat().say("na verdade às 15h")
    assert out.state.stage == "ask_date"
    assert out.journal["validation"] == "unavailable_time"


def test_yes_revalidates_the_seats_before_booking() -> None:
    chat = confirming_chat(seats={("2026-02-10", "19:00"): 6})
    out = chat.say("sim")
    assert out.journal["validation"] == "slot_full"
    assert out.state.stage == "ask_date"


def test_the_store_finding_the_class_full_offers_other_times() -> None:
    chat = confirming_chat()
    plan = chat.plan_for("sim")
    out = finish_turn(plan, ToolResult(status="full"))
    assert out.state.stage == "ask_date"
    assert out.journal["validation"] == "slot_full"
    assert out.journal["tool_result"] == "full"
    assert "terça, 10/02 às 07:00, 18:00 e 20:00" in out.text
    assert out.events == []


def test_an_unclear_confirmation_asks_again() -> None:
    out = confirming_chat().say("hmm deixa eu ver")
    assert out.state.stage == "awaiting_confirmation"
    assert out.journal["reply"] == "trial_confirmation_unclear"
    assert out.state.attempts == {"confirmation": 1}


# Handoff


def test_asking_for_a_person_hands_off() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("quero falar com um atendente")
    assert out.state.stage == "handoff_requested"
    assert out.state.handoff_requested
    assert out.events == [
        {
            "type": "handoff.requested",
            "data": {"reason": "asked", "field": None, "stage": "ask_date"},
        }
    ]
    assert out.text == chat.text("trial_handoff")


def test_two_failed_answers_to_the_same_question_hand_off_with_a_summary() -> None:
    chat = Chat(state=TrialState(nome="João", asked="idade"))
    second = chat.say("sei lá")
    assert second.state.attempts == {"idade": 1}
    assert second.text == chat.text("trial_still_need_idade")
    out = chat.say("tenho 200 anos")
    assert out.state.stage == "handoff_requested"
    assert out.events[0]["type"] == "handoff.requested"
    assert out.events[0]["data"]["reason"] == "attempts"
    assert out.events[0]["data"]["field"] == "idade"
    assert out.journal["reply"] == "trial_handoff_attempts"
    falta = "a idade, o nível (iniciante, intermediário ou avançado), a terça da aula e o horário"
    summary = chat.pack.text("trial_summary", anotado="nome João", falta=falta)
    assert summary in out.text


def test_a_question_after_a_full_class_is_no_failed_answer() -> None:
    # The class chosen is full: a yes that does not choose another time is a failed answer,
    # but a question about something else (answered by the FAQ) is not, even though the kept
    # time is still refused: like any usable answer, it starts the count again.
    chat = confirming_chat(seats={("2026-02-10", "19:00"): 6})
    refused = chat.say("sim")
    assert refused.journal["validation"] == "slot_full"
    again = chat.say("pode confirmar")
    assert again.state.attempts == {"time": 1}
    asked = chat.say("qual o endereço de vocês?")
    assert asked.state.stage == "ask_date"
    assert asked.state.attempts == {}
    assert chat.say("ok").state.attempts == {"time": 1}
    handed = chat.say("ok")
    assert handed.state.stage == "handoff_requested"
    summary = chat.pack.text(
        "trial_summary",
        anotado="nome João, 27 anos, nível iniciante e terça, 10/02 às 19:00",
        falta=chat.pack.text("trial_field_time"),
    )
    assert summary in handed.text


def test_progress_on_another_field_is_kept_and_the_missing_one_said_exactly() -> None:
    # The name was asked and not given, but the age was: progress is a usable answer (no failed
    # attempt counted), the age is said back before saying exactly what is still missing.
    chat = Chat(state=TrialState(asked="nome"))
    out = chat.say("tenho 27 anos")
    assert (out.state.asked, out.state.idade) == ("nome", 27)
    assert out.state.attempts == {}
    noted = chat.pack.text("trial_noted", seed="turn-1", anotado="27 anos")
    assert out.text == f"{noted} {chat.text('trial_still_need_nome')}"


def test_after_a_handoff_small_talk_waits_and_real_data_resumes() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    chat.say("atendente")
    waiting = chat.say("ok, obrigado")
    assert waiting.state.stage == "handoff_requested"
    assert waiting.events == []
    assert waiting.journal["reply"] == "trial_handoff_waiting"
    resumed = chat.say("terça 10/02 às 18h")
    assert resumed.state.stage == "awaiting_confirmation"
    assert not resumed.state.handoff_requested


# After the booking: status, cancel, reschedule through the gate


def test_status_injects_the_booking_id_from_context() -> None:
    chat = booked_chat()
    plan = chat.plan_for("qual o horário da minha aula?")
    assert plan.tool_call is not None
    assert plan.tool_call.tool == "get_booking"
    assert plan.tool_call.args == {"booking_id": "AE-7K3Q9P"}
    gate = plan.gate
    assert gate is not None
    assert [i.context_key for i in gate.injections] == ["active_booking_id"]
    out = finish_turn(
        plan, ToolResult(status="found", booking=view("AE-7K3Q9P", "2026-02-10", "19:00"))
    )
    assert out.journal["gate"]["injections"][0]["value"] == "AE-7K3Q9P"
    assert out.journal["reply"] == "trial_status"


def test_cancel_asks_first_then_cancels_on_yes() -> None:
    chat = booked_chat()
    asked = chat.say("quero cancelar minha aula")
    assert asked.journal["gate"]["outcome"] == "needs_confirmation"
    assert asked.state.pending_tool is not None
    assert asked.state.pending_tool.args == {
        "booking_id": "AE-7K3Q9P",
        "reason": "pedido_do_cliente",
    }
    assert "terça, 10/02 às 19:00" in asked.text
    assert asked.asks_question
    assert asked.state.stage == "booked"

    plan = chat.plan_for("sim")
    assert plan.tool_call is not None
    assert plan.tool_call.tool == "cancel_booking"
    out = finish_turn(
        plan,
        ToolResult(
            status="cancelled", booking=view("AE-7K3Q9P", "2026-02-10", "19:00", "cancelled")
        ),
    )
    assert out.state.stage == "cancelled"
    assert (out.state.booking_id, out.state.booking_created) == (None, False)
    assert (out.state.nome, out.state.idade) == ("João", 27)
    assert "active_booking_id" not in out.context.entries
    assert out.events == [
        {
            "type": "trial.cancelled",
            "data": {"booking_id": "AE-7K3Q9P", "date": "2026-02-10", "time": "19:00"},
        }
    ]
    assert "terça, 10/02 às 19:00" in out.text


def cancelled_chat() -> Chat:
    chat = booked_chat()
    chat.say("preciso desmarcar a aula")
    chat.say(
        "sim",
        result=ToolResult(
            status="cancelled", booking=view("AE-7K3Q9P", "2026-02-10", "19:00", "cancelled")
        ),
    )
    return chat


@pytest.mark.parametrize("text", ["a aula foi desmarcada mesmo?", "então tá cancelado?"])
def test_asking_about_a_cancelled_class_says_it_is_cancelled(text: str) -> None:
    chat = cancelled_chat()
    out = chat.say(text, intents=["trial"])
    assert out.journal["reply"] == "trial_cancelled_status"
    assert out.state.stage == "cancelled"


def test_a_yes_that_names_the_outcome_still_answers_the_cancel_question() -> None:
    chat = booked_chat()
    chat.say("desmarca pra mim")
    plan = chat.plan_for("sim, pode deixar desmarcado")
    assert plan.tool_call is not None and plan.tool_call.tool == "cancel_booking"


def test_booking_again_after_a_cancel_reopens_the_flow_with_the_data_kept() -> None:
    chat = cancelled_chat()
    out = chat.say("quero marcar de novo, terça 24/02 às 18h")
    assert out.state.stage == "awaiting_confirmation"
    assert (out.state.nome, out.state.desired_date) == ("João", "2026-02-24")


@pytest.mark.parametrize("answer", ["cancela", "pode cancelar", "não vou poder ir, cancela"])
def test_repeating_the_cancel_request_confirms_it(answer: str) -> None:
    chat = booked_chat()
    chat.say("cancelar")
    plan = chat.plan_for(answer)
    assert plan.tool_call is not None and plan.tool_call.tool == "cancel_booking"


def test_a_refusal_next_to_the_cancel_words_keeps_the_booking() -> None:
    chat = booked_chat()
    chat.say("cancelar")
    out = chat.say("não, não cancela")
    assert out.journal["reply"] == "trial_change_kept"
    assert out.state.stage == "booked"


def test_no_to_the_cancel_question_keeps_the_booking() -> None:
    chat = booked_chat()
    chat.say("desmarcar")
    out = chat.say("não, deixa")
    assert out.state.stage == "booked"
    assert out.state.pending_tool is None
    assert out.journal["reply"] == "trial_change_kept"


def test_a_confirmation_question_expires() -> None:
    chat = booked_chat()
    chat.say("cancelar")
    chat.now = NOW + timedelta(minutes=CONFIG.confirmation_ttl_minutes + 1)
    plan = chat.plan_for("sim")
    assert plan.tool_call is not None
    assert plan.tool_call.tool == "get_booking"


def test_reschedule_validates_asks_and_moves() -> None:
    chat = booked_chat()
    asked = chat.say("quero remarcar para dia 24 às 18h")
    assert asked.journal["gate"]["outcome"] == "needs_confirmation"
    assert "terça, 10/02 às 19:00" in asked.text and "terça, 24/02 às 18:00" in asked.text

    plan = chat.plan_for("pode sim")
    assert plan.tool_call is not None
    assert plan.tool_call.args == {
        "booking_id": "AE-7K3Q9P",
        "new_date": "2026-02-24",
        "new_time": "18:00",
    }
    out = finish_turn(
        plan, ToolResult(status="rescheduled", booking=view("AE-7K3Q9P", "2026-02-24", "18:00"))
    )
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-24", "18:00")
    assert out.events[0]["type"] == "trial.rescheduled"
    assert out.events[0]["data"]["from_date"] == "2026-02-10"


def test_reschedule_without_a_date_asks_for_it_then_validates() -> None:
    chat = booked_chat()
    out = chat.say("preciso remarcar")
    assert out.journal["reply"] == "trial_reschedule_ask"
    out = chat.say("quarta dia 18")
    assert out.journal["validation"] == "not_tuesday"
    out = chat.say("terça dia 24")
    assert out.state.pending_tool is not None
    assert out.state.pending_tool.args["new_date"] == "2026-02-24"
    assert out.state.pending_tool.args["new_time"] == "19:00"


@pytest.mark.parametrize(
    "text",
    [
        "consegue passar minha aula pra semana seguinte, no mesmo horário?",
        "dá pra jogar o agendamento pra terça 17?",
    ],
)
def test_moving_the_class_in_other_words_is_a_reschedule(text: str) -> None:
    # The week after the class is Carnaval's: the move is refused with the day's reason.
    out = booked_chat().say(text, intents=["trial"])
    assert out.journal["action"] == "reschedule"
    assert out.journal["validation"] == "closed_day"
    assert "17/02" in out.text and "Carnaval" in out.text


def test_being_told_the_time_is_no_reschedule() -> None:
    plan = booked_chat().plan_for("passa o horário pra mim de novo?", intents=["trial"])
    assert plan.tool_call is not None and plan.tool_call.tool == "get_booking"


def test_reschedule_to_a_full_class_is_refused_before_asking() -> None:
    chat = booked_chat(seats={("2026-02-24", "19:00"): 6})
    out = chat.say("remarcar para terça 24/02")
    assert out.journal["validation"] == "slot_full"
    assert out.state.pending_tool is None
    assert out.state.booking_id == "AE-7K3Q9P"


def test_expired_context_is_absent_cancel_is_refused_clearly() -> None:
    ttl = timedelta(minutes=CONFIG.gate.context_ttl_minutes)
    chat = booked_chat(set_at=NOW - ttl - timedelta(minutes=1))
    plan = chat.plan_for("cancelar")
    assert plan.tool_call is None
    assert plan.outcome is not None
    out = plan.outcome
    assert out.text.startswith("Não encontrei um agendamento ativo")
    assert out.journal["gate"]["refusal"] == "missing_context"
    assert out.state.pending_tool is None


def test_an_explicit_code_is_looked_up_and_adopted() -> None:
    chat = Chat(state=at_stage("ask_date"))
    plan = chat.plan_for("meu código é ae-9x4m2z, quando é a aula?")
    assert plan.tool_call is not None
    assert plan.tool_call.args == {"booking_id": "AE-9X4M2Z"}
    out = finish_turn(
        plan, ToolResult(status="found", booking=view("AE-9X4M2Z", "2026-02-24", "07:00"))
    )
    assert out.state.stage == "booked"
    assert out.context.entries["active_booking_id"].value == "AE-9X4M2Z"


def test_an_explicit_code_is_not_overridden_by_the_context() -> None:
    chat = booked_chat()
    plan = chat.plan_for("status do AE-22222Z")
    assert plan.tool_call is not None
    assert plan.tool_call.args == {"booking_id": "AE-22222Z"}
    assert plan.gate is not None and plan.gate.injections == []


def test_a_tool_the_mode_does_not_allow_is_refused_with_a_violation() -> None:
    chat = confirming_chat(allowed_tools={"get_booking"})
    out = chat.say("sim")
    assert out.state.stage == "awaiting_confirmation"
    assert out.journal["gate"]["refusal"] == "not_allowed"
    assert out.journal["gate"]["violation"] == {
        "event": "violation_attempt",
        "conversa_id": "conv-1",
        "mode": "discovery",
        "violation_type": "tool",
        "attempted": "create_booking",
    }
    assert out.text == chat.text("trial_tool_not_allowed")


def test_cancel_before_any_booking_stops_the_flow() -> None:
    out = confirming_chat().say("cancela")
    assert out.journal["reply"] == "trial_flow_stopped"
    assert out.state.stage == "ask_date"
    assert out.state.desired_date is None


def test_triage_intent_names_an_action() -> None:
    chat = booked_chat()
    plan = chat.plan_for("e aí?", intents=["trial", "trial_cancel"])
    assert plan.outcome is not None
    assert plan.outcome.state.pending_tool is not None


# The optional phrasing


def test_every_outcome_carries_a_deterministic_nlg_request() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    out = chat.say("terça 10/02 às 19h")
    assert out.nlg is not None
    assert out.nlg.fallback == out.text
    assert out.nlg.facts == ["10/02", "19:00"]
    assert out.nlg.action == "ask_confirmation"
    assert out.nlg.messages[0]["role"] == "system"


def test_a_corrected_client_field_is_said_back_while_the_date_is_asked() -> None:
    chat = Chat(state=TrialState(**CLIENT, stage="ask_date", asked="date"))
    out = chat.say("ah, é Joan com A, sem o O")
    assert (out.state.nome, out.state.stage) == ("Joan", "ask_date")
    assert "Joan" in out.text
    # A field given for the first time at that step is not a correction: nothing said back.
    fresh = Chat(state=TrialState(nome="Ana", idade=30, stage="ask_date", asked="date"))
    assert "Ana" not in fresh.say("sou iniciante").text


@pytest.mark.parametrize(
    ("correction", "slot"),
    [
        ("é que prefiro às 20h", ("2026-02-10", "20:00")),
        # Tuesday 17/02/2026 is Carnival (closed): the next open Tuesday is the 24th.
        ("melhor dia 24", ("2026-02-24", "19:00")),
        ("dia 24 às 7h", ("2026-02-24", "07:00")),
    ],
)
def test_after_a_no_a_correction_of_half_the_slot_keeps_the_other_half(
    correction: str, slot: tuple[str, str]
) -> None:
    chat = confirming_chat()
    chat.say("não")
    out = chat.say(correction)
    assert (out.state.desired_date, out.state.desired_time) == slot
    assert out.state.stage == "awaiting_confirmation"
    assert (out.state.declined_date, out.state.declined_time) == (None, None)


def test_a_minors_age_brings_the_guardian_note_once_as_it_is_noted() -> None:
    chat = Chat()
    chat.say("quero marcar a experimental pra minha sobrinha Yasmin")
    out = chat.say("ela tem 14")
    assert "responsável" in out.text and "Yasmin" in out.text
    assert "responsável" not in chat.say("intermediária").text
    alone = Chat().say("oi, tenho 16 anos e queria fazer a aula experimental")
    assert "menores de 18" in alone.text
    assert "responsável" not in Chat().say("oi, tenho 19 anos e queria fazer a aula").text


@pytest.mark.parametrize(
    ("text", "granted"),
    [
        ("dá pra marcar a aula experimental pro meu vizinho?", True),
        ("meu sobrinho Téo tem 10 anos, ele pode fazer a aula?", True),
        ("Tenho 66 anos e queria saber se posso fazer a aula experimental.", True),
        ("eu posso fazer a aula na terça às 19h.", False),
        ("minha afilhada Sol fez 9 anos, ela nunca jogou. pode fazer a aula?", True),
        ("quero marcar a aula experimental", False),
        ("meu filho tem 5 anos, ele pode fazer a aula?", False),
    ],
)
def test_a_booking_asked_as_leave_is_answered_yes_first(text: str, granted: bool) -> None:
    out = Chat().say(text)
    assert out.text.startswith("Pode sim!") is granted


@pytest.mark.parametrize(
    "text", ["qual é o código mesmo?", "me passa o código de novo", "esqueci o código"]
)
def test_the_booking_code_asked_again_is_the_bookings_status(text: str) -> None:
    plan = booked_chat().plan_for(text, intents=["trial"])
    assert plan.tool_call is not None and plan.tool_call.tool == "get_booking"


def test_an_answer_put_off_is_acknowledged_not_counted_nor_handed_off() -> None:
    chat = Chat(state=at_stage("ask_date", asked="date"))
    later = chat.say("ainda não sei o dia, vou ver com meu chefe e te aviso")
    assert later.journal["reply"] == "trial_deferred"
    assert "a terça da aula e o horário" in later.text
    assert later.state.attempts == {} and later.state.asked is None
    for ack in ("ok", "blz"):
        out = chat.say(ack)
        assert out.journal["reply"] == "trial_deferred_ack"
        assert out.state.stage == "ask_date" and out.state.attempts == {}
    booked = chat.say("terça dia 10 às 19h")
    assert booked.state.stage == "awaiting_confirmation"
    assert not booked.state.deferred


@pytest.mark.parametrize(
    ("text", "hour"), [("o mais tarde", "20:00"), ("pode ser a primeira", "07:00")]
)
def test_the_first_or_last_class_said_alone_is_taken(text: str, hour: str) -> None:
    chat = Chat(state=at_stage("ask_date", desired_date="2026-02-10", asked="time"))
    out = chat.say(text)
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-10", hour)


def test_a_first_class_asked_about_is_no_time() -> None:
    chat = Chat(state=at_stage("ask_date", desired_date="2026-02-10", asked="time"))
    assert chat.say("a primeira aula é grátis?").state.desired_time is None


def test_a_field_not_given_is_no_stop_the_reply_says_why_it_is_asked() -> None:
    chat = Chat(state=TrialState(nome="Sônia", asked="idade"))
    out = chat.say("prefiro não informar")
    assert out.state.stage == "collect_client_info" and out.journal["reply"] == "trial_why_idade"
    assert out.state.nome == "Sônia"
    assert chat.say("ok, 47").state.idade == 47


@pytest.mark.parametrize(
    ("asked", "text"),
    [("nome", "mas por que vocês precisam do meu nome?"), ("idade", "pra que serve a idade?")],
)
def test_asking_why_a_field_is_asked_gets_the_reason(asked: str, text: str) -> None:
    state = TrialState(asked="nome") if asked == "nome" else TrialState(nome="Ivo", asked="idade")
    out = Chat(state=state).say(text)
    assert out.journal["reply"] == f"trial_why_{asked}"


def test_the_level_of_a_time_played_follows_the_packs_rule() -> None:
    said = "Lívia, 36, comecei a jogar faz uns 8 meses"
    assert Chat().say(f"quero marcar a experimental. {said}").state.nivel == "iniciante"
    rule = {"iniciante": 0, "intermediario": 6, "avancado": 48}
    config = CONFIG.model_copy(update={"level_by_months_played": rule})
    chat = Chat(config=config)
    assert chat.say(f"quero marcar a experimental. {said}").state.nivel == "intermediario"


def test_a_calm_complaint_mid_booking_is_said_sorry_for_and_the_question_stays() -> None:
    """ "quanta demora" while the name is asked is no failed answer (no handoff for it): the
    reply says sorry, then asks the same question again."""
    chat = Chat()
    chat.say("quero marcar uma aula experimental")
    for _ in range(3):
        out = chat.say("nossa, quanta demora")
        assert (out.state.stage, out.state.asked) == ("collect_client_info", "nome")
        assert out.text.startswith(chat.text("trial_complaint_sorry"))
