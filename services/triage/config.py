"""The ``triage:`` section of a domain pack, validated.

Everything a business would change lives here, not in code: which words point to which intent
and how strongly, which specialist owns each intent, what counts as a greeting, and the
clarification menu. Keyword phrases are written the way people write them (accents allowed) and
normalized once at load time, so matching works on the normalized message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from pydantic import BaseModel, Field, PrivateAttr, model_validator

from shared.nlu.bounds import limits_time
from shared.nlu.normalize import normalize
from shared.pack import Pack, PackError

# An intent a specialist handles: the pack's ``intents`` name them and ``routes`` sends each to
# its service, so a new specialist is a pack entry, not a code change.
SpecialistIntent = str


def _keyword_regex(phrase: str) -> str:
    """A whole-word regex for a keyword phrase; a trailing ``*`` makes it a word stem."""
    stem = phrase.endswith("*")
    words = normalize(phrase.rstrip("*"))
    if not words:
        raise ValueError(f"keyword {phrase!r} is empty after normalization")
    body = r"\s+".join(re.escape(word) for word in words.split())
    return rf"(?<!\w){body}" + (r"\w*" if stem else r"(?!\w)")


@dataclass(frozen=True)
class Keyword:
    """A keyword phrase's regex, tried only where the phrase's first word occurs at all: the
    substring test is far cheaper than the regex, and most of an intent's phrases are absent
    from any one message (scoring every regex was a tenth of triage's CPU per turn)."""

    first: str
    regex: re.Pattern[str]

    @classmethod
    def of(cls, phrase: str) -> Keyword:
        regex = re.compile(_keyword_regex(phrase))
        return cls(normalize(phrase.rstrip("*")).split()[0], regex)

    def search(self, normalized: str) -> bool:
        return self.first in normalized and self.regex.search(normalized) is not None


class WeightedPattern(BaseModel):
    """A regex over the normalized message and the evidence it adds to an intent."""

    pattern: str
    weight: float
    # The match only names what the intent is about ("a experimental"), like ``names``.
    names: bool = False


class IntentRules(BaseModel):
    """Evidence for one intent: keyword phrases and regexes, each with a weight.

    A message's score for the intent is the sum of the weights of what matches (each keyword
    or pattern counted once), clamped to [0, 1]; that is the intent's rules confidence.
    Negative weights let a phrase argue against the intent.

    ``names`` are the keywords that only name what the intent is about ("aula experimental"):
    a question naming it may ask about it ("quanto é a aula experimental?") without asking for
    it, so :meth:`score_beyond_names` leaves them (and the patterns marked ``names``) out.
    """

    keywords: dict[str, float] = Field(default_factory=dict)
    patterns: list[WeightedPattern] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _names_are_keywords(self) -> IntentRules:
        unknown = set(self.names) - set(self.keywords)
        if unknown:
            raise ValueError(f"names that are no keywords: {sorted(unknown)}")
        return self

    @cached_property
    def compiled(self) -> list[tuple[Keyword | re.Pattern[str], float, bool]]:
        """Each keyword and pattern compiled, with its weight and whether it only names the
        subject. A cached property, not a private attribute: pydantic looks those up through
        ``__getattr__`` on every read, a fifth of what scoring a message cost."""
        names = set(self.names)
        compiled: list[tuple[Keyword | re.Pattern[str], float, bool]]
        compiled = [(Keyword.of(k), w, k in names) for k, w in self.keywords.items()]
        compiled += [(re.compile(p.pattern), p.weight, p.names) for p in self.patterns]
        return compiled

    def score(self, normalized: str) -> float:
        total = sum(weight for regex, weight, _ in self.compiled if regex.search(normalized))
        return max(0.0, min(1.0, total))

    def score_beyond_names(self, normalized: str) -> float:
        """The score counting no evidence that only names the intent's subject: what of the
        message asks for the intent rather than about what it is about."""
        total = sum(
            weight
            for regex, weight, naming in self.compiled
            if not naming and regex.search(normalized)
        )
        return max(0.0, min(1.0, total))

    def hit(self, normalized: str) -> bool:
        """Whether any positive evidence appears (used to tell a question apart in a clause)."""
        return any(weight > 0 and regex.search(normalized) for regex, weight, _ in self.compiled)


class GeneralKind(BaseModel):
    """A kind of small talk (greeting, thanks, bye...) and the text that answers it."""

    name: str
    text_key: str
    keywords: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)

    @cached_property
    def compiled(self) -> list[re.Pattern[str]]:
        """The keywords' and patterns' regexes (a cached property: see ``IntentRules``)."""
        keywords = [re.compile(_keyword_regex(k)) for k in self.keywords]
        return keywords + [re.compile(p) for p in self.patterns]

    def matches(self, normalized: str) -> bool:
        return any(regex.search(normalized) for regex in self.compiled)


class ActiveContext(BaseModel):
    """When a specialist's flow is mid-conversation (its slice has a stage that is not idle),
    short answers belong to it."""

    intent: SpecialistIntent = "trial"
    # The state slice whose ``stage`` tells whether the flow is going on (default: the intent's).
    slice: str | None = None
    # Stages of that slice in which no conversation of the flow is going on.
    idle_stages: list[str] = Field(default_factory=lambda: ["booked"])
    # Keyword phrases that answer the flow's own questions ("pix", "3x"): mid-flow, a message
    # with one of them that asks nothing is the flow's alone, even if another intent knows the
    # word as a topic.
    answer_words: list[str] = Field(default_factory=list)
    # Stages in which the flow holds something the person may ask again ("booked"), and the
    # patterns (normalized text) of asking it again ("que horas é mesmo?"): then the message
    # is the flow's, which says what it holds, not the FAQ's timetable.
    held_stages: list[str] = Field(default_factory=list)
    recall_patterns: list[str] = Field(default_factory=list)
    # In those stages, what a message says bare only means after what the flow holds ("quero
    # continuar" once the class is booked is staying on, enrolling): intent → patterns, taken
    # when nothing else claims the message.
    after_patterns: dict[SpecialistIntent, list[str]] = Field(default_factory=dict)
    _answers: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _recalls: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _afters: list[tuple[SpecialistIntent, re.Pattern[str]]] = PrivateAttr(default_factory=list)

    def model_post_init(self, _context: object) -> None:
        self._answers = [re.compile(_keyword_regex(w)) for w in self.answer_words]
        self._recalls = [re.compile(p) for p in self.recall_patterns]
        self._afters = [(i, re.compile(p)) for i, ps in self.after_patterns.items() for p in ps]

    def after(self, stage: str | None, normalized: str) -> SpecialistIntent | None:
        """The intent a message means after what the flow holds in ``stage``, if any."""
        if stage not in self.held_stages:
            return None
        return next((i for i, regex in self._afters if regex.search(normalized)), None)

    def recalled(self, stage: str | None, normalized: str) -> bool:
        """Whether a message asks again what the flow holds in ``stage``."""
        return stage in self.held_stages and any(r.search(normalized) for r in self._recalls)

    @property
    def state_slice(self) -> str:
        return self.slice or self.intent

    def answered_in(self, normalized: str) -> bool:
        return any(regex.search(normalized) for regex in self._answers)


class ClarifyOption(BaseModel):
    """One line of the N1 menu.

    ``intent`` is what choosing it forces (None: the option cancels the clarification);
    ``confirm`` asks the N2 question before routing; ``words`` let people answer with a word
    instead of the number.
    """

    id: str
    label_key: str
    intent: SpecialistIntent | None = None
    confirm: bool = False
    subject_key: str | None = None
    words: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _confirm_needs_subject(self) -> ClarifyOption:
        if self.confirm and not self.subject_key:
            raise ValueError(f"option {self.id!r} asks for confirmation but has no subject_key")
        if self.confirm and self.intent is None:
            raise ValueError(f"option {self.id!r} cancels; it cannot ask for confirmation")
        return self

    @cached_property
    def compiled(self) -> list[re.Pattern[str]]:
        """The words' regexes (a cached property: see ``IntentRules``)."""
        return [re.compile(_keyword_regex(w)) for w in self.words]

    def named_in(self, normalized: str) -> bool:
        return any(regex.search(normalized) for regex in self.compiled)


class ClarifyTexts(BaseModel):
    """Text keys of the clarification dialogue (each may hold several variants)."""

    ask: str = "clarify_ask"
    invalid: str = "clarify_invalid"
    confirm: str = "clarify_confirm"
    confirm_again: str = "clarify_confirm_again"
    cancelled: str = "clarify_cancelled"
    declined: str = "clarify_declined"


class ClarificationConfig(BaseModel):
    """N1 (menu) and N2 (confirmation) for messages the rules cannot place."""

    enabled: bool = True
    # A message longer than this with no action pattern is ambiguous even if some keyword hit.
    long_message_chars: int = 150
    action_patterns: list[str] = Field(default_factory=list)
    # A pending clarification older than this (business time, Turn.now) is forgotten.
    expire_after_minutes: float = 30.0
    # The menu is shown at most this many times for one clarification; another unclear answer
    # hands the conversation to a person instead of showing it again.
    max_menus: int = Field(default=2, ge=1)
    # Where a clarification that stayed unclear goes (the handoff carries what was understood).
    unclear_intent: SpecialistIntent = "handoff"
    # Longer answers are read as a new message, not as a menu choice.
    choice_max_words: int = 5
    # ordinals[i] are the words that pick option i + 1 ("primeira", "segundo"...).
    ordinals: list[list[str]] = Field(default_factory=list)
    options: list[ClarifyOption]
    texts: ClarifyTexts = Field(default_factory=ClarifyTexts)
    _actions: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _ordinals: list[list[re.Pattern[str]]] = PrivateAttr(default_factory=list)

    def model_post_init(self, _context: object) -> None:
        self._actions = [re.compile(p) for p in self.action_patterns]
        self._ordinals = [[re.compile(_keyword_regex(w)) for w in ws] for ws in self.ordinals]

    def has_action(self, normalized: str) -> bool:
        return any(regex.search(normalized) for regex in self._actions)

    def ordinal_choices(self, normalized: str) -> set[int]:
        """Option indexes (0-based) named by an ordinal word in the message."""
        return {
            index
            for index, regexes in enumerate(self._ordinals)
            if index < len(self.options) and any(r.search(normalized) for r in regexes)
        }


class QuestionRules(BaseModel):
    """What makes a clause a question, and which questions are about the booking itself.

    Word lists are matched on the normalized clause. ``joiner_words`` join clauses inside a
    sentence ("quero agendar e onde fica?"); ``flow_patterns`` mark a question the booking flow
    answers (a slot, why a field is asked); ``faq_min_coverage`` is how much of a question
    clause the best FAQ entry must know for the knowledge base to count as evidence of faq.
    """

    start_words: list[str] = Field(default_factory=list)
    asking_patterns: list[str] = Field(default_factory=list)
    flow_patterns: list[str] = Field(default_factory=list)
    # A statement closed by a tag that asks for a confirmation ("..., né"): a question
    # without "?" nor a question word first.
    tag_patterns: list[str] = Field(default_factory=list)
    # A question the booking answers, not the FAQ: how a booking already made stands ("ficou
    # marcado?", "qual horário ficou a aula dela?": the class it holds, where the FAQ knows
    # only the timetable), or how to book ("como faço pra marcar uma aula?": by starting).
    booking_patterns: list[str] = Field(default_factory=list)
    # Which days or times there are, asked bare ("qual dia tem?", "que horas?", "e de
    # manhã?"): mid-booking the booking's question was the last the bot asked, so these are
    # its slots' (also right after the FAQ answered something else), never the opening hours.
    slot_patterns: list[str] = Field(default_factory=list)
    joiner_words: list[str] = Field(default_factory=lambda: ["e", "ou", "tambem"])
    faq_min_coverage: float = Field(default=0.8, ge=0, le=1)
    # Right after the FAQ answered, a message this short that asks something or opens with
    # a joiner ("e no sábado?") is the next question of the same conversation.
    follow_up_words: int = Field(default=8, gt=0)
    # Words that open a condition ("se eu fechar o plano, a experimental é descontada?"):
    # before the question of its sentence, a condition sets the case asked about, and what it
    # names ("fechar o plano") is no request.
    condition_words: list[str] = Field(default_factory=list)
    _starts: re.Pattern[str] = PrivateAttr()
    _asking: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _flow: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _tags: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _booking: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _slots: list[re.Pattern[str]] = PrivateAttr(default_factory=list)
    _joiners: re.Pattern[str] = PrivateAttr()

    def model_post_init(self, _context: object) -> None:
        words = sorted({normalize(w) for w in self.start_words if normalize(w)}, key=len)
        alternation = "|".join(re.escape(w) for w in reversed(words)) or r"(?!)"
        self._starts = re.compile(rf"^(?:{alternation})(?!\w)")
        self._asking = [re.compile(p) for p in self.asking_patterns]
        self._flow = [re.compile(p) for p in self.flow_patterns]
        self._tags = [re.compile(p) for p in self.tag_patterns]
        self._booking = [re.compile(p) for p in self.booking_patterns]
        self._slots = [re.compile(p) for p in self.slot_patterns]
        joiners = "|".join(re.escape(w) for w in self.joiner_words) or r"(?!)"
        self._joiners = re.compile(rf"(\s*,?\s+(?:{joiners})\s+)", re.IGNORECASE)

    @property
    def joiners(self) -> re.Pattern[str]:
        """Splits raw text at a joiner word, keeping the joiner (capturing group)."""
        return self._joiners

    def starts_question(self, normalized: str) -> bool:
        return bool(self._starts.match(normalized))

    def ends_with_tag(self, normalized: str) -> bool:
        return any(r.search(normalized) for r in self._tags)

    def asks(self, normalized: str, *, exclaimed: bool = False) -> bool:
        """A question word first (unless the clause was closed by "!": "que bom!" exclaims),
        a tag asking for a confirmation last, or a request for information anywhere."""
        return (
            (self.starts_question(normalized) and not exclaimed)
            or self.ends_with_tag(normalized)
            or any(r.search(normalized) for r in self._asking)
        )

    def sets_case(self, normalized: str) -> bool:
        """Whether a clause opens with a condition word, after a joiner if any ("e se ...")."""
        words = normalized.split()
        if words and words[0] in {normalize(w) for w in self.joiner_words}:
            words = words[1:]
        return len(words) > 1 and words[0] in {normalize(w) for w in self.condition_words}

    def about_flow(self, normalized: str) -> bool:
        return self.asks_slots(normalized) or any(regex.search(normalized) for regex in self._flow)

    def asks_slots(self, normalized: str) -> bool:
        """A bare question of which days or times there are (``slot_patterns``), or a limit on
        the time ("e depois das 19h?", "tem algo mais tarde?"), which the booking answers with
        the classes within it."""
        return limits_time(normalized) or any(regex.search(normalized) for regex in self._slots)

    def for_booking(self, normalized: str) -> bool:
        return any(regex.search(normalized) for regex in self._booking)


class LLMPrompt(BaseModel):
    """How the LLM is asked (llm and hybrid modes); placeholders: {stage}, {text}."""

    system: str
    context: str
    user: str


class ModeConfirmation(BaseModel):
    """How triage reads a bare yes/no while the funnel (mode_router) waits for one.

    The mode router asks its micro-confirmation ("Quer que eu te mostre os horários da aula
    experimental?"); a "sim" is then a wish for what it offered (``yes_intent``), and a "não"
    gets a friendly acknowledgement — never the clarification menu.
    """

    # None: no specialist follows the question up; triage answers the yes itself with
    # ``accepted_text_key``.
    yes_intent: SpecialistIntent | None = "trial"
    accepted_text_key: str | None = None
    declined_text_key: str = "general_ack"

    @model_validator(mode="after")
    def _yes_answered(self) -> ModeConfirmation:
        if self.yes_intent is None and self.accepted_text_key is None:
            raise ValueError("mode_confirmation without a yes_intent needs an accepted_text_key")
        return self


class TriageConfig(BaseModel):
    """The ``triage:`` pack section."""

    # An intent whose rules confidence reaches this is detected.
    threshold: float = 0.5
    # Hybrid mode asks the LLM when an intent has some evidence (>= llm_floor) but not enough.
    llm_floor: float = 0.2
    intents: dict[SpecialistIntent, IntentRules]
    # Which specialist service handles each intent (handoff is owned by one of them).
    routes: dict[SpecialistIntent, str]
    # Small-talk kinds, highest priority first ("obrigado, tchau" answers as bye).
    general: list[GeneralKind] = Field(default_factory=list)
    fallback_text_key: str = "general_fallback"
    # Small talk that ends the talk for now ("valeu, qualquer coisa te chamo"): mid-booking it
    # is answered as such, not taken for an answer to the booking's question.
    closing: list[str] = Field(default_factory=list)
    active_context: ActiveContext = Field(default_factory=ActiveContext)
    # Further flows that make short answers theirs while they go on, after ``active_context``
    # in priority (see ``rules.active_flow``).
    active_contexts: list[ActiveContext] = Field(default_factory=list)
    clarification: ClarificationConfig
    questions: QuestionRules = Field(default_factory=QuestionRules)
    mode_confirmation: ModeConfirmation = Field(default_factory=ModeConfirmation)
    # The intent an upset customer is routed to (``shared.nlu.upset``): a person takes over.
    upset_intent: SpecialistIntent | None = None
    # Said to a calm complaint of the service ("vocês demoram demais pra responder":
    # ``shared.nlu.upset.complains``) that asks nothing else: sorry, as small talk, not a
    # question the FAQ cannot answer.
    complaint_text_key: str | None = None
    # Said before the answers to a calm complaint that also asks or wants something ("que
    # demora, vocês abrem sábado?"): the question is answered and the complaint heard. The
    # booking, when it takes the turn, says its own sorry next to its question.
    complaint_aside_text_key: str | None = None
    # What the answer to one intent offers next, by what the question leaned to: an answered
    # question about the trial class closes with an offer to book it, one about the plans with
    # the plans to enroll in, so a bare "quero sim" after it accepts that offer
    # (``services.triage.acts``).
    offers: dict[SpecialistIntent, list[SpecialistIntent]] = Field(default_factory=dict)
    llm: LLMPrompt

    @model_validator(mode="after")
    def _every_intent_routed(self) -> TriageConfig:
        missing = set(self.intents) - set(self.routes)
        if missing:
            raise ValueError(f"intents without a route: {sorted(missing)}")
        named = {
            *(c.intent for c in self.contexts),
            self.clarification.unclear_intent,
            *filter(None, [self.mode_confirmation.yes_intent, self.upset_intent]),
            *self.offers,
            *(o for offered in self.offers.values() for o in offered),
            *(o.intent for o in self.clarification.options if o.intent is not None),
        }
        unknown = named - set(self.intents)
        if unknown:
            raise ValueError(f"intents named but not defined: {sorted(unknown)}")
        return self

    @property
    def contexts(self) -> list[ActiveContext]:
        """Every flow that can be going on, highest priority first."""
        return [self.active_context, *self.active_contexts]

    def text_keys(self) -> set[str]:
        """Every text key the section refers to (checked against the pack at load)."""
        clarify = self.clarification
        keys = {self.fallback_text_key, *(kind.text_key for kind in self.general)}
        keys |= set(
            filter(
                None,
                [
                    self.mode_confirmation.accepted_text_key,
                    self.complaint_text_key,
                    self.complaint_aside_text_key,
                ],
            )
        )
        if clarify.enabled:  # a disabled clarification never says its texts
            keys |= set(clarify.texts.model_dump().values())
        for option in clarify.options:
            keys.add(option.label_key)
            if option.subject_key:
                keys.add(option.subject_key)
        return keys


def load_config(pack: Pack) -> TriageConfig:
    """The pack's triage section, failing at startup when a text it names is missing."""
    config = pack.section("triage", TriageConfig)
    missing = sorted(config.text_keys() - set(pack.sections.get("texts", {})))
    if missing:
        raise PackError(f"pack {pack.name!r}: triage refers to missing texts {missing}")
    return config
