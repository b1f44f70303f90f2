"""Concluding a trial turn: count failed answers (too many hand off to a person), render the
reply text and build the outcome the shell commits, journals and may have an LLM phrase."""

from __future__ import annotations

import re

from services.trial.before_booking import handoff
from services.trial.extraction import MERGEABLE
from services.trial.models import Event, ToolResult, TrialOutcome, TrialState
from services.trial.nlg import build_nlg_request
from services.trial.party import with_party, with_times
from services.trial.replies import base_values, join_list
from services.trial.summary import facts, summary
from services.trial.turn import Reply, TrialTurn
from services.trial.validators import ERROR_FIELD
from shared.nlu.normalize import normalize


def _failed(t: TrialTurn, r: Reply) -> bool:
    """This reply asks again for what the last one asked, and the message gave no usable answer.

    Usable is anything the booking can go on with or the person visibly answered with: a field
    set or changed (whichever was asked: a date given while the name was asked is progress, and
    the name is asked again), a field read even if it equals the one kept (a correction the
    reader got wrong is still an answer: the person is answering, the parser missed), a change
    to a pending tool, or a question (answered by another service). A value the validators
    refuses is not usable ("tenho 200 anos": the field did not change), nor is the same refusal
    twice in a row ("às 16h", then "às 17h", after being told the free times). A question that
    gives nothing is never a failed answer, even while the kept day or time is still refused
    (a full class): the person is asking something else, not refusing to choose. So a handoff
    is kept for a person who cannot or will not answer the same clear question, never for one
    who is busy giving the booking other details, or asking, instead.
    """
    if t.complaint:
        # A complaint ("quanta demora") is heard and said sorry for, not a refusal to answer.
        return False
    if t.question and (
        r.error in (None, "missing_date", "missing_time") or not t.extraction.has_data()
    ):
        return False
    # The writer's own name ("sou a Carla, mãe dele") answers too, though not the student's.
    changed = any(getattr(r.state, f) != getattr(t.before, f) for f in (*MERGEABLE, "contact_name"))
    if r.error is not None and ERROR_FIELD.get(r.error) == r.asks:
        return r.error == t.before.last_error or not changed
    said = t.extraction.has_data()
    return not changed and not said and r.state.pending_tool == t.before.pending_tool


def _count_attempts(t: TrialTurn, r: Reply) -> Reply:
    """Count consecutive unusable answers per asked field; ``max_attempts`` of them (the
    question, then its clear form with an example) hand the conversation to a person with a
    summary. A usable answer starts the count again."""
    asked = t.before.asked
    attempts = dict(r.state.attempts)
    if r.asks is not None and r.asks == asked:
        if _failed(t, r):
            attempts[r.asks] = attempts.get(r.asks, 0) + 1
        else:
            attempts.pop(r.asks, None)
    elif asked is not None:
        attempts.pop(asked, None)
    if r.asks is not None and attempts.get(r.asks, 0) >= t.config.max_attempts:
        handed = handoff(r.state, r.context, reason="attempts", field=r.asks)
        handed.error = r.error
        handed.values = {
            "resumo": summary(
                r.state,
                now_local=t.now_local,
                config=t.config,
                pack=t.pack,
                seed=t.seed,
                asked=r.asks,
            )
        }
        return handed
    r.state = r.state.model_copy(update={"attempts": attempts})
    return r


def _withdrawn(t: TrialTurn, state: TrialState) -> list[Event]:
    """The ``handoff.withdrawn`` event when the person answered after the bot's own handoff
    (reason ``attempts``) and the booking went on: nobody is needed any more, so the staff's
    queue does not keep a conversation the bot finished (the gateway gives it back to the bot
    unless a person already took it)."""
    before = t.before
    if before.stage != "handoff_requested" or before.handoff_reason != "attempts":
        return []
    if state.stage == "handoff_requested":
        return []
    return [{"type": "handoff.withdrawn", "data": {"reason": "answered", "stage": state.stage}}]


def _leave_granted(t: TrialTurn, r: Reply) -> bool:
    """Whether the message asked leave to book ("posso marcar pra uma amiga?", "ela pode
    fazer a aula?") and the reply goes on with the booking: then it first says yes."""
    if r.error not in (None, "missing_date", "missing_time") or r.handoff is not None:
        return False
    if r.state.stage in ("booked", "cancelled", "handoff_requested") or r.key == "trial_too_young":
        return False
    normalized = normalize(t.text)
    asked = "?" in t.text or any(re.search(p, normalized) for p in t.config.asked_indirectly)
    return asked and any(re.search(p, normalized) for p in t.config.leave_asked)


def _guardian_note(t: TrialTurn, state: TrialState) -> str | None:
    """The guardian's authorization, said as soon as a minor's age is noted (the booking says
    it again when it is made): a young person booking alone learns it before choosing a day."""
    minor = state.idade is not None and state.idade < t.config.adult_age
    if not minor or state.idade == t.before.idade or state.stage == "booked":
        return None
    return "trial_guardian_note" if state.nome else "trial_guardian_note_unnamed"


def conclude(t: TrialTurn, r: Reply, *, result: ToolResult | None = None) -> TrialOutcome:
    if r.handoff is None:
        r = _count_attempts(t, r)
    if r.handoff is not None:
        r.asks = None
        r.state = r.state.model_copy(update={"attempts": {}})
    elif t.complaint and r.asks is not None and r.aside is None:
        r.aside = "trial_complaint_sorry"
    reask = (r.key or "").startswith("trial_reask_")
    # One reminder of the pending step per run of questions: after the next question the other
    # service's answer is the whole reply, and the step is still the one read next.
    silent = (
        reask
        and t.answered_elsewhere
        and t.before.reasked
        and r.asks == t.before.asked
        and not r.noted
    )
    reading = r.asks
    if silent:
        r.key, r.text, r.asks = None, "", None
    values = {
        **base_values(r.state, now_local=t.now_local, config=t.config, pack=t.pack, seed=t.seed),
        **r.values,
    }
    text = r.text if r.text is not None else t.pack.text(r.key or "", seed=t.seed, **values)
    if r.aside is not None:
        text = f"{t.pack.text(r.aside, seed=t.seed, **values)} {text}"
    if r.noted and r.handoff is None:
        said = facts(
            r.state, r.noted, now_local=t.now_local, config=t.config, pack=t.pack, seed=t.seed
        )
        anotado = join_list(said, t.config)
        text = f"{t.pack.text('trial_noted', seed=t.seed, anotado=anotado)} {text}"
    for key in r.after:
        text = f"{text} {t.pack.text(key, seed=t.seed, **values)}"
    if text and (note := _guardian_note(t, r.state)) is not None:
        text = f"{text} {t.pack.text(note, seed=t.seed, **values)}"
    # After a handoff for failed answers the next message is still read as the answer to the
    # question that failed (a name given then resumes the booking instead of waiting).
    asked = r.state.asked if r.handoff == "attempts" else reading
    grouped, text = with_party(t, r.state, text)
    text = with_times(t, grouped, text)
    if text and _leave_granted(t, r):
        text = f"{t.pack.text('trial_leave_granted', seed=t.seed)} {text}"
    state = grouped.model_copy(
        update={"asked": asked, "last_error": r.error, "output": text, "reasked": reask}
    )
    snapshot = state.model_dump(
        include={"nome", "idade", "nivel", "desired_date", "desired_time", "booking_id"}
    )
    journal = {
        "stage_before": t.before.stage,
        "stage_after": state.stage,
        "intents": list(t.intents),
        "extracted": t.extraction.model_dump(exclude_none=True),
        "action": t.action,
        "booking_code": t.code,
        "validation": r.error,
        "reply": r.key,
        "asked": r.asks,
        "attempts": state.attempts,
        "gate": r.gate.journal() if r.gate is not None else None,
        "tool_result": result.status if result is not None else None,
        "handoff": r.handoff,
    }
    return TrialOutcome(
        text=text,
        asks_question=r.asks is not None or "?" in text,
        state=state,
        context=r.context,
        events=r.events + _withdrawn(t, state),
        journal=journal,
        nlg=None
        if not text
        else build_nlg_request(
            stage=state.stage,
            action=(r.key or "gate_message").removeprefix("trial_"),
            error_code=r.error,
            fallback=text,
            snapshot=snapshot,
            config=t.config.nlg,
        ),
    )
