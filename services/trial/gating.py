"""A tool call proposed by a branch of the trial flow, through the tool gate.

Before the booking (creating it) and after it (status, cancel, reschedule) both propose calls:
the gate approves one (the shell runs it), asks the person to confirm it first or refuses it,
and each of those becomes a reply here, the same way for every branch.
"""

from __future__ import annotations

from typing import Any

from services.trial.models import ContextState, PendingTool, ToolCall, TrialState
from services.trial.tool_gate import GateDecision, gate_tool_call
from services.trial.turn import Reply, TrialTurn


def id_args(t: TrialTurn) -> dict[str, Any]:
    """The booking id the person typed, passed explicitly (the gate never overrides it)."""
    return {"booking_id": t.code} if t.code else {}


def ask_gate(
    t: TrialTurn,
    ctx: ContextState,
    call: ToolCall,
    *,
    confirmed: bool,
    question_values: dict[str, Any] | None = None,
) -> GateDecision:
    return gate_tool_call(
        call,
        context=ctx,
        now=t.now,
        config=t.config.gate,
        allowed_tools=t.allowed_tools,
        confirmed=confirmed,
        pack=t.pack,
        seed=t.seed,
        mode=t.mode,
        conversation_id=t.conversation_id,
        question_values=question_values,
    )


def after_gate(t: TrialTurn, state: TrialState, ctx: ContextState, decision: GateDecision) -> Reply:
    if decision.outcome == "approved":
        return Reply(state, ctx, gate=decision, tool=decision.call)
    if decision.outcome == "needs_confirmation":
        pending = PendingTool(
            tool=decision.call.tool,
            args=decision.call.args,
            question=decision.message or "",
            asked_at=t.now,
        )
        return Reply(
            state.model_copy(update={"pending_tool": pending}),
            ctx,
            text=decision.message,
            asks="confirmation",
            gate=decision,
        )
    return Reply(state, ctx, text=decision.message, error=decision.refusal, gate=decision)
