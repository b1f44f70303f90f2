"""Driving a scenario through the HTTP API: send, wait for the answer, observe, check.

Thin on purpose: every judgement is in ``scenario_check``. Each scenario gets a fresh
conversation id, so runs never see each other's state. A step's messages are posted back to
back (a burst), then replies are read until every message of the step is part of a turn that
was answered (the journal's ``turn.started`` entries say which messages each turn took).

A step with a ``gap`` posts its messages that far apart in real time (a person typing a burst),
each with its business time advanced as much. ``keep_going`` runs every step even after one
failed (the dialog evaluation measures whole conversations).

State and journal expectations are checked again for a short while when they fail: domain
events (a booking moving the funnel to ``followup``) are decided after the reply went out, so
the state settles a moment later. Reply expectations are checked once.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from orquestra.client import ApiError, Client
from orquestra.scenario_check import (
    MISSING,
    Observation,
    ScenarioResult,
    StepResult,
    check_step,
    resolve_path,
)
from orquestra.scenario_schema import Scenario, Step, message_times, with_variables

REPLY_TIMEOUT_S = 30.0
SETTLE_S = 3.0
SETTLE_POLL_S = 0.1


def conversation_id_for(scenario: Scenario) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", scenario.name.lower()).strip("-")[:40] or "scenario"
    return f"scn-{slug}-{uuid.uuid4().hex[:8]}"


def _covered(entries: list[Mapping[str, Any]], turn_ids: set[str]) -> set[str]:
    """Message ids taken by the answered turns."""
    covered: set[str] = set()
    for entry in entries:
        if entry.get("event") == "turn.started" and entry.get("turn_id") in turn_ids:
            covered.update(str(m) for m in entry.get("message_ids") or [])
    return covered


def await_replies(
    client: Client, cid: str, cursor: str, ids: set[str], timeout_s: float
) -> tuple[list[dict[str, Any]], str, bool]:
    """Replies after ``cursor`` until every message in ``ids`` was part of an answered turn.

    Returns the replies, the new cursor and whether all messages were answered in time.
    """
    deadline = time.monotonic() + timeout_s
    replies: list[dict[str, Any]] = []
    while (remaining := deadline - time.monotonic()) > 0:
        batch, cursor = client.replies(cid, cursor, wait_s=min(remaining, 20.0))
        if not batch:
            continue
        replies += batch
        turn_ids = {str(r.get("turn_id")) for r in replies}
        if ids <= _covered(client.journal(cid), turn_ids):
            return replies, cursor, True
    return replies, cursor, False


def _save(save: dict[str, str], state: Mapping[str, Any], variables: dict[str, str]) -> str | None:
    """Remember the step's ``save`` values; an error message when a path holds nothing."""
    for name, path in save.items():
        value = resolve_path(state, path)
        if value is MISSING or value is None:
            return f"cannot save {name}: {path} is empty"
        variables[name] = str(value)
    return None


class Runner:
    """Runs scenarios against one gateway."""

    def __init__(
        self,
        client: Client,
        *,
        reply_timeout_s: float = REPLY_TIMEOUT_S,
        settle_s: float = SETTLE_S,
        keep_going: bool = False,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.reply_timeout_s = reply_timeout_s
        self.settle_s = settle_s
        self.keep_going = keep_going
        # Waits out a burst's gaps: the pause is what is being simulated, not an event.
        self.sleep = sleep

    def run(self, scenario: Scenario, source: str, *, now: datetime) -> ScenarioResult:
        """Run the steps until one fails (every step with ``keep_going``); ``now`` is the clock
        when the scenario has no start."""
        began = time.monotonic()
        result = ScenarioResult(source, scenario, conversation_id_for(scenario))
        cursor = "0-0"
        variables: dict[str, str] = {}
        try:
            for index, (step, at) in enumerate(
                zip(scenario.steps, message_times(scenario, now), strict=True)
            ):
                concrete = with_variables(step, variables)
                outcome, cursor, state = self._step(scenario, index, concrete, at, result, cursor)
                result.steps.append(outcome)
                if outcome.passed:
                    outcome.error = _save(step.save, state, variables)
                if not outcome.passed and not self.keep_going:
                    break
        except ApiError as exc:
            result.error = str(exc)
        result.seconds = time.monotonic() - began
        return result

    def _step(
        self,
        scenario: Scenario,
        index: int,
        step: Step,
        at: datetime,
        result: ScenarioResult,
        cursor: str,
    ) -> tuple[StepResult, str, dict[str, Any]]:
        cid = result.conversation_id
        outcome = StepResult(index=index, messages=list(step.say))
        ids = set()
        for position, (text, offset) in enumerate(
            zip(step.say, step.message_offsets(), strict=True)
        ):
            if position and step.gap is not None:
                self.sleep(step.gap.total_seconds())
            message_id, _ = self.client.post(
                cid,
                text,
                sent_at=at + offset,
                origin=step.origin or scenario.origin,
                campaign_mode=step.campaign_mode or scenario.campaign_mode,
            )
            ids.add(message_id)
        replies, cursor, answered = await_replies(
            self.client, cid, cursor, ids, self.reply_timeout_s
        )
        outcome.replies = [str(r.get("text", "")) for r in replies]
        outcome.reply_turns = [str(r.get("turn_id")) for r in replies]
        if not answered:
            outcome.error = f"no reply to every message within {self.reply_timeout_s:.0f}s"
            return outcome, cursor, {}
        turn_ids = {str(r["turn_id"]) for r in replies}
        deadline = time.monotonic() + self.settle_s
        while True:
            seen = Observation(
                replies=outcome.replies,
                state=self.client.conversation(cid),
                entries=[e for e in self.client.journal(cid) if e.get("turn_id") in turn_ids],
            )
            outcome.mismatches = check_step(step.expect, seen)
            settling = any(m.kind not in ("reply", "reply_not") for m in outcome.mismatches)
            if not settling or time.monotonic() >= deadline:
                outcome.state = dict(seen.state)
                return outcome, cursor, outcome.state
            time.sleep(SETTLE_POLL_S)
