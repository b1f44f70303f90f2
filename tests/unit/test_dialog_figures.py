"""The dialog evaluation's figures from finished runs: goal reached, turns to book, loops and
questions left unanswered, per dialog and for the corpus."""

from __future__ import annotations

from typing import Any

from orquestra.dialog_figures import (
    as_json,
    asked_loops,
    dialog_line,
    figures,
    repeated_replies,
    totals,
)
from orquestra.scenario_check import Mismatch, ScenarioResult, StepResult
from orquestra.scenario_schema import Scenario

BOOKING = Scenario.model_validate(
    {
        "name": "parent books for a child",
        "persona": "mother",
        "goal": "booked",
        "steps": [
            {"say": "quero marcar pra minha filha"},
            {"say": "Sofia, 9 anos. vcs emprestam raquete?", "expect": {"reply": "raquete"}},
            {"say": "terca 19h"},
            {
                "say": "sim",
                "expect": {"state": {"trial.stage": "booked", "trial.nome": "Sofia"}},
            },
        ],
    }
)


def step(index: int, *, stage: str | None = None, turn: str | None = None, **kw: Any):
    state = {"trial": {"stage": stage}} if stage else {}
    turn = turn or f"t{index}"
    replies = kw.pop("replies", [f"reply {index}"])
    return StepResult(index, ["msg"], replies, reply_turns=[turn] * len(replies), state=state, **kw)


def result(steps: list[StepResult], scenario: Scenario = BOOKING) -> ScenarioResult:
    return ScenarioResult("dialogs/parents.yaml", scenario, "scn-x", steps=steps)


def decided(turn: str, asked: str | None) -> dict[str, Any]:
    return {"event": "trial.decided", "turn_id": turn, "asked": asked}


def test_a_dialog_that_held_everywhere_reached_its_goal_and_booked_at_its_turn() -> None:
    done = result(
        [step(0), step(1), step(2, stage="awaiting_confirmation"), step(3, stage="booked")]
    )
    d = figures(done, [])
    assert d.reached and d.booked and d.turns_to_book == 4
    assert (d.questions, d.unanswered, d.loops, d.problems) == (1, [], [], [])
    assert dialog_line(d) == (
        "✓ parent books for a child (goal booked, booked at turn 4/4, loops 0, unanswered 0/1)"
    )


def test_a_missed_question_is_unanswered_and_the_goal_is_not_reached() -> None:
    missed = Mismatch("reply", "raquete", "/raquete/", "Qual a sua idade?")
    done = result(
        [
            step(0),
            step(1, mismatches=[missed], replies=["Qual a sua idade?"]),
            step(2),
            step(3, stage="booked"),
        ]
    )
    d = figures(done, [])
    assert not d.reached and d.turns_to_book == 4
    (miss,) = d.unanswered
    assert (miss.step, miss.pattern, miss.reply) == (2, "raquete", "Qual a sua idade?")


def test_a_wrong_final_state_is_a_problem_not_an_unanswered_question() -> None:
    wrong = Mismatch("state", "trial.nome", '"Sofia"', '"Minha Filha"')
    done = result([step(0), step(1), step(2), step(3, stage="booked", mismatches=[wrong])])
    d = figures(done, [])
    assert not d.reached and d.unanswered == []
    assert d.problems == [
        'step 4: state trial.nome: expected "Sofia", got "Minha Filha"',
    ]


def test_a_step_without_a_reply_leaves_its_questions_unanswered() -> None:
    done = result([step(0), step(1, error="no reply", replies=[]), step(2), step(3)])
    d = figures(done, [])
    assert [u.pattern for u in d.unanswered] == ["raquete"]
    assert d.problems == ["step 2: no reply"] and d.turns_to_book is None


def test_a_run_cut_short_never_reaches_its_goal_and_still_counts_the_questions() -> None:
    d = figures(result([step(0)]), [])
    assert not d.reached and d.questions == 1


def test_the_same_question_three_times_in_a_row_is_a_loop() -> None:
    entries = [
        decided("t0", "nome"),
        {"event": "faq.answered", "turn_id": "t1"},
        decided("t1", "nome"),
        decided("t2", "nome"),
        decided("t3", "idade"),
    ]
    assert asked_loops(entries) == [("asked nome 3x", {"t0", "t1", "t2"})]
    twice = [decided("t0", "nome"), decided("t1", "nome"), decided("t2", "idade")]
    assert asked_loops(twice) == []
    interrupted = [decided("t0", "date"), decided("t1", None), decided("t2", "date")]
    assert asked_loops([*interrupted, decided("t3", "date")]) == []


def test_the_same_reply_three_times_is_a_loop_unless_inside_an_asked_loop() -> None:
    menu = "Não consegui entender sua escolha. Responda 1 ou 2."
    replies = [
        ("t0", menu),
        ("t1", "Ok!"),
        ("t2", "nao consegui entender  sua escolha. responda 1 ou 2."),
        ("t3", menu),
    ]
    assert repeated_replies(replies, covered=set()) == [(menu, 3)]
    assert repeated_replies(replies, covered={"t0", "t2", "t3"}) == []
    assert repeated_replies(replies[:3], covered=set()) == []


def test_loops_of_a_dialog_count_an_asked_loop_once() -> None:
    ask = "Qual é o seu nome?"
    done = result([step(i, replies=[ask]) for i in range(4)])
    entries = [decided(f"t{i}", "nome") for i in range(4)]
    assert figures(done, entries).loops == ["asked nome 4x"]
    assert figures(done, []).loops == [f'same reply 4x: "{ask}"']


def test_totals_over_the_corpus() -> None:
    booked = figures(result([step(0), step(1), step(2), step(3, stage="booked")]), [])
    slow = figures(result([step(0), step(1), step(2, stage="booked"), step(3, stage="booked")]), [])
    answered_scenario = BOOKING.model_copy(update={"goal": "answered", "name": "faq"})
    missed = Mismatch("reply", "raquete", "/raquete/", "?")
    lost = figures(
        result([step(0), step(1, mismatches=[missed]), step(2), step(3)], answered_scenario),
        [decided(f"t{i}", "nome") for i in range(3)],
    )
    t = totals([booked, slow, lost])
    assert (t.dialogs, t.reached, t.reached_pct) == (3, 2, 66.7)
    assert (t.booking_dialogs, t.booked_right) == (2, 2)
    assert (t.turns_to_book_median, t.turns_to_book_max) == (3.5, 4)
    assert (t.loops, t.dialogs_with_loops) == (1, 1)
    assert (t.questions, t.unanswered) == (3, 1)
    report = as_json([lost])
    assert report["totals"]["unanswered"] == 1
    assert report["dialogs"][0]["unanswered"][0]["pattern"] == "raquete"
    assert report["dialogs"][0]["goal"] == "answered"


def test_an_empty_corpus_has_no_figures_to_divide() -> None:
    t = totals([])
    assert (t.dialogs, t.reached_pct, t.turns_to_book_median) == (0, 0.0, None)


def triaged(turn: str, clarification: str | None) -> dict[str, Any]:
    return {"event": "triage.decided", "turn_id": turn, "clarification": clarification}


def test_a_clarification_menu_asked_three_times_in_a_row_is_a_loop() -> None:
    entries = [
        {"event": "turn.started", "turn_id": "t0"},
        triaged("t0", "n1_menu"),
        triaged("t1", "n1_invalid"),
        triaged("t2", "n1_invalid"),
    ]
    assert asked_loops(entries) == [("asked menu 3x", {"t0", "t1", "t2"})]
    chosen = [triaged("t0", "n1_menu"), triaged("t1", "n1_chosen"), triaged("t2", "n1_menu")]
    assert asked_loops([*chosen, triaged("t3", "n1_invalid")]) == []


def test_the_trial_question_wins_over_triage_in_the_same_turn() -> None:
    entries = [
        triaged("t0", "n1_chosen"),
        decided("t0", "nome"),
        decided("t1", "nome"),
        triaged("t2", None),
        decided("t2", "nome"),
    ]
    assert asked_loops(entries) == [("asked nome 3x", {"t0", "t1", "t2"})]
