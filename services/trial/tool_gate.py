"""The tool gate: every booking tool call passes here before it may run (pure).

In order, the gate
1. checks the mode's capabilities: a tool outside ``allowed_tools`` is refused and a violation
   record is returned with the fields of the mode-router seed's ``log_violation_attempt``
   (conversa_id, mode, violation_type="tool", attempted);
2. injects ids the call left empty from the conversation's ``context`` slice, following the
   pack's ``injections`` rules (``booking_id`` ← ``active_booking_id``). An explicit value is
   never overridden, and a context entry older than the pack's TTL (on Turn.now) is absent;
3. applies the pack's defaults to arguments still empty (priority: explicit > context > default);
4. refuses with the pack's clear message when an id can be resolved from nowhere ("Não encontrei
   um agendamento ativo...") — the tool is not run;
5. validates the arguments against the tool's pydantic contract;
6. asks for confirmation before sensitive tools (those with a ``confirm_texts`` entry) unless
   the person already said yes: the outcome is ``needs_confirmation`` with the question.

Every injection and default is reported in the decision, for the conversation's journal.
"""

from __future__ import annotations

from collections.abc import Set
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from services.trial.models import ContextState, Nivel, ToolCall
from services.trial.replies import TextSource
from shared.capabilities import violation_record
from shared.trial.config import GateConfig, ToolName


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateBookingArgs(_Contract):
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    time: str = Field(pattern=r"^\d{2}:\d{2}$")
    nome: str = Field(min_length=1)
    idade: int
    nivel: Nivel
    # The turn id: a redelivered turn books once.
    idempotency_key: str = Field(min_length=1)


class GetBookingArgs(_Contract):
    booking_id: str = Field(min_length=1)


class RescheduleBookingArgs(_Contract):
    booking_id: str = Field(min_length=1)
    new_date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    new_time: str = Field(pattern=r"^\d{2}:\d{2}$")


class CancelBookingArgs(_Contract):
    booking_id: str = Field(min_length=1)
    reason: str = Field(min_length=1)


TOOL_CONTRACTS: dict[ToolName, type[_Contract]] = {
    "create_booking": CreateBookingArgs,
    "get_booking": GetBookingArgs,
    "reschedule_booking": RescheduleBookingArgs,
    "cancel_booking": CancelBookingArgs,
}


class Injection(BaseModel):
    """One argument the gate filled from the context slice."""

    tool: ToolName
    arg: str
    context_key: str
    value: str
    set_at: datetime


Refusal = Literal["not_allowed", "missing_context", "invalid_args"]


class GateDecision(BaseModel):
    outcome: Literal["approved", "needs_confirmation", "refused"]
    # Arguments after injection and defaults (validated unless refused).
    call: ToolCall
    # The question (needs_confirmation) or the refusal said to the person.
    message: str | None = None
    refusal: Refusal | None = None
    injections: list[Injection] = Field(default_factory=list)
    defaults_applied: dict[str, Any] = Field(default_factory=dict)
    violation: dict[str, Any] | None = None

    def journal(self) -> dict[str, Any]:
        return {
            "tool": self.call.tool,
            "outcome": self.outcome,
            "refusal": self.refusal,
            "injections": [i.model_dump(mode="json") for i in self.injections],
            "defaults_applied": self.defaults_applied,
            "violation": self.violation,
        }


def _empty(value: Any) -> bool:
    return value is None or value == ""


def gate_tool_call(
    call: ToolCall,
    *,
    context: ContextState,
    now: datetime,
    config: GateConfig,
    allowed_tools: Set[str] | None,
    confirmed: bool,
    pack: TextSource,
    seed: str,
    mode: str | None = None,
    conversation_id: str = "",
    question_values: dict[str, Any] | None = None,
) -> GateDecision:
    """Decide whether ``call`` may run now, with which arguments (steps in the module doc).

    ``allowed_tools`` None means the current mode restricts no tool; ``confirmed`` is True when
    the person already answered yes to this call's confirmation question.
    """
    if allowed_tools is not None and call.tool not in allowed_tools:
        return GateDecision(
            outcome="refused",
            call=call,
            refusal="not_allowed",
            message=pack.text(config.not_allowed_text, seed=seed),
            violation=violation_record(conversation_id, mode or "", "tool", call.tool),
        )

    args = dict(call.args)
    injections: list[Injection] = []
    unresolved: list[str] = []
    ttl = timedelta(minutes=config.context_ttl_minutes)
    for arg, key in config.injections.get(call.tool, {}).items():
        if not _empty(args.get(arg)):
            continue
        entry = context.fresh(key, now, ttl)
        if entry is None:
            unresolved.append(key)
            continue
        args[arg] = entry.value
        injections.append(
            Injection(
                tool=call.tool, arg=arg, context_key=key, value=entry.value, set_at=entry.set_at
            )
        )

    applied = {
        arg: value
        for arg, value in config.defaults.get(call.tool, {}).items()
        if _empty(args.get(arg))
    }
    args.update(applied)
    resolved = ToolCall(tool=call.tool, args=args)

    def refuse(refusal: Refusal, text_key: str) -> GateDecision:
        return GateDecision(
            outcome="refused",
            call=resolved,
            refusal=refusal,
            message=pack.text(text_key, seed=seed),
            injections=injections,
            defaults_applied=applied,
        )

    if unresolved:
        return refuse("missing_context", config.missing_context_texts[unresolved[0]])
    try:
        valid = TOOL_CONTRACTS[call.tool].model_validate(args)
    except ValidationError:
        return refuse("invalid_args", config.invalid_args_text)
    resolved = ToolCall(tool=call.tool, args=valid.model_dump())

    question_key = config.confirm_texts.get(call.tool)
    if question_key is not None and not confirmed:
        values = {**resolved.args, **(question_values or {})}
        return GateDecision(
            outcome="needs_confirmation",
            call=resolved,
            message=pack.text(question_key, seed=seed, **values),
            injections=injections,
            defaults_applied=applied,
        )
    return GateDecision(
        outcome="approved", call=resolved, injections=injections, defaults_applied=applied
    )
