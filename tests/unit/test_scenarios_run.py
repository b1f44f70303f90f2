"""The runner's driving logic against a scripted gateway: which replies answer a step, saved
values, settling state, and what a run records."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from orquestra.scenario_run import Runner
from orquestra.scenario_schema import Scenario

NOW = datetime.fromisoformat("2026-02-05T10:00:00-03:00")


class ScriptedGateway:
    """Answers like the API: each ``turns`` entry takes that many pending messages as a turn.

    ``states`` are the conversation snapshots returned in order (the last one repeats), so a
    test can make the state settle a moment after the reply.
    """

    def __init__(self, turns: list[int], states: list[dict[str, Any]] | None = None) -> None:
        self.turns = list(turns)
        self.states = states or [{}]
        self.pending: list[tuple[str, str]] = []
        self.journal_entries: list[dict[str, Any]] = []
        self.stream: list[dict[str, Any]] = []
        self.posted: list[dict[str, Any]] = []

    def post(self, conversation_id: str, text: str, **fields: Any) -> tuple[str, bool]:
        message_id = f"m{len(self.posted)}"
        self.posted.append({"text": text, **fields})
        self.pending.append((message_id, text))
        return message_id, False

    def replies(self, conversation_id: str, after: str, wait_s: float) -> tuple[list, str]:
        if self.pending and self.turns:
            size = self.turns.pop(0)
            taken, self.pending = self.pending[:size], self.pending[size:]
            turn_id = f"t{len(self.stream)}"
            self.journal_entries.append(
                {
                    "turn_id": turn_id,
                    "event": "turn.started",
                    "message_ids": [m for m, _ in taken],
                    "messages": [t for _, t in taken],
                }
            )
            self.stream.append(
                {"turn_id": turn_id, "text": "ok: " + " / ".join(t for _, t in taken)}
            )
        index = int(after.split("-")[0])
        return self.stream[index:], f"{len(self.stream)}-0"

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]

    def journal(self, conversation_id: str) -> list[dict[str, Any]]:
        return list(self.journal_entries)


def scenario(**fields: Any) -> Scenario:
    return Scenario.model_validate({"name": "s", **fields})


def run(gateway: ScriptedGateway, sc: Scenario, **kwargs: Any):
    runner = Runner(gateway, reply_timeout_s=0.5, **kwargs)  # type: ignore[arg-type]
    return runner.run(sc, "s.yaml", now=NOW)


def test_a_burst_split_over_two_turns_waits_for_both_replies() -> None:
    gateway = ScriptedGateway(turns=[1, 2])
    sc = scenario(steps=[{"say": ["a", "b", "c"], "expect": {"reply": ["ok: a", "ok: b / c"]}}])
    result = run(gateway, sc)
    assert result.passed, result.steps
    assert result.steps[0].replies == ["ok: a", "ok: b / c"]
    assert [p["sent_at"] for p in gateway.posted] == [NOW, NOW, NOW]


def test_a_step_without_an_answer_fails_with_the_timeout() -> None:
    result = run(ScriptedGateway(turns=[]), scenario(steps=[{"say": "oi"}, {"say": "tchau"}]))
    assert not result.passed
    assert result.steps[0].error == "no reply to every message within 0s"
    assert len(result.steps) == 1


def test_saved_values_are_used_by_later_steps() -> None:
    gateway = ScriptedGateway(turns=[1, 1], states=[{"trial": {"booking_id": "AE-1"}}])
    sc = scenario(
        steps=[
            {"say": "sim", "save": {"code": "trial.booking_id"}},
            {"say": "cancelar {code}", "expect": {"reply": "cancelar {code}"}},
        ]
    )
    assert run(gateway, sc).passed
    assert gateway.posted[1]["text"] == "cancelar AE-1"


def test_saving_an_empty_path_fails_the_step() -> None:
    sc = scenario(steps=[{"say": "sim", "save": {"code": "trial.booking_id"}}])
    result = run(ScriptedGateway(turns=[1]), sc)
    assert result.steps[0].error == "cannot save code: trial.booking_id is empty"


def test_state_expectations_wait_for_the_state_to_settle() -> None:
    states = [{"mode": {"mode": "oferta"}}, {"mode": {"mode": "followup"}}]
    sc = scenario(steps=[{"say": "sim", "expect": {"state": {"mode.mode": "followup"}}}])
    assert run(ScriptedGateway(turns=[1], states=list(states)), sc, settle_s=1.0).passed
    impatient = run(ScriptedGateway(turns=[1], states=list(states)), sc, settle_s=0.0)
    assert [m.kind for m in impatient.steps[0].mismatches] == ["state"]


def test_defaults_of_the_scenario_reach_every_message() -> None:
    gateway = ScriptedGateway(turns=[1, 1])
    sc = scenario(
        origin="campaign:x",
        campaign_mode="oferta",
        start="2026-02-05T10:00:00-03:00",
        steps=[{"say": "oi"}, {"say": "e aí", "after": "8d", "origin": "inbound"}],
    )
    assert run(gateway, sc).passed
    first, second = gateway.posted
    assert (first["origin"], first["campaign_mode"]) == ("campaign:x", "oferta")
    assert second["origin"] == "inbound"
    assert (second["sent_at"] - first["sent_at"]).days == 8


def test_a_burst_with_a_gap_is_typed_that_far_apart() -> None:
    gateway = ScriptedGateway(turns=[1, 1, 1])
    pauses: list[float] = []
    sc = scenario(steps=[{"say": ["oi", "queria saber", "quanto custa"], "gap": "1.5s"}])
    result = Runner(gateway, reply_timeout_s=0.5, sleep=pauses.append).run(  # type: ignore[arg-type]
        sc, "s.yaml", now=NOW
    )
    assert result.passed
    assert pauses == [1.5, 1.5]
    assert [(p["sent_at"] - NOW).total_seconds() for p in gateway.posted] == [0, 1.5, 3.0]
    assert result.steps[0].reply_turns == ["t0", "t1", "t2"]


def test_keep_going_runs_the_steps_after_a_failure_and_records_their_state() -> None:
    gateway = ScriptedGateway(turns=[1, 1], states=[{"trial": {"stage": "ask_date"}}])
    sc = scenario(steps=[{"say": "a", "expect": {"reply": "nope"}}, {"say": "b"}])
    stopped = run(ScriptedGateway(turns=[1, 1]), sc)
    assert len(stopped.steps) == 1
    result = run(gateway, sc, keep_going=True)
    assert [s.passed for s in result.steps] == [False, True]
    assert result.steps[1].state == {"trial": {"stage": "ask_date"}}
