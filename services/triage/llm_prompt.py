"""The LLM side of triage, minus the I/O: the prompt, and turning the answer into a result.

The shell sends :func:`llm_messages` through ``shared.llm.LLMClient.structured(...,
LLMTriage)`` and passes :func:`from_llm` of the answer to ``triage_turn``; on ``LLMError`` it
passes nothing and the rules decide.
"""

from __future__ import annotations

from services.triage.config import TriageConfig
from services.triage.models import LLMTriage, TriageResult
from services.triage.rules import active_stage


def llm_messages(text: str, *, trial_stage: str | None, config: TriageConfig) -> list[dict]:
    """System prompt plus the message, with the booking context line when one is active."""
    prompt = config.llm
    stage = active_stage(trial_stage, config)
    user = prompt.user.format(text=text)
    if stage:
        user = f"{prompt.context.format(stage=stage)}\n\n{user}"
    return [{"role": "system", "content": prompt.system}, {"role": "user", "content": user}]


def from_llm(output: LLMTriage, *, trial_stage: str | None, config: TriageConfig) -> TriageResult:
    """The LLM's answer held to the same rules as the rules' answer.

    An intent the pack does not define is dropped; ``general`` is dropped when a specialist
    intent came with it (general is always alone),
    and mid-booking a message nobody else claims goes to the booking flow, whatever the LLM
    said: routing decisions stay deterministic.
    """
    known = {*config.intents, "general"}
    intents = [intent for intent in dict.fromkeys(output.intents) if intent in known]
    specialist = [intent for intent in intents if intent != "general"]
    if specialist:
        intents = specialist
    if active_stage(trial_stage, config) and not specialist:
        intents = [config.active_context.intent]
    response = output.general_response if intents == ["general"] else None
    return TriageResult(
        intents=intents,
        general_response=response,
        confidences=dict.fromkeys(intents, 1.0),
        source="llm",
        reason=None if intents else "no_evidence",
    )
