"""``orquestra explain``'s rendering of a journal: turns, steps, latencies, both languages."""

from __future__ import annotations

from orquestra.timeline import build_timeline, explain_entry, render_timeline
from services.registry import SPECS

T = "2026-02-05T13:00:00"


def entry(ms: int, service: str, event: str, turn: str | None = "t1", **fields: object) -> dict:
    at = f"{T}.{ms:03d}+00:00" if ms < 1000 else f"2026-02-05T13:00:{ms // 1000:02d}.000+00:00"
    return {"at": at, "service": service, "turn_id": turn, "event": event, **fields}


JOURNAL = [
    entry(
        0,
        "gateway",
        "turn.started",
        seq=1,
        messages=["oi", "quero agendar"],
        message_ids=["m1", "m2"],
        now="2026-02-05T10:00:00-03:00",
    ),
    entry(
        40,
        "merger",
        "merge.complete",
        sources=["triage", "trial"],
        missing=[],
        dropped=[],
        bubbles=1,
    ),
    entry(
        5,
        "triage",
        "triage.decided",
        intents=["trial"],
        routes=["trial"],
        source="rules",
        confidences={"trial": 0.9},
        clarification=None,
        forced_by_clarification=False,
    ),
    entry(
        12,
        "mode_router",
        "MODE_DECISION",
        current_mode="discovery",
        final_mode="discovery",
        validator_decision="pending",
        detected_intent="interesse_vaga",
        intent_confidence=0.75,
        intent_evidence="interesse: 'agendar'",
        proposed_mode="oferta",
        trigger="intent",
        transition_reason="needs confirmation",
        pending_transition="oferta",
        bootstrapped=True,
        timestamp="x",
        conversa_id="c",
        capabilities_version="v1",
    ),
    entry(
        20,
        "trial",
        "trial.decided",
        stage_before="booked",
        stage_after="booked",
        validation=None,
        reply="trial_cancel_confirm",
        tool_result=None,
        gate={
            "tool": "cancel_booking",
            "outcome": "needs_confirmation",
            "refusal": None,
            "injections": [
                {"arg": "booking_id", "context_key": "active_booking_id", "value": "AE-7K3Q9P"}
            ],
            "defaults_applied": {"reason": "pedido_do_cliente"},
            "violation": None,
        },
    ),
    entry(
        55,
        "gateway",
        "reply.delivered",
        channel="http",
        status="sent",
        bubbles=1,
        partial=False,
        detail="1-0",
    ),
    entry(60, "loyalty", "points.granted", points=10, reason={"kind": "booking"}),
    entry(
        1500,
        "mode_router",
        "MODE_DECISION",
        turn=None,
        current_mode="discovery",
        final_mode="reativacao",
        validator_decision="apply",
    ),
]


def test_entries_are_grouped_by_turn_and_ordered_by_time() -> None:
    turn, outside = build_timeline(JOURNAL, "en")
    assert turn.turn_id == "t1" and outside.turn_id is None
    assert turn.seq == 1 and turn.messages == ["oi", "quero agendar"]
    assert turn.business_time == "2026-02-05T10:00:00-03:00"
    assert [s.event for s in turn.steps] == [
        "turn.started",
        "triage.decided",
        "MODE_DECISION",
        "trial.decided",
        "merge.complete",
        "reply.delivered",
        "points.granted",
    ]
    assert [s.since_start_ms for s in turn.steps][:4] == [0, 5, 12, 20]
    assert turn.total_ms == 55


def test_known_events_are_explained_from_their_fields() -> None:
    text = render_timeline("conv-1", JOURNAL, "en")
    for line in [
        "Conversation conv-1",
        "── Turn 1 · t1 · 2026-02-05T13:00:00.000+00:00",
        "messages merged into the turn (2):",
        "› quero agendar",
        "intents: trial (source: rules)",
        "confidence: trial 0.90",
        "specialists: trial",
        "mode: discovery → discovery (decision: pending)",
        "intent: interesse_vaga (0.75, interesse: 'agendar')",
        "proposed: oferta (intent)",
        "pending transition: oferta",
        "first turn (bootstrap)",
        "stage: booked → booked",
        "tool gate: cancel_booking → needs_confirmation",
        "injected: booking_id ← active_booking_id = AE-7K3Q9P",
        'defaults: {"reason": "pedido_do_cliente"}',
        "parts: triage, trial",
        "delivery: sent (channel: http)",
        "from start to delivery: 55 ms",
        "── Outside turns",
        "mode: discovery → reativacao (decision: apply)",
    ]:
        assert line in text, line
    assert "+20ms  trial" in text


def test_portuguese_is_the_same_timeline_in_other_words() -> None:
    text = render_timeline("conv-1", JOURNAL, "pt")
    for line in [
        "Conversa conv-1",
        "── Turno 1 · t1",
        "mensagens juntadas no turno (2):",
        "intenções: trial (fonte: rules)",
        "injetado: booking_id ← active_booking_id = AE-7K3Q9P",
        "entrega: sent (canal: http)",
        "do início à entrega: 55 ms",
    ]:
        assert line in text, line


def test_unknown_events_are_rendered_generically() -> None:
    assert explain_entry(JOURNAL[6], "en") == ["points: 10", 'reason: {"kind": "booking"}']


def test_verbose_adds_the_fields_curated_lines_leave_out() -> None:
    plain = explain_entry(JOURNAL[3], "en")
    verbose = explain_entry(JOURNAL[3], "en", verbose=True)
    assert not any(line.startswith("capabilities_version") for line in plain)
    assert "capabilities_version: v1" not in plain and "capabilities_version: v1" in verbose


def test_odd_entries_do_not_break_the_timeline() -> None:
    odd = [
        {"event": "turn.started", "turn_id": "t9"},
        {"at": "not a time", "service": "x", "turn_id": "t9", "event": "x.y", "blob": "z" * 500},
        {"at": f"{T}.000+00:00", "turn_id": "t9", "event": "trial.decided", "stage_after": "x"},
    ]
    text = render_timeline("c", odd, "pt")
    assert "── Turno · t9" in text
    assert "blob: " + "z" * 10 in text and "…" in text
    assert "etapa: ? → x" in text


def test_an_empty_journal_says_so() -> None:
    text = render_timeline("c", [], "en")
    assert text == "Conversation c\nNo journal entries for this conversation."


def test_each_event_is_explained_by_the_one_service_that_declares_it() -> None:
    """Events are looked up by name, so no two services may explain the same name, and each
    explainer says its words in every language."""
    seen: dict[str, str] = {}
    for spec in SPECS:
        journal = spec.explainer()
        if journal is None:
            continue
        assert all(pt and en for pt, en in journal.labels.values()), spec.name
        for event in journal.events:
            assert event not in seen, (event, seen.get(event), spec.name)
            seen[event] = spec.name
    assert {"triage.decided", "trial.decided", "enrollment.decided", "MODE_DECISION"} <= set(seen)


def test_a_new_service_explains_its_own_events() -> None:
    """The enrollment service came after the timeline was written: its entries read through
    its own explainer, in both languages, with nothing added to orquestra/."""
    decided = entry(
        30,
        "enrollment",
        "enrollment.decided",
        stage="requested",
        request_id="MT-4F7K2Q",
        summary="3x por semana · segunda e quarta 19h · Pix",
        **{"from": "awaiting_confirmation"},
    )
    assert explain_entry(decided, "en") == [
        "stage: awaiting_confirmation → requested",
        "request: MT-4F7K2Q",
        "summary for staff: 3x por semana · segunda e quarta 19h · Pix",
    ]
    assert explain_entry(decided, "pt")[0] == "etapa: awaiting_confirmation → requested"
