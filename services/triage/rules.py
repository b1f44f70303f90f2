"""Rules-mode classification: keyword and pattern scoring from the pack, plus active context.

The rules decide alone in ``rules`` mode and go first in ``hybrid`` mode, where
:func:`needs_llm` says when they are unsure enough to ask the LLM.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from services.triage.acts import carries_booking_fields
from services.triage.config import GeneralKind, TriageConfig
from services.triage.models import TriageResult
from services.triage.questions import (
    Clause,
    FaqKnows,
    clauses,
    continues_questions,
    is_flow_question,
    is_question,
    parts,
    without_cases,
)
from shared.contracts import FlowView, ModeView
from shared.nlu.dates import mentions_date, time_candidates
from shared.nlu.fuzzy import pack_vocabulary
from shared.nlu.normalize import normalize
from shared.nlu.upset import complains, is_upset
from shared.nlu.yesno import yes_no
from shared.pack import Pack


def trial_context(flow: FlowView | None) -> str | None:
    """A flow's effective stage, as triage sees it, from its slice's public view.

    A booked trial that waits for an answer — a cancel or reschedule confirmation, the new
    date of a reschedule, or a yes to booking the group's next person — is a conversation going
    on, so "sim" or "19h" must reach trial.
    """
    if flow is None:
        return None
    if flow.confirming:
        return "awaiting_tool_confirmation"
    if flow.rescheduling:
        return "rescheduling"
    if flow.offering_next:
        return "offering_next"
    return flow.stage


def mode_awaits_answer(mode: ModeView | None, turn_id: str) -> bool:
    """Whether the funnel's micro-confirmation was waiting for this turn's answer.

    mode_router handles the same turn in parallel: if it already decided this turn, its last
    decision tells whether a pending question was answered (confirm/cancel); if not yet, the
    slice still shows the question pending.
    """
    if mode is None:
        return False
    if mode.last_turn_id == turn_id:
        return mode.last_decision in ("confirm", "cancel")
    return bool(mode.pending_transition)


def active_flow(
    config: TriageConfig, slices: Mapping[str, FlowView | None]
) -> tuple[TriageConfig, str | None]:
    """The flow going on, as the config to read this turn with and that flow's stage.

    The pack's contexts are tried in priority order; the first whose slice shows a stage that
    is not idle becomes ``active_context`` for the turn. When none is going on, the config is
    the pack's as written and the stage that of its first context (a booked trial is idle).
    """
    for context in config.contexts:
        stage = trial_context(slices.get(context.state_slice))
        if stage and stage not in context.idle_stages:
            if context is config.active_context:
                return config, stage
            return config.model_copy(update={"active_context": context}), stage
    return config, trial_context(slices.get(config.active_context.state_slice))


def active_stage(trial_stage: str | None, config: TriageConfig) -> str | None:
    """The trial stage when a booking conversation is going on, else None."""
    if trial_stage and trial_stage not in config.active_context.idle_stages:
        return trial_stage
    return None


def _is_small_talk(normalized: str, config: TriageConfig) -> bool:
    return any(kind.matches(normalized) for kind in config.general)


def _answers_active_flow(text: str, config: TriageConfig) -> bool:
    """Whether some part of the message reads as an answer to the booking flow.

    A leading yes/no counts ("sim, e onde fica?"), a question about the booking itself counts
    ("pq precisa da idade?"), and so does any part that is not a question and not plainly
    about another intent ("Pedro, 29. quanto custa?" — "Pedro" and "29" are answers; "ele é
    iniciante. vcs emprestam raquete?" — the level is an answer even though the FAQ knows the
    word). A message that is only a question about something else has no such part, which
    keeps "onde fica a CT?" a pure faq even mid-booking.
    """
    if yes_no(text) is not None:
        return True
    others = [
        rules for name, rules in config.intents.items() if name != config.active_context.intent
    ]
    for clause in parts(text):
        normalized = clause.normalized
        if not normalized or _is_small_talk(normalized, config):
            continue
        if is_flow_question(clause, config):
            return True
        if is_question(clause, config):
            continue
        if not any(rules.score(normalized) >= config.threshold for rules in others):
            return True
    return False


def _closes_talk(text: str, config: TriageConfig) -> GeneralKind | None:
    """The closing small talk a message is made of ("valeu, qualquer coisa te chamo"): every
    clause small talk, one of them a kind the pack says ends the talk; None otherwise."""
    clauses = [clause.normalized for clause in parts(text) if clause.normalized]
    if not clauses or not all(_is_small_talk(c, config) for c in clauses):
        return None
    return next(
        (
            kind
            for kind in config.general
            if kind.name in config.closing and any(kind.matches(c) for c in clauses)
        ),
        None,
    )


# "tem 30 e nunca jogou", "ela tem 9": an age said, although "tem" also starts questions.
_AGE_SAID = re.compile(r"^((ele|ela|eu)\s+)?tem\s+\d{1,2}\b(?!\s*(h|:|vagas?|pessoas|alunos)\b)")


def _is_answer(clause: Clause) -> bool:
    """A clause that is a yes or a no and not asked ("pode", "pode sim", "claro"), or that
    says an age ("tem 30 e nunca jogou"): an answer to the bot, even when its first word also
    starts questions ("pode" in "pode ser no sábado?", "tem" in "tem vaga?")."""
    if clause.asked:
        return False
    return yes_no(clause.text) is not None or _AGE_SAID.match(clause.normalized) is not None


def _faq_question(
    text: str,
    config: TriageConfig,
    knows: FaqKnows | None,
    *,
    active: bool,
    now: datetime | None = None,
) -> bool:
    """Whether a question clause of the message is the FAQ's: one the knowledge base answers,
    or, mid-booking, any question of several words marked with "?" that is not about the
    booking itself nor small talk (the FAQ then says honestly what it does not know instead
    of the question being taken for an answer; a lone "Ana?" is still an answer)."""
    if knows is None:
        return False
    for clause in parts(text):
        normalized = clause.normalized
        if not normalized or not is_question(clause, config) or _is_answer(clause):
            continue
        flow = is_flow_question(clause, config, knows=knows, message=text, now=now)
        if active and (flow or _is_small_talk(normalized, config)):
            continue
        if knows(clause.text, text, now) or (
            active and clause.asked and len(normalized.split()) > 1
        ):
            return True
    return False


def _without_flow_questions(text: str, config: TriageConfig) -> str:
    """The normalized message without its questions about the booking itself, whose words
    ("quais horarios tem na terça?") are no evidence of an FAQ question mid-booking."""
    kept = [
        clause.normalized
        for clause in parts(text)
        if not (is_question(clause, config) and is_flow_question(clause, config))
    ]
    return " ".join(kept)


def _is_request(sentence: Clause, config: TriageConfig, knows: FaqKnows | None = None) -> bool:
    """A request put as a question, which the service that does it answers, not the FAQ. A
    question that asks for the class on a day or at an hour ("dá pra fazer a aula sexta às
    8?", "tem aula teste amanhã?") is a booking request put politely: the booking answers it
    with that day's free times, and an FAQ answer about the class on top repeats them. So are
    the questions of ``booking_patterns`` (how a booking stands, how to book), and a person
    asked for ("tem algum atendente?"), which the handoff answers."""
    if not sentence.asked:
        return False
    handoff = config.intents.get("handoff")
    if handoff is not None and handoff.score(sentence.normalized) >= config.threshold:
        return True
    trial = config.intents.get("trial")
    if trial is None:
        return False
    request = trial.score(sentence.normalized) >= config.threshold and (
        mentions_date(sentence.text)
        or bool(time_candidates(sentence.text))
        or config.questions.for_booking(sentence.normalized)
    )
    return request and not _asks_apart(sentence, config, knows)


def _asks_apart(sentence: Clause, config: TriageConfig, knows: FaqKnows | None) -> bool:
    """Whether what a sentence asks, after a comma, is a question of its own that the FAQ
    answers, naming no day or time and not about the booking itself ("tem vaga?"): the
    class and day said before it are the setting, not a request ("minha aula é terça, vai
    ter aula se chover?")."""
    pieces = parts(sentence.text)
    if knows is None or len(pieces) < 2:
        return False
    asked = pieces[-1].text
    if mentions_date(asked) or time_candidates(asked):
        return False
    if config.questions.about_flow(pieces[-1].normalized):
        return False
    return knows(asked, sentence.text, None, beside_booking=True)


def _without_requests(text: str, config: TriageConfig, knows: FaqKnows | None) -> str | None:
    """``text`` without its requests put as questions (``_is_request``: what is left for the
    FAQ), or None when it has none."""
    # Clauses, not sentences: "quanto custa a mensalidade e como faço pra agendar?" keeps its
    # price question when the request beside it goes.
    every = clauses(text, config)
    kept = [s for s in every if not _is_request(s, config, knows)]
    if len(kept) == len(every):
        return None
    return "\n".join(s.text + ("?" if s.asked else "") for s in kept)


def _only_asks_about(
    intent: str,
    text: str,
    config: TriageConfig,
    pack: Pack,
    knows: FaqKnows | None,
    now: datetime | None,
) -> bool:
    """Whether a message only asks about what ``intent`` is about, asking nothing of it.

    Every part of it is a question or small talk, and the clauses with evidence for the
    intent name its subject (the rules' ``names``) without more: no request put as a question
    (a day, an hour, how to book: ``_is_request``), and too little evidence beyond the names.
    The knowledge base must know the answer (``knows``): it is what says what was asked and
    offers to book; a question it cannot answer still gets the booking's own introduction.
    "qto é a aula teste?" asks the trial class's price, which the FAQ says with its own offer
    to book; "quero marcar a experimental" or "a experimental de terça tem vaga?" ask for the
    class, and "me chamo Ana, qto é a aula teste?" or "vou na experimental, levo raquete?"
    tell the booking something.
    """
    rules = config.intents[intent]
    if not rules.names:
        return False
    correct = pack_vocabulary(pack).correct
    named = [c for c in clauses(text, config) if rules.hit(correct(c.normalized))]
    if not named or any(
        not is_question(clause, config)
        or (knows is not None and not knows(clause.text, text, now))
        or _is_request(clause, config, knows)
        or rules.score_beyond_names(correct(clause.normalized)) >= config.threshold
        for clause in named
    ):
        return False
    return all(
        is_question(part, config)
        or (_is_small_talk(part.normalized, config) and not rules.hit(correct(part.normalized)))
        for part in parts(text)
        if part.normalized
    )


def _asks_beside_small_talk(text: str, config: TriageConfig) -> bool:
    """Whether a part of the message asks, with a "?", something that is no small talk."""
    return any(
        part.asked
        and len(part.normalized.split()) > 2
        and not _is_small_talk(part.normalized, config)
        for part in parts(text)
    )


def _asks_outright(text: str, config: TriageConfig) -> bool:
    """Whether a part of the message asks, with a "?" and a question word first, something
    of two words or more ("aceita gympass?"); a bare "?" or "e aí?" says too little, and a
    question about what the bot said ("como assim?") asks nothing of the business."""
    return any(
        part.asked
        and len(part.normalized.split()) > 1
        and config.questions.starts_question(part.normalized)
        and not config.questions.about_flow(part.normalized)
        and not _is_small_talk(part.normalized, config)
        for part in parts(text)
    )


def _asks_something(text: str, config: TriageConfig) -> bool:
    return any(is_question(clause, config) for clause in parts(text) if clause.normalized)


def classify(
    text: str,
    *,
    trial_stage: str | None,
    config: TriageConfig,
    pack: Pack,
    seed: str = "",
    knows: FaqKnows | None = None,
    follow_up: bool = False,
    now: datetime | None = None,
) -> TriageResult:
    """Classify one message with the pack's rules (:func:`_classify`); an upset customer
    (``shared.nlu.upset``) is also routed to the pack's ``upset_intent``, a person."""
    result = _classify(
        text,
        trial_stage=trial_stage,
        config=config,
        pack=pack,
        seed=seed,
        knows=knows,
        follow_up=follow_up,
        now=now,
    )
    upset = config.upset_intent
    if upset is None or upset in result.intents or not is_upset(text):
        return result
    intents = [i for i in result.intents if i != "general"] + [upset]
    return result.model_copy(
        update={
            "intents": intents,
            "general_response": None,
            "confidences": {**result.confidences, upset: 1.0},
            "reason": None,
        }
    )


def _classify(
    text: str,
    *,
    trial_stage: str | None,
    config: TriageConfig,
    pack: Pack,
    seed: str = "",
    knows: FaqKnows | None = None,
    follow_up: bool = False,
    now: datetime | None = None,
) -> TriageResult:
    """Classify one message with the pack's rules.

    Specialist intents whose confidence reaches the threshold are detected together
    (multi-intent). ``knows`` lets the knowledge base vouch for a question the keywords miss
    ("a partir de que idade pode?"), also next to another intent ("tem limite de idade pra
    aula experimental?" asks the FAQ even though it names the booking). ``follow_up``: the
    previous turn went to the FAQ, so a short question nothing else claims ("e no sábado?")
    is its next question. ``now``: the turn's business time (a birth year is an age then).
    Mid-booking, the booking flow also gets the message when part of it
    answers the flow, or when nothing else claims it. Otherwise a long message with no action
    word and no question is left unplaced (N1 asks), small talk is ``general`` alone with its
    reply, and anything else is unplaced. Typos are corrected to the pack's vocabulary before
    scoring.
    """
    normalized = pack_vocabulary(pack).correct(normalize(text))
    active = active_stage(trial_stage, config) is not None
    # A condition set before a question names a case, not what is wanted (``without_cases``):
    # no evidence of a request; the question about the case is still a question.
    wanted = pack_vocabulary(pack).correct(normalize(without_cases(text, config)))
    confidences = {
        name: rules.score(normalized if name == "faq" else wanted)
        for name, rules in config.intents.items()
    }
    requests_left = _without_requests(text, config, knows)
    asked = text if requests_left is None else requests_left
    if "faq" in config.intents and (active or requests_left is not None):
        faq_text = _without_flow_questions(asked, config) if active else normalize(asked)
        confidences["faq"] = config.intents["faq"].score(pack_vocabulary(pack).correct(faq_text))
    intents: list[str] = [name for name, conf in confidences.items() if conf >= config.threshold]
    context_intent = config.active_context.intent

    held = config.active_context
    if held.recalled(trial_stage, normalized):
        return TriageResult(intents=[held.intent], confidences={**confidences, held.intent: 1.0})
    following = held.after(trial_stage, normalized) if not intents else None
    if following is not None:
        return TriageResult(intents=[following], confidences={**confidences, following: 1.0})
    unplaced = active or not intents
    complaint = config.complaint_text_key is not None and complains(text)
    if "faq" not in intents and _faq_question(asked, config, knows, active=active, now=now):
        intents.append("faq")
        confidences["faq"] = max(confidences.get("faq", 0.0), config.threshold)
    if (
        "faq" not in intents
        and unplaced
        and follow_up
        and not _is_small_talk(normalized, config)
        and not complaint
        and continues_questions(text, config)
        # Mid-booking, "pode ser esse então, terça dia 9" answers the booking, whatever the
        # FAQ was asked before, and so do a bare "que horas?" and a limit on the time ("e
        # depois das 19h?"): the booking's question was the last the bot asked.
        and not (active and "?" not in text and config.questions.about_flow(normalized))
        and not (active and config.questions.asks_slots(normalized))
    ):
        intents.append("faq")
        confidences["faq"] = max(confidences.get("faq", 0.0), config.threshold)

    if not active and "faq" in intents:
        # A question about what an intent names (the trial class) is the FAQ's to answer, not
        # a request to start it.
        intents = [
            name
            for name in intents
            if name == "faq" or not _only_asks_about(name, text, config, pack, knows, now)
        ]

    if active:
        closing = _closes_talk(text, config) if trial_stage != "awaiting_confirmation" else None
        if closing is not None and not intents:
            return TriageResult(
                intents=["general"],
                general_response=pack.text(closing.text_key, seed=seed),
                confidences={**confidences, "general": 1.0},
            )
        context = config.active_context
        if context.answered_in(normalized) and not _asks_something(text, config):
            return TriageResult(
                intents=[context_intent], confidences={**confidences, context_intent: 1.0}
            )
        if context_intent not in intents and (not intents or _answers_active_flow(text, config)):
            intents.insert(0, context_intent)
            confidences[context_intent] = 1.0
        return TriageResult(intents=intents, confidences=confidences)

    if complaint and not intents and config.complaint_text_key is not None:
        # "vocês demoram demais pra responder" is said sorry for, not asked of the FAQ.
        return TriageResult(
            intents=["general"],
            general_response=pack.text(config.complaint_text_key, seed=seed),
            confidences={**confidences, "general": 1.0},
        )
    clarify = config.clarification
    too_long = len(text.strip()) > clarify.long_message_chars
    if (
        clarify.enabled
        and too_long
        and not clarify.has_action(normalized)
        and not _asks_something(text, config)
    ):
        return TriageResult(intents=[], confidences=confidences, reason="long_without_action")
    if intents:
        return TriageResult(intents=intents, confidences=confidences)

    kind = next((k for k in config.general if k.matches(normalized)), None)
    if kind is not None and carries_booking_fields(text, context=False):
        # "oi, sou a Lia, tenho 30 anos e sou iniciante": a greeting in front of a booking's
        # fields is no small talk; left unplaced, the fields reach the booking (core).
        kind = None
    if kind is not None and "faq" in config.intents and _asks_beside_small_talk(text, config):
        # "certo. e a experimental é obrigatória?": the acknowledgement opens a question, which
        # the FAQ answers (or says it does not know); an "ok" back would leave it unanswered.
        return TriageResult(intents=["faq"], confidences={**confidences, "faq": config.threshold})
    if kind is not None or not normalized:
        key = kind.text_key if kind is not None else config.fallback_text_key
        return TriageResult(
            intents=["general"],
            general_response=pack.text(key, seed=seed),
            confidences={**confidences, "general": 1.0},
        )
    if "faq" in config.intents and _asks_outright(text, config):
        # "aceita vale-transporte?": asked outright about something no rule knows, it is a
        # question about the business; the FAQ says honestly what it does not know, with the
        # way to a person, instead of the menu asking what the person wants.
        return TriageResult(
            intents=["faq"],
            confidences={**confidences, "faq": config.threshold},
            reason="asked_outright",
        )
    return TriageResult(intents=[], confidences=confidences, reason="no_evidence")


def needs_llm(rules_result: TriageResult, config: TriageConfig) -> bool:
    """Whether hybrid mode should ask the LLM: the rules placed nothing (or a question by its
    shape alone), or saw some evidence for an intent without enough to detect it (a second
    intent may be hiding)."""
    if rules_result.source == "llm":
        return False
    if not rules_result.intents or rules_result.reason == "asked_outright":
        return True
    if rules_result.intents == ["general"]:
        return False
    return any(
        config.llm_floor <= conf < config.threshold
        for name, conf in rules_result.confidences.items()
        if name not in rules_result.intents
    )
