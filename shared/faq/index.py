"""The BM25 index over a pack's FAQ entries, built once per pack and queried per clause.

Each question variant and each answer is its own BM25 document, so a short variant that
matches well is not diluted by an entry's other phrasings; an entry scores as its best
document. Besides the score, a match reports its *coverage*: the share of the clause's
information (its terms weighted by idf, a word the base never uses weighing most) that the
entry knows at all, which is what tells "preciso de raquete?" (all known) from "vcs vendem
raquete?" ("vendem" is unknown and outweighs the rest).
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

import bm25s
import numpy as np

from shared.faq.analysis import Analyzer, stem
from shared.faq.config import FaqConfig, FaqEntry
from shared.nlu.dates import without_dates_and_times
from shared.nlu.normalize import normalize


@dataclass(frozen=True)
class Match:
    """The best entry for one clause."""

    entry_id: str
    score: float
    coverage: float
    # The entry shares only the question's frame with the clause ("quanto custa"), not one
    # of the things it names (``FaqIndex.object_terms``): it must not answer it.
    frame_only: bool = False


def _initial(word: str) -> str:
    """First letter ignoring a silent "h": typos keep it ("orario"), other words do not
    ("alugar" is not a typo of "lugar")."""
    return word.removeprefix("h")[:1]


def _idf(documents: list[list[str]]) -> dict[str, float]:
    """BM25's inverse document frequency of every term of the corpus."""
    frequency = Counter(t for doc in documents for t in set(doc))
    total = len(documents)
    return {t: math.log(1 + (total - n + 0.5) / (n + 0.5)) for t, n in frequency.items()}


class FaqIndex:
    """A pack's FAQ entries, analysed and indexed; read-only after construction."""

    def __init__(self, config: FaqConfig) -> None:
        self.config = config
        self.analyzer = Analyzer(
            extra_stopwords=config.extra_stopwords,
            kept_words=config.kept_words,
            filler_phrases=config.filler_phrases,
            question_words=config.question_words,
            synonyms=config.synonyms,
            own_words={
                w
                for e in config.entries
                for text in (*e.questions, e.answer)
                for w in normalize(text).split()
            },
        )
        self._entries = {e.id: e for e in config.entries}
        # Per entry, the word beginnings a question must use one of (``FaqEntry.requires``).
        self._requires = [tuple(e.requires) for e in config.entries]
        # The offer words as a message's normalized words read (``FaqConfig.offer_words``).
        self.offer_words = frozenset(normalize(w) for w in config.offer_words)
        documents: list[list[str]] = []
        owners: list[int] = []
        words: set[str] = set()
        self._entry_terms: list[frozenset[str]] = []
        for position, entry in enumerate(config.entries):
            terms: set[str] = set()
            for text in [*entry.questions, entry.answer, " ".join(entry.tags)]:
                doc_words = self.analyzer.words(text)
                words.update(doc_words)
                doc = [stem(w) for w in doc_words]
                terms.update(doc)
                if doc:
                    documents.append(doc)
                    owners.append(position)
            self._entry_terms.append(frozenset(terms))
        self._idf = _idf(documents)
        self._frame_terms = self._frame(config)
        self._determiners = frozenset(normalize(w) for w in config.determiners)
        # Who a question is for ("criança", "alguém de 60 anos"): the age entry's business,
        # beside what another entry answers ("criança paga quanto?"), never the object asked.
        rule = config.age_rule
        whom = (*rule.person_words, *rule.age_words) if rule is not None else ()
        self._whom_terms = frozenset(stem(w) for text in whom for w in self.analyzer.words(text))
        # A word the base never uses is as informative as the rarest word it does use.
        self._unknown_idf = math.log(1 + (len(documents) + 0.5) / 0.5)
        self._owners = np.asarray(owners)
        self._vocabulary = sorted(words)
        self._known_terms = frozenset().union(*self._entry_terms)
        self._bm25 = bm25s.BM25()
        self._bm25.index(documents, show_progress=False)

    def _frame(self, config: FaqConfig) -> frozenset[str]:
        """The terms the questions of ``config.frame_entries`` entries or more use: how
        people ask ("quanto custa", "pode", "aula"), not what about."""
        used_by: Counter[str] = Counter()
        for entry in config.entries:
            used_by.update(
                {stem(w) for question in entry.questions for w in self.analyzer.words(question)}
            )
        return frozenset(t for t, n in used_by.items() if n >= config.frame_entries)

    def object_terms(self, text: str) -> frozenset[str]:
        """The content terms of ``text`` that say what it asks about: not the question's
        frame (terms many entries' questions use), not whom it is asked for, and a word the
        base never uses only where a thing is named (after a determiner: "a piscina"; "me
        explica" is a verb of the frame)."""
        words = normalize(text).split()
        named = {
            w for before, w in zip(["", *words], words, strict=False) if before in self._determiners
        }
        unknown_named = {t for w in named for t in self.content_terms(w) if not self.known(t)}
        return frozenset(
            t
            for t in self.content_terms(text)
            if not t.isdigit()
            and t not in self._frame_terms
            and t not in self._whom_terms
            and (self.known(t) or t in unknown_named)
        )

    def entry(self, entry_id: str) -> FaqEntry:
        return self._entries[entry_id]

    def entry_terms(self, entry_id: str) -> frozenset[str]:
        """Every term an entry's questions, answer and tags use."""
        position = next(i for i, e in enumerate(self.config.entries) if e.id == entry_id)
        return self._entry_terms[position]

    def content_terms(self, text: str) -> frozenset[str]:
        """The terms of ``text`` that say what it is about: no question word ("pode",
        "tem"), no number."""
        words = self.analyzer.words(text)
        asking = self.analyzer.question_words
        return frozenset(self._term(w) for w in words if w not in asking and not w.isdigit())

    def share_in(self, terms: Collection[str], entry_id: str) -> float:
        """The idf-weighted share of ``terms`` an entry uses (1 when there are none)."""
        weights = {t: self._idf.get(t, self._unknown_idf) for t in terms}
        total = sum(weights.values())
        if not total:
            return 1.0
        own = self.entry_terms(entry_id)
        return sum(w for t, w in weights.items() if t in own) / total

    def known(self, term: str) -> bool:
        """Whether some entry uses the term."""
        return term in self._known_terms

    def terms(self, text: str) -> list[str]:
        """Stemmed query terms of ``text``, typos mapped to the closest known word."""
        return [self._term(w) for w in self.analyzer.words(text)]

    def _term(self, word: str) -> str:
        term = stem(word)
        if term in self._known_terms or len(word) < 4 or not word.isalpha():
            return term
        candidates = [w for w in self._vocabulary if _initial(w) == _initial(word)]
        close = difflib.get_close_matches(word, candidates, n=1, cutoff=self.config.fuzzy_cutoff)
        return stem(close[0]) if close else term

    def answers(self, match: Match) -> bool:
        """Whether a match is good enough to be said (the FAQ's threshold and coverage, and
        not on the question's frame alone)."""
        return (
            match.score >= self.config.threshold
            and match.coverage >= self.config.min_coverage
            and not match.frame_only
        )

    def best(
        self, text: str, *, tags: Collection[str] = (), without_dates: bool = True
    ) -> Match | None:
        """The best entry for a clause, or None when the clause has no content words (or no
        entry carries one of ``tags``, when given: the best among those entries).

        A clause that falls short as a whole is tried again without the days and times it
        names: in "amanhã às 19h tem estacionamento?" the day and time are values the person
        gives, and their words (unknown, or another entry's) hide what is asked; so is a clause
        whose match knows less of it than the match of what is left once they are set aside
        ("terça às 18h tem estacionamento?" is not about the trial class's Tuesdays). A clause
        that is nothing but a day ("abre sábado?") keeps it: then the day is the question.
        ``without_dates=False`` reads the clause only as said (triage's evidence: "dá pra marcar
        pra terça?" is a booking request, not a question the FAQ knows once its day is gone)."""
        match = self._best(self.terms(text), self.object_terms(text), tags)
        if not without_dates or (match is not None and self.answers(match) and match.coverage >= 1):
            return match
        rest = without_dates_and_times(text)
        if not self.content_terms(rest) or rest == normalize(text):
            return match
        reread = self._best(self.terms(rest), self.object_terms(rest), tags)
        if reread is None or not self.answers(reread):
            return match
        if match is not None and self.answers(match) and match.coverage >= reread.coverage:
            return match
        return reread

    def _best(
        self, terms: list[str], objects: frozenset[str], tags: Collection[str]
    ) -> Match | None:
        allowed = [i for i, e in enumerate(self.config.entries) if set(e.tags) & set(tags)]
        if not terms or (tags and not allowed):
            return None
        scores = self._bm25.get_scores(terms)
        per_entry = np.zeros(len(self._entry_terms))
        np.maximum.at(per_entry, self._owners, scores)
        if tags:
            mask = np.full(len(per_entry), -np.inf)
            mask[allowed] = 0.0
            per_entry = per_entry + mask
        for position, required in enumerate(self._requires):
            if required and not any(t.startswith(required) for t in terms):
                per_entry[position] = -np.inf
        if not np.isfinite(per_entry).any():
            return None
        # A number is a value the person gives ("meu filho de 7 anos"), not part of the topic.
        weights = {t: self._idf.get(t, self._unknown_idf) for t in set(terms) if not t.isdigit()}
        if not weights:
            position = int(np.argmax(per_entry))
            return Match(entry_id=self.config.entries[position].id, score=0.0, coverage=0.0)
        total = sum(weights.values())
        coverages = np.asarray(
            [
                sum(w for t, w in weights.items() if t in known) / total
                for known in self._entry_terms
            ]
        )
        # What the clause names beyond how it asks: an entry knowing none of it matched the
        # frame only ("quanto custa o estacionamento?" is not asking the plans' prices).
        naming = np.asarray([not objects or bool(objects & known) for known in self._entry_terms])
        # An entry that knows enough of the question beats one that only matches a word of it
        # more strongly ("a mensalidade aceita boleto?" is about paying, though "mensalidade"
        # alone is the plans' word).
        answering = (
            (per_entry >= self.config.threshold) & (coverages >= self.config.min_coverage) & naming
        )
        ranked = np.where(answering, per_entry, -np.inf) if answering.any() else per_entry
        position = int(np.argmax(ranked))
        coverage = float(coverages[position])
        return Match(
            entry_id=self.config.entries[position].id,
            score=float(per_entry[position]),
            coverage=coverage,
            frame_only=not naming[position],
        )
