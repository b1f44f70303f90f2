"""The FAQ specialist's decision: which entries answer a message, and the reply text.

Two steps so the service can put an LLM between them: :func:`retrieve` finds the entries per
question clause; :func:`compose` writes the reply from those entries' own text, or from an LLM
phrasing that passed :func:`~services.faq.llm.accept_llm_answer`. :func:`answer` chains both
for the rules mode.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from services.faq.llm import FaqLLMAnswer, accept_llm_answer
from services.faq.topic import FaqTopic, OpenQuestion
from shared.contracts import MemoryView
from shared.faq.ages import age_question, ages_in
from shared.faq.config import AgeRule, FaqConfig, FaqEntry
from shared.faq.index import FaqIndex, Match
from shared.nlu.dates import without_dates_and_times
from shared.nlu.normalize import normalize
from shared.nlu.party import age_named, names_of_groups
from shared.nlu.upset import complains


class TextSource(Protocol):
    """Where user-facing texts come from (a loaded ``shared.pack.Pack``)."""

    def text(self, key: str, seed: str = "", **values: Any) -> str: ...


class ClauseMatch(BaseModel):
    """How one question clause was matched, for the decision journal."""

    model_config = ConfigDict(frozen=True)

    clause: str
    entry_id: str
    score: float
    coverage: float
    answered: bool
    # Answered as a follow-up of the conversation's topic, not on its own words.
    inherited: bool = False


class Retrieval(BaseModel):
    """The entries that answer a message, in the order asked, and what stayed unanswered."""

    model_config = ConfigDict(frozen=True)

    entries: list[FaqEntry]
    unanswered: list[str]
    clauses: list[ClauseMatch]
    # Whether some clause was shaped like a question (a "?" or a question word first).
    asked: bool = True
    # Entry id → the one part of its answer that a follow-up ("e sábado?") asks about.
    focus: dict[str, str] = Field(default_factory=dict)
    # The ages the message gives, when the pack's age entry answers it (a yes or no per age).
    ages: list[int] = Field(default_factory=list)

    @property
    def entry_ids(self) -> list[str]:
        return [e.id for e in self.entries]

    @property
    def answered(self) -> list[tuple[str, str]]:
        """(clause, entry id) of every answered clause, in the order asked."""
        return [(c.clause, c.entry_id) for c in self.clauses if c.answered]


class FaqResult(BaseModel):
    """The FAQ part of a reply."""

    model_config = ConfigDict(frozen=True)

    text: str
    asks_question: bool
    entry_ids: list[str]
    # Question clauses the base could not answer (journalled for the operator's report).
    unanswered: list[str]
    # Best score per answered entry.
    scores: dict[str, float]
    clauses: list[ClauseMatch]
    # "llm" when an accepted LLM phrasing was said, else "rules" (the entries' own text).
    source: Literal["rules", "llm"]
    # Whether the trial-class pointer closes the text.
    oferta_pointer: bool
    # Nothing answered and nothing shaped like a question: the "não sei" is about a statement
    # ("quero agendar"), which the merger leaves out when another specialist answered.
    unknown_only: bool = False


def _clause_match(text: str, match: Match, index: FaqIndex) -> ClauseMatch:
    return ClauseMatch(
        clause=text,
        entry_id=match.entry_id,
        score=match.score,
        coverage=match.coverage,
        answered=index.answers(match),
    )


def _without_the_person(text: str, index: FaqIndex, match: Match | None) -> str:
    """``text`` without the people it names (the age rule's ``person_words``) when they say
    whom it asks for, not what: the age entry is its best match, yet does not know what else
    it asks, which another entry answers ("criança paga quanto?" asks the price, "minha filha
    pode usar o vestiário?" the changing rooms). Otherwise ``text`` ("tem aula pra criança?"
    asks the age rule). ``match``: ``text``'s best entry, as :func:`_judge` found it."""
    rule = index.config.age_rule
    if rule is None or not rule.person_words:
        return text
    if match is None or match.entry_id != rule.entry:
        return text
    people = {t for w in rule.person_words for t in index.content_terms(w)}
    rest = " ".join(
        w for w in text.split() if not (terms := index.content_terms(w)) or not terms <= people
    )
    # What is left must name a thing of its own, not only how it asks: "tem turma infantil?"
    # less the person is "tem turma", the frame of the age rule's question, not the class size.
    beyond = index.object_terms(rest) - index.entry_terms(rule.entry)
    if rest == text or not beyond:
        return text
    other = index.best(rest)
    if other is None or other.entry_id == rule.entry or not index.answers(other):
        return text
    return rest if index.share_in(beyond, other.entry_id) >= index.config.min_coverage else text


def _judge(text: str, index: FaqIndex, context: Collection[str] = ()) -> ClauseMatch | None:
    """The entry answering one clause (read without the people it is asked for:
    :func:`_without_the_person`). With a ``context`` (the tags of what the conversation
    is about, e.g. the trial class mid-booking), an entry of that context that answers the
    clause and knows as much of it as the overall best is preferred: "quanto custa?" while
    booking the trial class asks the trial's price, "quanto é a mensalidade?" still the plans."""
    match = index.best(text)
    asked = _without_the_person(text, index, match)
    if asked != text:
        match = index.best(asked)
    if match is None:
        return None
    judged = _clause_match(text, match, index)
    if not context or set(index.entry(match.entry_id).tags) & set(context):
        return judged
    local = index.best(asked, tags=context)
    if local is None:
        return judged
    preferred = _clause_match(text, local, index)
    if preferred.answered and preferred.coverage >= judged.coverage:
        return preferred
    return judged


def _as_topic_list(
    whole: ClauseMatch, index: FaqIndex, context: Collection[str] = ()
) -> list[ClauseMatch] | None:
    """The clause read as a list of topics ("endereço e preço?"), when every topic is known
    (pieces that name nothing the base knows, a salutation or a name, left aside) and the
    list explains the clause better than one entry does: the whole clause matched
    nothing, or matched one entry that misses part of it while the topics name several."""
    if whole.answered and whole.coverage >= 1:
        return None
    # A piece naming nothing the base knows ("Prezados", a name) is an address, not a topic.
    pieces = [
        p
        for p in index.analyzer.pieces(whole.clause)
        if any(index.known(t) for t in index.content_terms(p))
    ]
    parts = [m for m in (_judge(p, index, context) for p in pieces) if m]
    if len(parts) < 2 or not all(m.answered for m in parts):
        return None
    if whole.answered and len({m.entry_id for m in parts}) < 2:
        return None
    return parts


def _as_request_and_questions(
    whole: ClauseMatch, index: FaqIndex, context: Collection[str] = ()
) -> list[ClauseMatch] | None:
    """The clause read as statements joined to questions ("quero agendar a experimental e
    onde fica?"), when it matched nothing as a whole: the question-shaped pieces, if every one
    of them is answered. The statements are context, neither answered nor unanswered."""
    if whole.answered:
        return None
    analyzer = index.analyzer
    pieces = analyzer.pieces(whole.clause)
    cases = _cases(pieces, index)
    if cases:
        # "e se eu fechar o plano, a experimental é descontada?": the case is set, the rest is
        # asked ("se" also starts questions, which made the plan the question).
        asked = [p for at, p in enumerate(pieces) if at not in cases]
    else:
        asked = [p for p in pieces if analyzer.question_shaped(p)]
    if len(pieces) < 2 or not asked:
        return None
    matches = [_judge(p, index, context) for p in asked]
    if not all(m is not None and m.answered for m in matches):
        return None
    return [m for m in matches if m is not None]


def _is_condition(piece: str, index: FaqIndex) -> bool:
    """Whether a piece of a clause sets a case ("se eu fechar o plano", "e caso chova"): a
    condition word (``FaqConfig.condition_words``) first, after a follow-up opener if any."""
    words = normalize(piece).split()
    openers = {normalize(w) for w in index.config.follow_up.openers}
    if words and words[0] in openers:
        words = words[1:]
    conditions = {normalize(w) for w in index.config.condition_words}
    return len(words) > 1 and words[0] in conditions


def _cases(parts: Sequence[str], index: FaqIndex) -> set[int]:
    """The positions of the parts that are context for the question beside them: a condition
    before a part that asks something with words of its own ("se eu pagar no boleto, tem
    desconto?" asks for a discount), or a bare question after a condition ("se chover, como
    fica?": the condition is what is asked, "como fica" alone would be the address's)."""
    context: set[int] = set()
    for at, part in enumerate(parts[:-1]):
        after = parts[at + 1]
        if not _is_condition(part, index) or _is_condition(after, index):
            continue
        context.add(at if index.content_terms(after) else at + 1)
    return context


# An answer's parts: its lines, its sentences, and the members of a ", e" coordination.
_ANSWER_PARTS = re.compile(r"\s*\n\s*|(?<=[.!])\s+|,\s+e\s+")
_FOLLOW_UP_WORDS = 5


def _is_follow_up(clause: str) -> bool:
    """A short question that continues the last one with "e ..." ("e sábado?", "e pra
    criança?"): it asks about one part of something already asked."""
    words = normalize(clause).split()
    return 2 <= len(words) <= _FOLLOW_UP_WORDS and words[0] == "e"


def _follow_up_match(clause: str, entry_id: str) -> ClauseMatch:
    return ClauseMatch(
        clause=clause, entry_id=entry_id, score=0.0, coverage=1.0, answered=True, inherited=True
    )


def _about_an_age(
    clause: str, index: FaqIndex, topic_entry: str | None, ages: list[int], said: list[int]
) -> ClauseMatch | None:
    """A clause asking whether someone of an age may take classes ("aceitam alguém de 99?",
    "quando ele fizer 8 pode?" after an age question, "tem idade máxima? nasci em 1950"), read
    as the age entry's whatever other entry its question words ("aceitam") would match
    (:func:`shared.faq.ages.age_question`). ``ages``: those the clause gives; ``said``: those
    the whole message gives."""
    rule = index.config.age_rule
    if rule is None:
        return None
    continuing = bool(ages) and topic_entry == rule.entry
    if age_question(clause, index, ages, said, continuing=continuing):
        return _follow_up_match(clause, rule.entry)
    return None


def _embedded(clause: str, index: FaqIndex, context: Collection[str]) -> ClauseMatch | None:
    """A long clause the base cannot place as a whole, read at the question it carries: the
    words after a phrase that asks ("... queria saber se vocês abrem no sábado porque ..."),
    up to a word that starts the next thought, answered if the base knows them."""
    rule = index.config.embedded
    words = normalize(clause).split()
    if len(words) <= rule.max_words:
        return None
    cues = sorted({normalize(c) for c in rule.cues if normalize(c)}, key=len, reverse=True)
    stops = {normalize(w) for w in rule.stops}
    joined = " ".join(words)
    for cue in cues:
        for found in re.finditer(rf"(?<!\S){re.escape(cue)}(?!\S)", joined):
            after = joined[found.end() :].split()[: rule.max_words]
            window = list(itertools.takewhile(lambda w: w not in stops, after))
            match = _judge(" ".join(window), index, context) if window else None
            if match is not None and match.answered:
                return match
    return None


def _inherited(clause: str, index: FaqIndex, topic_entry: str | None) -> ClauseMatch | None:
    """A short clause the base cannot place alone, read as a follow-up of the conversation's
    topic: "e o de 3x?" after a plan's price, "e domingo?" after the opening hours.

    A clause with no content word left ("e o de 12?") continues it whole. Otherwise it must
    open as a follow-up ("e ...", "mas ...": "vocês não têm vestiário?" is a question of its
    own) and be mostly about the topic's entry: of its content words the base uses at all,
    the entry must know at least the FAQ's ``min_coverage`` (idf-weighted) ("e futevôlei?"
    names nothing known, "e tem estacionamento?" names another entry's word; neither
    continues the topic, while "e no sábado abre até que horas?" does).
    """
    rule = index.config.follow_up
    words = normalize(clause).split()
    if topic_entry is None or not words or len(words) > rule.max_words:
        return None
    # The day or time a follow-up names ("e na quinta?", "e amanhã às 19h?") is a value for
    # the topic, not a new topic.
    content = index.content_terms(without_dates_and_times(clause))
    opened = words[0] in {normalize(w) for w in rule.openers}
    known = {t for t in content if index.known(t)}
    share = index.share_in(known, topic_entry)
    if not content or (opened and known and share >= index.config.min_coverage):
        return _follow_up_match(clause, topic_entry)
    return None


def _continued(clause: str, index: FaqIndex, topic_entry: str | None) -> ClauseMatch | None:
    """A short clause opened as a follow-up ("mas ...", "e ...") that the topic's entry knows
    (at least the FAQ's ``min_coverage`` of its content): the topic goes on even when another
    entry would match its words on their own ("mas aí eu pago?" after the rain answer asks
    about the rescheduled class, not the payment methods)."""
    rule = index.config.follow_up
    words = normalize(clause).split()
    if topic_entry is None or not words or len(words) > rule.max_words:
        return None
    if words[0] not in {normalize(w) for w in rule.openers}:
        return None
    content = index.content_terms(without_dates_and_times(clause))
    known = {t for t in content if index.known(t)}
    if known and index.share_in(content, topic_entry) >= index.config.min_coverage:
        return _follow_up_match(clause, topic_entry)
    return None


def focus(answer: str, clause: str, index: FaqIndex, *, follow_up: bool = False) -> str | None:
    """The one part of ``answer`` that a follow-up ``clause`` asks about, as a sentence.

    "vcs abrem q horas?" gets the whole opening-hours answer; "e sábado?" then gets only the
    part about Saturdays, not the same paragraph again. None when the clause is not a
    follow-up ("e ...", or ``follow_up``: answered through the conversation's topic) or its
    words point at no single part (the whole answer is said).
    """
    if not (follow_up or _is_follow_up(clause)):
        return None
    asked = set(index.terms(clause))
    parts = [p.strip() for p in _ANSWER_PARTS.split(answer.strip()) if p.strip()]
    hits = [p for p in parts if asked & set(index.terms(p))]
    if len(parts) < 2 or len(hits) != 1:
        return None
    part = hits[0].rstrip(".!,;")
    first = next((i for i, ch in enumerate(part) if ch.isalnum()), 0)
    return f"{part[:first]}{part[first].upper()}{part[first + 1 :]}."


def people_named(memory: MemoryView | None, message: str) -> list[str]:
    """The people the conversation named: the student's name the memory holds and those of
    the groups the person's messages (``message`` too) booked for."""
    if memory is None:
        return names_of_groups([message])
    nome = memory.value("nome")
    named = [nome] if isinstance(nome, str) else []
    return [*named, *names_of_groups([*(heard.text for heard in memory.heard), message])]


def student_age(memory: MemoryView | None, question: str) -> int | None:
    """The age of the student a question is about: a person of a group the question names,
    by the age the group's message gave them ("O Artur precisa levar algo?" when the
    grandfather booking with him gave Artur's as 12), else the memory's one age, if it is a
    number."""
    if memory is None:
        return None
    named = age_named(question, [*(heard.text for heard in memory.heard), question])
    if named is not None:
        return named
    age = memory.value("idade")
    return age if isinstance(age, int) and not isinstance(age, bool) else None


def _asks_again(clause: str, index: FaqIndex) -> bool:
    """A short clause opened as a follow-up for another case ("e pra quem paga à vista?", "e
    para estudante?"): the question before it, asked again of someone or something else."""
    rule = index.config.follow_up
    words = normalize(clause).split()
    return (
        2 <= len(words) <= rule.max_words
        and words[0] in {normalize(w) for w in rule.openers}
        and words[1] in {normalize(w) for w in rule.another_case}
    )


def _asks_for_unknown(clause: str, index: FaqIndex) -> bool:
    """Whether the thing a clause asks for is one no entry knows: the first content word after
    an offer word (``FaqConfig.offer_words``: "tem desconto pra pagar no pix?", "no pix tem
    desconto?"). Its other words may match an entry (the payment methods), which then answers
    around the question, not it."""
    words = normalize(clause).split()
    for at, word in enumerate(words):
        if word not in index.offer_words:
            continue
        asked = next((terms for w in words[at + 1 :] if (terms := index.content_terms(w))), None)
        if asked is not None and not any(index.known(t) for t in asked):
            return True
    return False


def without_names(text: str, names: Collection[str], index: FaqIndex) -> str:
    """``text`` without the people's ``names`` the conversation gave: a name says whom a
    question is about ("o Heitor precisa levar algo?"), not what it asks, and a word the base
    never uses would weigh most against every entry (see ``FaqIndex``'s coverage). A name the
    base uses as a word stays: a misread name must not take a topic out of a question."""
    for name in sorted(names, key=len, reverse=True):
        if name.strip() and not any(index.known(t) for t in index.content_terms(name)):
            text = re.sub(rf"\b{re.escape(name.strip())}\b", " ", text, flags=re.IGNORECASE)
    return text


def retrieve(
    text: str,
    *,
    index: FaqIndex,
    context: Collection[str] = (),
    topic: FaqTopic | None = None,
    message: str | None = None,
    now: datetime | None = None,
    names: Collection[str] = (),
    unknown: OpenQuestion | None = None,
) -> Retrieval:
    """Match every question clause of ``text``; entries deduplicated, first ask first.

    In a message of several clauses, a clause that is not shaped like a question ("meu nome é
    Ana", "ele é iniciante") is context, not a question, when another clause asks something:
    neither answered nor unanswered. A single clause is always a question: triage sent the
    message here because it asks something. ``context``: tags of the entries the conversation
    is about (see :func:`_judge`). ``topic``: what the conversation last asked about, which a
    short clause the base cannot place alone continues (see :func:`_inherited`); each answered
    clause becomes the topic of the next. ``message``: the whole message ``text`` was taken
    from, whose ages ("minha filha tem 9") the age entry answers with a yes or no; ``now``
    (business time) turns a birth year into an age. ``names``: the people the conversation
    named, read out of the clauses (:func:`without_names`). ``unknown``: the last question the
    base could not answer, with nothing answered since: a clause asking it again for another
    case (:func:`_asks_again`) stays unanswered, whatever its own words match ("e pra quem paga
    no pix?" after an unknown discount asks for a discount, not the payment methods).
    """
    clauses = index.analyzer.clauses(without_names(text, names, index))
    topic_entry = topic.entry_id if topic else None
    said = ages_in(message or text, now)
    # A greeting's question ("tudo bem?") asks nothing the base could answer: only a
    # question with content makes the other clauses context.
    asking = any(c.question_shaped and index.content_terms(c.text) for c in clauses)
    # A condition closed by its own "?" ("e se chover? tem reposição?") is a question.
    cases = {
        at
        for at in _cases([c.text for c in clauses], index)
        if not (clauses[at].asked and _is_condition(clauses[at].text, index))
    }
    matches: list[ClauseMatch] = []
    entries: dict[str, FaqEntry] = {}
    unanswered: list[str] = []
    for at, clause in enumerate(clauses):
        if asking and len(clauses) > 1 and not clause.question_shaped:
            continue
        if at in cases:
            # The case a question is asked for is context, neither answered nor unanswered.
            continue
        if len(clauses) > 1 and complains(clause.text):
            # "que demora, vocês abrem sábado?": the complaint beside the question is heard
            # (triage says sorry), not a question the base does not know.
            continue
        if unknown is not None and _asks_again(clause.text, index):
            unanswered.append(clause.text)
            continue
        match = _judge(clause.text, index, context)
        continued = _continued(clause.text, index, topic_entry)
        if continued is not None and not (
            match and match.answered and match.entry_id == topic_entry
        ):
            match = continued
        age = _about_an_age(clause.text, index, topic_entry, ages_in(clause.text, now), said)
        if age is not None:
            match = age
        elif match is None or not match.answered:
            match = (
                _inherited(clause.text, index, topic_entry)
                or _embedded(clause.text, index, context)
                or match
            )
        if match is None:
            continue
        found = (
            _as_topic_list(match, index, context)
            or _as_request_and_questions(match, index, context)
            or [match]
        )
        matches.extend(found)
        answered_here = [m for m in found if m.answered]
        if answered_here:
            topic_entry = answered_here[-1].entry_id
            unknown = None
        for m in found:
            if m.answered:
                entries.setdefault(m.entry_id, index.entry(m.entry_id))
            elif clause.question_shaped or len(clauses) == 1:
                unanswered.append(clause.text)
        if answered_here and _asks_for_unknown(clause.text, index):
            # Answered around the question: what it asks for stays unanswered (said so, and
            # reported to the operator as a question the base lacks).
            unanswered.append(clause.text)
    if not entries and not unanswered and text.strip():
        unanswered.append(text.strip())
    focused: dict[str, str] = {}
    for entry in entries.values():
        asked_by = [m for m in matches if m.answered and m.entry_id == entry.id]
        parts = {focus(entry.answer, m.clause, index, follow_up=m.inherited) for m in asked_by}
        if len(parts) == 1 and (part := parts.pop()) is not None:
            focused[entry.id] = part
    rule = index.config.age_rule
    asks_age = rule is not None and rule.entry in entries
    return Retrieval(
        entries=list(entries.values()),
        unanswered=unanswered,
        clauses=matches,
        asked=asking,
        focus=focused,
        ages=said if asks_age else [],
    )


def age_verdicts(ages: Sequence[int], rule: AgeRule, texts: TextSource, seed: str) -> str:
    """A yes or a no with the rule for each age asked about: too young, too old, a minor
    (the guardian's authorization), or simply welcome."""
    lines: list[str] = []
    for age in ages:
        if age < rule.min_age:
            key = rule.too_young_text_key
        elif age > rule.max_age:
            key = rule.too_old_text_key
        elif age < rule.adult_age:
            key = rule.allowed_minor_text_key
        else:
            key = rule.allowed_text_key
        lines.append(texts.text(key, seed=seed, idade=age))
    return "\n".join(lines)


def _minor_note(retrieval: Retrieval, rule: AgeRule | None, student_age: int | None) -> str | None:
    """The text key of the guardian's authorization note, when an entry about coming to class
    was answered for a student under the adult age and the age entry (which says it) was not."""
    if rule is None or rule.minor_note_text_key is None or student_age is None:
        return None
    ids = set(retrieval.entry_ids)
    if rule.entry in ids or not ids & set(rule.minor_entries):
        return None
    return rule.minor_note_text_key if student_age < rule.adult_age else None


def _wants_oferta_pointer(
    entries: list[FaqEntry], mode: str | None, config: FaqConfig, offer_booking: bool
) -> bool:
    pointer = config.oferta_pointer
    if not offer_booking or mode not in pointer.modes:
        return False
    tags = {t for e in entries for t in e.tags}
    return bool(tags & set(pointer.tags)) and not tags & set(pointer.skip_tags)


def _whole_answer(entry: FaqEntry, offer_booking: bool) -> str:
    """An entry's answer, closed with its offer to book when one may be made."""
    answer = entry.answer.strip()
    return f"{answer} {entry.offer.strip()}" if offer_booking and entry.offer else answer


def compose(
    retrieval: Retrieval,
    *,
    mode: str | None,
    config: FaqConfig,
    texts: TextSource,
    seed: str,
    llm_answer: FaqLLMAnswer | None = None,
    student_age: int | None = None,
    offer_booking: bool = True,
) -> FaqResult:
    """The reply for a retrieval: answers, an honest "don't know", the trial pointer.

    An LLM phrasing is used only when it cites retrieved entries and nothing else; otherwise
    the entries' own text is said. ``asks_question`` is read from the final text, so it is
    right whichever variant of a text was picked. ``student_age``: the age the conversation
    gave for its student (the memory's), which adds the guardian's authorization to what a
    minor must bring. ``offer_booking``: whether an answer may offer to book
    (``BookingContext.offers_booking``): an entry's whole answer then closes with its
    ``offer``, and the oferta pointer may be said.
    """
    used_llm = False
    rule = config.age_rule
    lines = [
        age_verdicts(retrieval.ages, rule, texts, seed)
        if rule is not None and retrieval.ages and e.id == rule.entry
        else retrieval.focus.get(e.id, _whole_answer(e, offer_booking))
        for e in retrieval.entries
    ]
    entry_ids = retrieval.entry_ids
    if llm_answer is not None and accept_llm_answer(llm_answer, retrieval.entry_ids):
        used_llm = True
        lines = [llm_answer.answer.strip()]
        entry_ids = [i for i in retrieval.entry_ids if i in set(llm_answer.ids_used)]
    if (note := _minor_note(retrieval, rule, student_age)) is not None:
        lines.append(texts.text(note, seed=seed))
    if retrieval.unanswered or not lines:
        key = config.partial_unknown_text_key if lines else config.unknown_text_key
        lines.append(texts.text(key, seed=seed))
    pointer = _wants_oferta_pointer(retrieval.entries, mode, config, offer_booking)
    if pointer:
        lines.append(texts.text(config.oferta_pointer.text_key, seed=seed))
    text = "\n\n".join(lines)
    answered: dict[str, float] = {}
    for c in retrieval.clauses:
        if c.answered:
            answered[c.entry_id] = max(c.score, answered.get(c.entry_id, c.score))
    return FaqResult(
        text=text,
        asks_question="?" in text,
        entry_ids=entry_ids,
        unanswered=retrieval.unanswered,
        scores={i: answered[i] for i in entry_ids},
        clauses=retrieval.clauses,
        source="llm" if used_llm else "rules",
        oferta_pointer=pointer,
        unknown_only=not retrieval.entries and not retrieval.asked,
    )


def answer(
    text: str,
    *,
    mode: str | None,
    index: FaqIndex,
    texts: TextSource,
    seed: str,
    llm_answer: FaqLLMAnswer | None = None,
) -> FaqResult:
    """The FAQ reply to ``text`` (rules mode when ``llm_answer`` is None)."""
    return compose(
        retrieve(text, index=index),
        mode=mode,
        config=index.config,
        texts=texts,
        seed=seed,
        llm_answer=llm_answer,
    )
