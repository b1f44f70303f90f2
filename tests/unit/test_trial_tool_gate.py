"""The tool gate: the seed's four scenarios in this domain, plus TTL, defaults, confirmation and
capabilities."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from services.trial.models import ContextState, ToolCall
from services.trial.tool_gate import GateDecision, gate_tool_call
from shared.pack import load_pack
from shared.trial.config import GateConfig, load_trial_config

TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)
PACK = load_pack("ctsmash")
GATE = load_trial_config(PACK).gate
TTL = timedelta(minutes=GATE.context_ttl_minutes)
ALL_TOOLS = {"create_booking", "get_booking", "reschedule_booking", "cancel_booking"}


def gate(
    call: ToolCall,
    context: ContextState,
    *,
    config: GateConfig = GATE,
    allowed: set[str] | None = None,
    confirmed: bool = False,
    now: datetime = NOW,
) -> GateDecision:
    return gate_tool_call(
        call,
        context=context,
        now=now,
        config=config,
        allowed_tools=allowed,
        confirmed=confirmed,
        pack=PACK,
        seed="turn-1",
        mode="oferta",
        conversation_id="conv-1",
        question_values={
            "data": "terça, 10/02",
            "hora": "19:00",
            "data_antiga": "terça, 03/02",
            "hora_antiga": "07:00",
        },
    )


def with_booking(booking_id: str = "AE-7K3Q9P", set_at: datetime = NOW) -> ContextState:
    return ContextState().with_value("active_booking_id", booking_id, set_at)


# Seed test 1: the id is injected from the context


def test_booking_id_is_injected_from_context() -> None:
    decision = gate(ToolCall(tool="get_booking"), with_booking())
    assert decision.outcome == "approved"
    assert decision.call.args == {"booking_id": "AE-7K3Q9P"}
    assert len(decision.injections) == 1
    injection = decision.injections[0]
    assert (injection.arg, injection.context_key, injection.value) == (
        "booking_id",
        "active_booking_id",
        "AE-7K3Q9P",
    )
    assert decision.journal()["injections"][0]["set_at"] == NOW.isoformat()


@pytest.mark.parametrize("empty", [None, ""])
def test_an_empty_id_counts_as_missing(empty: str | None) -> None:
    decision = gate(ToolCall(tool="get_booking", args={"booking_id": empty}), with_booking())
    assert decision.call.args["booking_id"] == "AE-7K3Q9P"


# Seed test 2: a second context id, injected into the tools that need it


def test_a_second_context_id_is_injected_by_its_own_rule() -> None:
    config = GATE.model_copy(
        update={
            "injections": {
                **GATE.injections,
                "create_booking": {"idempotency_key": "active_turn_id"},
            },
            "missing_context_texts": {
                **GATE.missing_context_texts,
                "active_turn_id": "trial_tool_invalid",
            },
        }
    )
    context = with_booking().with_value("active_turn_id", "turn-9", NOW)
    args = {
        "date": "2026-02-10",
        "time": "19:00",
        "nome": "João",
        "idade": 27,
        "nivel": "iniciante",
    }
    create = gate(ToolCall(tool="create_booking", args=args), context, config=config)
    assert create.outcome == "approved"
    assert create.call.args["idempotency_key"] == "turn-9"
    assert [i.context_key for i in create.injections] == ["active_turn_id"]
    status = gate(ToolCall(tool="get_booking"), context, config=config)
    assert [i.context_key for i in status.injections] == ["active_booking_id"]


# Seed test 3: no context → a clear message, the tool is not run


def test_no_context_refuses_with_a_clear_message() -> None:
    decision = gate(ToolCall(tool="cancel_booking"), ContextState())
    assert decision.outcome == "refused"
    assert decision.refusal == "missing_context"
    assert decision.message is not None
    assert decision.message.startswith("Não encontrei um agendamento ativo")
    assert decision.injections == []


# Seed test 4: an explicit value is never overridden


def test_an_explicit_id_is_not_overridden() -> None:
    decision = gate(
        ToolCall(tool="get_booking", args={"booking_id": "AE-456XYZ"}), with_booking("AE-123ABC")
    )
    assert decision.call.args == {"booking_id": "AE-456XYZ"}
    assert decision.injections == []


# TTL on business time


def test_context_older_than_its_ttl_is_absent() -> None:
    old = with_booking(set_at=NOW - TTL - timedelta(seconds=1))
    decision = gate(ToolCall(tool="get_booking"), old)
    assert decision.outcome == "refused"
    assert decision.refusal == "missing_context"


def test_context_within_its_ttl_is_used() -> None:
    recent = with_booking(set_at=NOW - TTL + timedelta(seconds=1))
    assert gate(ToolCall(tool="get_booking"), recent).outcome == "approved"


# Defaults, contracts, confirmation, capabilities


def test_pack_default_applies_without_overriding_an_explicit_value() -> None:
    defaulted = gate(ToolCall(tool="cancel_booking"), with_booking(), confirmed=True)
    assert defaulted.call.args["reason"] == "pedido_do_cliente"
    assert defaulted.defaults_applied == {"reason": "pedido_do_cliente"}
    explicit = gate(
        ToolCall(tool="cancel_booking", args={"reason": "viagem"}), with_booking(), confirmed=True
    )
    assert explicit.call.args["reason"] == "viagem"
    assert explicit.defaults_applied == {}


def test_sensitive_tools_need_a_yes_first() -> None:
    asked = gate(ToolCall(tool="cancel_booking"), with_booking())
    assert asked.outcome == "needs_confirmation"
    assert (
        asked.message
        == "Quer mesmo cancelar sua aula experimental de terça, 10/02 às 19:00? (sim/não)"
    )
    assert asked.call.args == {"booking_id": "AE-7K3Q9P", "reason": "pedido_do_cliente"}
    move = ToolCall(tool="reschedule_booking", args={"new_date": "2026-02-17", "new_time": "18:00"})
    assert gate(move, with_booking()).outcome == "needs_confirmation"
    assert gate(move, with_booking(), confirmed=True).outcome == "approved"


def test_arguments_breaking_the_contract_are_refused() -> None:
    bad = ToolCall(tool="reschedule_booking", args={"new_date": "17/02", "new_time": "18:00"})
    decision = gate(bad, with_booking(), confirmed=True)
    assert decision.outcome == "refused"
    assert decision.refusal == "invalid_args"
    unknown = ToolCall(tool="get_booking", args={"booking_id": "AE-7K3Q9P", "extra": 1})
    assert gate(unknown, with_booking()).refusal == "invalid_args"


def test_a_tool_outside_the_mode_is_refused_with_a_violation_record() -> None:
    decision = gate(ToolCall(tool="cancel_booking"), with_booking(), allowed={"get_booking"})
    assert decision.outcome == "refused"
    assert decision.refusal == "not_allowed"
    assert decision.violation == {
        "event": "violation_attempt",
        "conversa_id": "conv-1",
        "mode": "oferta",
        "violation_type": "tool",
        "attempted": "cancel_booking",
    }
    assert decision.injections == []


def test_every_booking_tool_allowed_passes_the_capability_check() -> None:
    decision = gate(ToolCall(tool="get_booking"), with_booking(), allowed=ALL_TOOLS)
    assert decision.outcome == "approved"


def test_the_pack_must_say_what_to_answer_for_each_context_key() -> None:
    with pytest.raises(ValidationError):
        GateConfig.model_validate(
            {
                "context_ttl_minutes": 10,
                "injections": {"get_booking": {"booking_id": "active_booking_id"}},
                "not_allowed_text": "x",
                "invalid_args_text": "y",
            }
        )
