"""The ``faq`` pack section: the knowledge base and the knobs that decide what counts as known.

Everything a business would change (entries, threshold, words to ignore, the trial-class
pointer) lives in the pack, so another business gets its own FAQ without touching code.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.contracts import TrialView


class FaqEntry(BaseModel):
    """One fact the assistant may state, with the ways people ask for it."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    questions: list[str] = Field(min_length=1)
    answer: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    # Beginnings of words (normalized stems: "cancel", "desist") of which a question must use
    # one for this entry to answer it: what the entry is about when its other words are
    # another entry's too ("como faço pra me matricular?" shares every word but one with "como
    # faço pra cancelar a matrícula", and is not about cancelling). Empty: no such word.
    requires: list[str] = Field(default_factory=list)
    # What the answer closes with to offer the booking ("Se quiser, é só me dizer que eu agendo
    # pra você"): said only to someone with no booking made or going on
    # (``BookingContext.offers_booking``).
    offer: str | None = None


class BookingContext(BaseModel):
    """Which entries a question is about while a booking is going on: mid-booking, "quanto
    custa?" asks the price of what is being booked."""

    model_config = ConfigDict(frozen=True)

    # The stages of the trial booking flow in which a booking is going on.
    active_stages: list[str] = Field(min_length=1)
    # Tags of the entries about what is being booked.
    tags: list[str] = Field(min_length=1)
    # The entries (ids) whose answer the booking's own replies give (its days, times and
    # price): a question beside a booking that one of them answers is the booking's to
    # answer; one that another entry about the booked class answers ("preciso levar alguma
    # coisa?") is the FAQ's. Empty: every entry of ``tags``.
    replied_by_booking: list[str] = Field(default_factory=list)
    # The stages of the trial booking flow once the class is booked.
    booked_stages: list[str] = Field(default_factory=lambda: ["booked"])

    def tags_for(self, trial: TrialView | None) -> list[str]:
        """The context tags for the trial flow as loaded (none when no booking is on)."""
        if trial is None or trial.stage not in self.active_stages:
            return []
        return list(self.tags)

    def offers_booking(self, trial: TrialView | None) -> bool:
        """Whether an answer may offer to book (an entry's ``offer``, the oferta pointer): no
        class is booked (a booking kept, or a booked stage)."""
        if trial is None:
            return True
        return trial.booking_id is None and trial.stage not in self.booked_stages


class OfertaPointer(BaseModel):
    """When to close a price/schedule answer with a nudge towards the free trial class."""

    model_config = ConfigDict(frozen=True)

    modes: list[str] = Field(default_factory=lambda: ["oferta"])
    tags: list[str] = Field(min_length=1)
    # Answers already about the trial class need no pointer to it.
    skip_tags: list[str] = Field(default_factory=list)
    text_key: str


class AgeRule(BaseModel):
    """Who may take classes, by age: a question about someone's age ("minha filha tem 9,
    pode?") gets a yes or a no with the rule instead of the rule alone. The ages are the
    booking rules' own (references to the trial section in the pack)."""

    model_config = ConfigDict(frozen=True)

    # The entry about ages, whose answer the verdicts replace when the message gives an age.
    entry: str = Field(min_length=1)
    min_age: int = Field(ge=0)
    max_age: int = Field(ge=0)
    # Younger than this needs the guardian's authorization.
    adult_age: int = Field(ge=0)
    allowed_text_key: str
    allowed_minor_text_key: str
    too_young_text_key: str
    too_old_text_key: str
    # Words that carry the age or the person only ("anos", "alguém"): not what is asked about.
    age_words: list[str] = Field(default_factory=list)
    # Words asking whether someone may take part ("pode", "aceitam"): with an age, the
    # question is about that age whatever words name the person ("minha sogra de 70 pode?").
    permission_words: list[str] = Field(default_factory=list)
    # Words naming whom a question is for ("criança", "filho"): beside something the age entry
    # does not know they say for whom it is asked ("criança paga quanto?" asks the price);
    # alone, the age rule is what is asked ("tem aula pra criança?").
    person_words: list[str] = Field(default_factory=list)
    # Entries about coming to a class ("o que levar"): when the conversation's student is a
    # minor, their answer adds the guardian's authorization (``minor_note_text_key``), which a
    # parent asking what the child needs must hear even though the question names no age.
    minor_entries: list[str] = Field(default_factory=list)
    minor_note_text_key: str | None = None


class FollowUp(BaseModel):
    """How an elliptical question ("e no sábado?", "e o de 3x?") is read against the last
    question the FAQ answered."""

    model_config = ConfigDict(frozen=True)

    # The last answered question is the conversation's topic for this long (business time).
    minutes: int = Field(default=30, gt=0)
    # Longer clauses say what they ask about; only shorter ones inherit a topic.
    max_words: int = Field(default=8, gt=0)
    # Words that open a follow-up ("e no sábado?", "mas e a de 12?"); a clause without one
    # continues the topic only when it names nothing at all ("com 12 pode?").
    openers: list[str] = Field(default_factory=lambda: ["e", "mas", "ou"])
    # Words that, after an opener, ask the last question again for another case ("e pra
    # estudante?", "e pra quem paga à vista?"): after a question the base could not answer,
    # such a follow-up is not known either, whatever its own words match.
    another_case: list[str] = Field(default_factory=lambda: ["para"])


class EmbeddedQuestion(BaseModel):
    """Where a question sits inside a long message without punctuation (a transcribed voice
    note): right after a phrase that asks ("queria saber se ..."), up to a word that starts
    the reason or the next thought ("porque", "enfim")."""

    model_config = ConfigDict(frozen=True)

    cues: list[str] = Field(default_factory=list)
    stops: list[str] = Field(default_factory=list)
    # How many words after a cue are read as the question.
    max_words: int = Field(default=10, gt=0)


class FaqConfig(BaseModel):
    """The ``faq`` section of a pack."""

    model_config = ConfigDict(frozen=True)

    # Minimum BM25 score of the best entry for a clause to count as answered.
    threshold: float = Field(gt=0)
    # Minimum share of a clause's content words found in the best entry's vocabulary: a
    # question about something the base never mentions ("vendem raquete?") shares one word
    # with an entry but not the rest.
    min_coverage: float = Field(ge=0, le=1)
    # difflib ratio above which an unknown word is read as a typo of a known one.
    fuzzy_cutoff: float = Field(gt=0, le=1)
    # Word lists below are matched after shared normalization, so accents and case do not
    # matter. Words that carry no meaning for retrieval, on top of the library's Portuguese list.
    extra_stopwords: list[str] = Field(default_factory=list)
    # Words of the library's list that do carry meaning here: "como" asks for a manner ("como
    # pago?" is about payment methods) where "quanto" asks for an amount (a price).
    kept_words: list[str] = Field(default_factory=list)
    # Phrases (greetings, politeness) removed before retrieval.
    filler_phrases: list[str] = Field(default_factory=list)
    # Words read as another word the base uses ("gratis" → "gratuito"); a key of several words
    # is a phrase read as that word ("quantos anos" → "idade").
    synonyms: dict[str, str] = Field(default_factory=dict)
    # Clauses starting with one of these are questions; "," / " e " / " ou " between two of
    # them separates two questions.
    question_words: list[str] = Field(default_factory=list)
    # Words that ask whether something is there or given ("tem", "existe", "rola"): the first
    # content word after one is the thing asked. When no entry knows it ("tem desconto pra
    # pagar no pix?"), an entry matched on the rest answers around it, not it: the reply says so.
    offer_words: list[str] = Field(default_factory=list)
    # A term the questions of at least this many entries use is part of how people ask
    # ("quanto custa", "pode", "aula"), not of what they ask about: an entry that shares only
    # such terms with a clause naming something it does not know ("quanto custa o
    # estacionamento?" and the plans' prices) matched the question's frame, not its object.
    frame_entries: int = Field(default=3, ge=2)
    # Words after which a word names a thing ("o", "da", "pra"): a word the base never uses
    # is an object asked about only there ("quanto custa a piscina?"), not after a pronoun,
    # where it is a verb of the frame ("me explica como é a aula").
    determiners: list[str] = Field(default_factory=list)
    # Words that open a condition ("se eu fechar o plano, ..."): beside another part of the
    # clause, a condition sets the case; the other part is what is asked.
    condition_words: list[str] = Field(default_factory=list)
    unknown_text_key: str
    partial_unknown_text_key: str
    oferta_pointer: OfertaPointer
    booking_context: BookingContext | None = None
    age_rule: AgeRule | None = None
    follow_up: FollowUp = Field(default_factory=FollowUp)
    embedded: EmbeddedQuestion = Field(default_factory=EmbeddedQuestion)
    llm_instructions: str = Field(min_length=1)
    entries: list[FaqEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> FaqConfig:
        ids = [e.id for e in self.entries]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate faq entry ids: {duplicates}")
        if self.age_rule is not None and self.age_rule.entry not in ids:
            raise ValueError(f"faq age_rule names entry {self.age_rule.entry!r}, not an entry")
        unknown = sorted(
            set(self.booking_context.replied_by_booking if self.booking_context else ()) - set(ids)
        )
        if unknown:
            raise ValueError(f"faq booking_context.replied_by_booking names no entry: {unknown}")
        return self

    def entry(self, entry_id: str) -> FaqEntry:
        """The entry with this id (KeyError when the pack has none)."""
        for e in self.entries:
            if e.id == entry_id:
                return e
        raise KeyError(entry_id)
