"""Name, age and level as people type them on WhatsApp.

Each extractor returns None rather than guess: a wrong name or age written into the trial state
is worse than asking again. ``expecting_*`` says the bot's last question asked for that field,
which is what makes a bare "João" a name and a bare "27" an age.

Name rules (``extract_people``; ``extract_name`` is its student's name):
- a cue anywhere: "me chamo X", "meu nome é X", "nome: X", "nome completo: X", "sou o/a X",
  "aqui é (o/a) X", "quem fala é X", "(pode) me chama(r)/chamem de X" (the writer), "o nome
  dele/dela é X", "ele se chama X" (someone else), "pode colocar X", "bota X" (either); "sou X"
  only when X is capitalised, a name is expected, or the message also gives booking data ("sou
  carla 29 anos") — "sou iniciante" and "sou nova aqui" are not names;
- a relation ("pra minha filha Sofia", "meu filho Pedro de 9 anos", "minha esposa, Juliana"):
  the booking is for someone else, the name after it is the student's and the writer's own cue
  gives ``contact_name``;
- a clause that is only a name ("Paulo", "Renata aqui") in a message that also gives an age, a
  level, a date or a time, anywhere in it ("quero agendar. Paulo, 50 anos", "terça 19h, Lia");
  "X aqui" opening a message counts alone;
- with ``expecting_name``, a first clause made only of name-like words, after "não, é", "é o"
  and the like ("paulo", "maria eduarda", "não, é Maria");
- a message that opens with "é X" and a capitalised X ("ah, é Thamires com TH"): a correction;
  "é pro/pra X", "ele é o X" / "ela é a X" talk about someone else; "chamo-me X", "me llamo
  X", "mi nombre es X", "my name is X" and a sign-off ("Atenciosamente, X") are the writer's;
- a nickname followed by a fuller name alone in its clause ("sou o Dudu kkk Eduardo Mota",
  "ela é a Bia, Beatriz Souza"): the fuller one;
- an apposition after a relation or opening a clause ("pra minha avó, a Rosa", "pro meu
  sobrinho, o Enzo, 10 anos", "minha esposa a carla"); in that place a capitalised word is a
  name even when it is also a word ("a Graça", not "de graça");
- name-like words right before an age-like number or "tenho N", in a message with booking data
  ("ana clara 23 anos", "bia souza tenho 30"), unless a preposition puts a place there ("moro em
  Niterói, 30 anos");
- with ``expecting_name``, a later clause that is only a name ("sou eu mesma que vou, Rita").
A word stuck to a number or right after one ("19hs", "41 anso") is a unit, never a name; English
and Spanish function words ("My Name Is", "el jueves") are not names, nor is a function word or
verb with two letters swapped ("tneho").
A name is 1–5 words of letters (connectors "da/de/do/dos/das" allowed between them), at most 60
characters, and stops at the first word that is not name-like: ``lexicon.COMMON_WORDS``
(function words, verbs, greetings, weekdays, levels, the vocabulary of instructions — so an
injected sentence never comes out as a long "name"), relation words, and the pack words the
caller passes. A stopword approach, not a list of names: any name a parent gives is accepted.
Names are title-cased with accents kept ("joão da silva" → "João da Silva").

Age rules: numbers in words are read with text2num ("trinta e cinco anos"). "tenho 27 anos",
"27 anos" (or a typo of "anos": "27 anso"), "27a", "idade: 27", "tenho/tem 27" at the end of a
clause ("tenho 24, jogo há 6 anos"), "meu filho de 9 anos", a birth date or year and "faço 30
mês que vem" (29; ``shared.nlu.age``), a bare number clause in a comma list with a name, a
relation or a level ("João, 27, iniciante"), and with ``expecting_age`` any clause that is only
a number ("27", "28, quanto é o plano?", "kkk, 33!").
Durations are not ages ("jogo há 2 anos", "2 anos de experiência", "mais de 2 anos"), and a date
or an hour never is ("dia 23", "18h"). The latest correction wins ("tenho 27, na verdade 28", "ele
tem 9, não pera, 10"). The raw number is returned (range checks belong to the trial service).

Level rules (a class word — "iniciante", "intermediária", "avançado" — wins over a level inferred
from a story; otherwise the earliest mention wins; a mention right after "não"/"não sou" is
skipped):
- iniciante: "iniciante", "principiante", "básico", "novato", "começando", "comecei", "nunca
  joguei/fiz/pratiquei...", "nunca" a few words before a court, racket or ball, "primeira vez",
  "sem/zero experiência", "já joguei (algumas vezes)", a few times played ("joguei umas 2 vezes",
  not "3 vezes por semana"), "beach tennis nunca", "nunca" alone; with ``expecting_level`` also
  "nada", "nenhuma", "pouca";
- intermediario: "intermediário", "médio", "mais ou menos", "razoável", "já jogo/joga" (and, when
  the level was asked, "médio"/"regular" alone);
- the English and Spanish words of each level ("beginner", "intermediate", "avanzado");
- avancado: "avançado", "experiente", "profissional", "jogo torneios", "competidor", "federado";
- play time ("jogo há 2 anos", "faz 6 meses que jogo", "comecei a jogar há 8 meses"): the level
  a pack gives that many months of play (``levels_by_time``, the trial section's
  ``level_by_months_played``); without such a rule a play time tells no level, though
  ``tells_level`` still hears one told.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Sequence
from datetime import date
from functools import lru_cache
from typing import Literal, NamedTuple

from rapidfuzz.distance import OSA

from shared.nlu.age import age_from_birth, turned_age, turning_spans, with_years_typos_fixed
from shared.nlu.dates import mentions_date, time_candidates
from shared.nlu.fuzzy import Vocabulary
from shared.nlu.lexicon import COMMON_WORDS, GRAMMAR_WORDS, not_a_name
from shared.nlu.normalize import normalize, strip_accents
from shared.nlu.numbers import NUMBER_WORD_SET, NUMBER_WORDS, number_value, with_digits

Level = Literal["iniciante", "intermediario", "avancado"]

MAX_NAME_WORDS = 5
MAX_NAME_CHARS = 60

_CONNECTORS = frozenset({"da", "de", "do", "dos", "das", "di", "du"})
# Words that are never part of a name (matching form), on top of ``lexicon.COMMON_WORDS``:
# weekday abbreviations and anything else a booking chat says in one word.
_MORE_NOT_NAMES = """
    seg ter qua qui sex sab dom eae oie opa salve tmj flw bjs kkk kkkk tanto faz sei la
    pode ser nenhuma nenhum nada zero sobre gratis gratuito valor plano planos
    my name is im am the hi hello hey want book class please thanks
    quase mais menos uns umas cerca nasci nasceu nascido nascida junto junta juntos juntas
    fechou fechado firmeza suave demorou meia
"""
# Number words ("dia dez", "as oito") and "meia" (the half hour of "7 e meia") say a day or an
# hour, never a name.
_NOT_NAME = COMMON_WORDS | NUMBER_WORD_SET | frozenset(_MORE_NOT_NAMES.split())
# The people a writer books for ("pra minha filha Sofia", "meu marido tem 40 anos"), and what
# a parent calls a child ("pra minha pequena, a Duda", "o meu guri"): the last line.
_RELATION_WORDS = """
    filho filha filhos filhas esposa esposo marido mulher namorado namorada noivo noiva irmao
    irma sobrinho sobrinha neto neta enteado enteada pai mae primo prima tio tia afilhado
    afilhada sogro sogra cunhado cunhada crianca menino menina garoto garota avo bisavo
    padrinho madrinha amigo amiga chefe patrao patroa assistente secretaria secretario colega
    vizinho vizinha cacula
    pequeno pequena princesa principe bebe nenem guri guria pia moleque garotinho garotinha
"""
_RELATIONS = frozenset(_RELATION_WORDS.split())
# Words that say which of one's relatives ("minha filha mais velha", "meu filho do meio"):
# skipped between the relation and the name.
_RELATION_MODIFIERS = (
    ("mais", "velha"),
    ("mais", "velho"),
    ("mais", "nova"),
    ("mais", "novo"),
    ("do", "meio"),
    ("cacula",),
    ("pequena",),
    ("pequeno",),
)
_POSSESSIVES = frozenset({"meu", "minha", "nosso", "nossa"})
# Irregular past forms of the third person ("minha irmã fez aula aí"): a relative who did
# something is talked about, not booked for. Regular ones end in "-ou" (gostou, jogou).
_IRREGULAR_PAST = frozenset({"fez", "foi", "veio", "teve", "disse", "deu", "trouxe", "quis"})
# Titles before a name ("sou o Dr. Fernando"): skipped, never the name itself.
_TITLES = frozenset(
    {"dr", "dra", "sr", "sra", "srta", "prof", "profa", "doutor", "doutora", "dona", "seu"}
)
# A name cue and whose name follows it: the writer's own ("me chamo X"), someone else's ("o
# nome dele é X") or either ("nome: X"). "sou X"/"aqui é X" (no article) also introduce "sou
# iniciante" or "aqui é perto?", so they need a capitalised X, an expected name, or an age or
# level said in the same message.
_SELF, _OTHER, _EITHER = "self", "other", "either"
_CUE_TABLE: tuple[tuple[str, str], ...] = (
    ("aqui quem fala e", _SELF),
    ("pode me chamar de", _SELF),
    ("quem fala e", _SELF),
    ("meu nome e", _SELF),
    ("meu nome completo e", _SELF),
    ("me chamam de", _SELF),
    ("me chamem de", _SELF),
    ("me chama de", _SELF),
    ("pode chamar de", _SELF),
    ("aqui e o", _SELF),
    ("aqui e a", _SELF),
    ("me chamo", _SELF),
    ("me llamo", _SELF),
    ("mi nombre es", _SELF),
    ("my name is", _SELF),
    ("atenciosamente", _SELF),
    ("cordialmente", _SELF),
    ("chamo-me", _SELF),
    ("meu nome", _SELF),
    ("sou o", _SELF),
    ("sou a", _SELF),
    ("o nome dele e", _OTHER),
    ("o nome dela e", _OTHER),
    ("nome dele e", _OTHER),
    ("nome dela e", _OTHER),
    ("nome dele", _OTHER),
    ("nome dela", _OTHER),
    ("nome do aluno", _OTHER),
    ("nome da aluna", _OTHER),
    ("ele e o", _OTHER),
    ("ela e a", _OTHER),
    ("ele se chama", _OTHER),
    ("ela se chama", _OTHER),
    ("se chama", _OTHER),
    # The enclisis of Portugal ("chama-se Leonor").
    ("chama-se", _OTHER),
    ("ele chama", _OTHER),
    ("ela chama", _OTHER),
    # "o agendamento em nome de Rui Mota": whose booking it is.
    ("em nome de", _EITHER),
    ("em nome do", _EITHER),
    ("em nome da", _EITHER),
    ("no nome de", _EITHER),
    ("no nome do", _EITHER),
    ("no nome da", _EITHER),
    # Telling the bot what to write down: "pode colocar Luciana", "bota Henrique".
    ("pode colocar", _EITHER),
    ("pode botar", _EITHER),
    ("pode por", _EITHER),
    ("coloca", _EITHER),
    ("coloque", _EITHER),
    ("bota", _EITHER),
    ("poe", _EITHER),
    ("nome completo e", _EITHER),
    ("nome completo", _EITHER),
    ("o nome e", _EITHER),
)
_CUES = tuple(
    sorted(((tuple(cue.split()), whose) for cue, whose in _CUE_TABLE), key=lambda c: -len(c[0]))
)
_LEADING_CUES = (((("nome",), _EITHER)),)
# "é Lukas com K", "é o Pedro": a clause opening with "é" names someone when the name is
# capitalised (a correction of the name just given, or an answer to "qual o nome?").
_LOOSE_CUES = (
    (("e", "para o"), _OTHER),
    (("e", "para a"), _OTHER),
    (("e", "para"), _OTHER),
    (("aqui", "e"), _SELF),
    (("sou",), _SELF),
    (("soy",), _SELF),
    (("e", "o"), _EITHER),
    (("e", "a"), _EITHER),
    (("e",), _EITHER),
)
_CUE_FIRST_WORDS = frozenset(cue[0] for cue, _ in _CUES + _LEADING_CUES + _LOOSE_CUES)
_GREETINGS = frozenset({"oi", "oie", "ola", "opa", "ei", "eai", "hey", "alo", "salve"})
_BEFORE_LOOSE_CUE = _GREETINGS | {"eu"}
# What may come before an opening "é" that names someone ("ah, é Lukas", "não, é a Bia"), the
# words that give in or take up a question included ("tá, é Sérgio", "bom, é a Carla"; "tá" and
# "blz" as ``normalize`` spells them).
_BEFORE_OPENING_E = _GREETINGS | {
    "ah", "ops", "opa", "nao", "sim", "na", "verdade", "desculpa",
    "esta", "ok", "okay", "beleza", "certo", "entao", "bom", "claro", "hum", "hmm", "entendi",
}  # fmt: skip
_ARTICLES = frozenset({"o", "a"})
_LAUGHTER = frozenset({"k", "kk", "rs", "rsrs", "ha", "haha", "hahaha", "hehe", "kkk"})
# Laughter however long ("kkkk", "hahahaha", "rsrsrs"): never a name, nor more than a name says.
_LAUGH = re.compile(r"k+|(?:ha|he|hi)+h?|(?:rs)+")
# Prepositions before a place ("de São Paulo", "em Santos"): what follows is not a name.
# The verb between a name and the age it ends ("joao pedro tenho 28").
_AGE_VERBS = frozenset({"tenho"})
_PLACE_BEFORE = frozenset({"de", "da", "do", "em", "no", "na", "perto"})
_GREETING_PARTS = frozenset({"bom", "boa", "dia", "tarde", "noite", "tudo", "bem"})
# What may open a reply to "qual é o seu nome?" before the name ("não, é Maria", "é o João").
_REPLY_OPENERS = frozenset({"nao", "sim", "e", "eh", "o", "a", "sou", "eu", "isso", "pode", "ser"})

_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_BREAK = re.compile(r"\S")
_GLUED_TO_DIGIT = re.compile(r"\d")
_AFTER_DIGIT = re.compile(r"\d[ \t]?$")
# What makes the number before it an hour, not an age: a part of the day or the minutes ("Carla
# 7 da noite", "a Renata 7 e meia").
_HOUR_AFTER = (
    r"(?!\s*(?:d[aeo]\s+(?:manh[aã]|tarde|noite|madrugada)|e\s+(?:meia|quinze|\d{1,2}))\b)"
)
# A number right after a word that reads as an age, not an hour, a date or an amount.
_NUMBER_AFTER = re.compile(
    r"[ \t]*,?[ \t]*\d{1,3}(?![\d:/.hH]|[ \t]*(?:h\b|hs\b|hrs?\b|horas?\b|reais\b|de\s+\w+o\b))"
    + _HOUR_AFTER
)
_CLAUSE_SPLIT = re.compile(r"[,;\n!?]+|\.(?!\d)|\s[-–—]\s")


class People(NamedTuple):
    """Who a message is about: the student's name, the writer's own name when they book for
    someone else, and whether they do (None: not said)."""

    nome: str | None
    contact_name: str | None
    for_someone_else: bool | None


class _Word:
    __slots__ = ("clause", "end", "key", "raw")

    def __init__(self, raw: str, key: str, clause: int, end: int) -> None:
        self.raw = raw
        self.key = key
        self.clause = clause
        self.end = end


@lru_cache(maxsize=64)
def _words(text: str) -> tuple[_Word, ...]:
    """Letter words with their matching key and a clause number that changes at punctuation."""
    words: list[_Word] = []
    keys: dict[str, str] = {}
    clause, last_end = 0, 0
    for match in _WORD.finditer(text):
        if _BREAK.search(text, last_end, match.start()):
            clause += 1
        if _GLUED_TO_DIGIT.match(text, match.end()) or _AFTER_DIGIT.search(
            text, max(0, match.start() - 2), match.start()
        ):
            # "19hs", "2a", "41 anso": a unit (or its typo) after a number, never a name.
            last_end = match.end()
            clause += 1
            continue
        raw = match[0]
        key = keys.get(raw)
        if key is None:
            key = keys[raw] = normalize(raw)
        words.append(_Word(raw, key, clause, match.end()))
        last_end = match.end()
    return tuple(words)


def _has_vowel(key: str) -> bool:
    """Whether a normalized word has a vowel: every name does, while a chat abbreviation often
    has none ("tnh" for tenho, "vc", "pq", "blz", "msg"), so none of those is taken for one."""
    return any(letter in "aeiouy" for letter in key)


class _Reader:
    """One message's words and the word lists that rule names out."""

    def __init__(self, text: str, expecting: bool, not_names: Collection[str]) -> None:
        self.text = text
        self.words = _words(text)
        self.expecting = expecting
        self.not_names = not_names
        self._name_like: dict[str, bool] = {}
        self._clause_names: list[tuple[int, str]] | None = None

    def name_like(self, word: _Word) -> bool:
        key = word.key
        known = self._name_like.get(key)
        if known is None:
            letters = key.replace("-", "").replace(" ", "")
            # A slang word expands to several ("pro" → "para o"): each must be name-like.
            parts = key.replace(" ", "-").split("-")
            known = self._name_like[key] = (
                letters.isalpha()
                and 2 <= len(letters) <= 20
                and _has_vowel(letters)
                and not any(
                    part in _NOT_NAME or part in _RELATIONS or not_a_name(part) for part in parts
                )
                and key not in self.not_names
                and key not in _TITLES
                and _LEVEL_VOCABULARY.correct_token(key) == key
                and not _swapped_common(key)
                and not _LAUGH.fullmatch(key)
            )
        return known

    def name_from(self, at: int, *, positional: bool = False) -> tuple[str | None, int]:
        """The name starting at ``at`` and the index after it; (None, at) when none does.

        ``positional``: the place makes it a name ("minha mãe, a Graça"), so a capitalised
        first word counts even when it is an ordinary word ("de graça")."""
        words = self.words
        if at >= len(words) or words[at].key in _CONNECTORS:
            return None, at
        if not self.name_like(words[at]) and not (positional and self.named_by_place(words[at])):
            return None, at
        taken: list[_Word] = []
        count, end = 0, at
        clause = words[at].clause
        while end < len(words) and words[end].clause == clause and count < MAX_NAME_WORDS:
            word = words[end]
            if word.key in _CONNECTORS:
                following = words[end + 1] if end + 1 < len(words) else None
                if following is None or following.clause != clause:
                    break
                if not self.name_like(following):
                    break
            elif self.name_like(word):
                count += 1
            else:
                break
            taken.append(word)
            end += 1
        while sum(len(word.raw) + 1 for word in taken) - 1 > MAX_NAME_CHARS or (
            taken[-1].key in _CONNECTORS
        ):
            taken.pop()
            end -= 1
        return " ".join(_title(word.raw) for word in taken), end

    def named_by_place(self, word: _Word) -> bool:
        """A capitalised word that could be a name where a name is due: not a function word,
        a verb, a relation or a level ("Graça", "Vitória", "Rosa")."""
        key = word.key
        return (
            word.raw[:1].isupper()
            and key.isalpha()
            and 3 <= len(key) <= 20
            and _has_vowel(key)
            and key not in GRAMMAR_WORDS
            and key not in _RELATIONS
            and key not in self.not_names
            and _LEVEL_VOCABULARY.correct_token(key) == key
        )

    def opens_clause(self, at: int) -> bool:
        words = self.words
        return at == 0 or words[at - 1].clause != words[at].clause

    def cue_at(self, at: int, context: bool) -> tuple[int, str] | None:
        """(index after the cue, whose name follows) for a name cue starting at ``at``."""
        opening = _LEADING_CUES if self.opens_clause(at) else ()
        found = _after_cue(self.words, _CUES + opening, at)
        if found is not None:
            return found
        loose = self.opens_clause(at) or self.words[at - 1].key in _BEFORE_LOOSE_CUE
        if self.words[at].key == "e":
            # "é Lukas": only as what the message opens with, not "..., e Laura tem 9".
            loose = all(word.key in _BEFORE_OPENING_E for word in self.words[:at])
        found = _after_cue(self.words, _LOOSE_CUES, at) if loose else None
        if found is None or found[0] >= len(self.words):
            return None
        capitalised = self.words[found[0]].raw[:1].isupper()
        return found if self.expecting or capitalised or context else None

    def cued_names(self, context: bool) -> list[tuple[str, str]]:
        """Every (name, whose) a cue introduces, in order."""
        names: list[tuple[str, str]] = []
        for at in range(len(self.words)):
            found = self.cue_at(at, context)
            if found is None:
                continue
            end, whose = found
            if end < len(self.words) and self.words[end].key in ("o", "a"):
                end += 1
            while end < len(self.words) and self.words[end].key in _TITLES:
                end += 1
            name, after = self.name_from(end)
            if name:
                names.append((self.registered_after(after) or name, whose))
        return names

    def registered_after(self, at: int) -> str | None:
        """A fuller name right after a nickname ("sou o Tuca, Arthur Lins", "a Bia kkk Beatriz
        Souza"): two or more name words, alone in their clause, after laughter at most."""
        words = self.words
        while at < len(words) and words[at].key in _LAUGHTER:
            at += 1
        name = self.clause_name(at) if at < len(words) and self.opens_clause(at) else None
        if name is None and at < len(words) and words[at - 1].key in _LAUGHTER:
            name = self.clause_name(at)
        return name if name is not None and len(name.split()) >= 2 else None

    def clause_name(self, at: int) -> str | None:
        """A name that is the whole clause starting at ``at`` ("Paulo", "Renata aqui")."""
        words = self.words
        name, end = self.name_from(at)
        if name is None:
            return None
        rest = list(itertools.takewhile(lambda w: w.clause == words[at].clause, words[end:]))
        return name if [word.key for word in rest[:2]] in ([], ["aqui"]) else None

    def clause_names(self) -> list[tuple[int, str]]:
        """(index, name) of every clause that is only a name, after any greeting opening it."""
        if self._clause_names is None:
            self._clause_names = self._find_clause_names()
        return self._clause_names

    def _find_clause_names(self) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        for at in range(len(self.words)):
            if not self.opens_clause(at):
                continue
            start = at
            clause = self.words[at].clause
            while (
                start < len(self.words)
                and self.words[start].clause == clause
                and (
                    self.words[start].key in _GREETINGS or self.words[start].key in _GREETING_PARTS
                )
            ):
                start += 1
            if (
                start + 1 < len(self.words)
                and self.words[start].key in _ARTICLES
                and self.words[start + 1].clause == clause
            ):
                # An apposition: "pro meu filho, o Theo, 11 anos".
                start += 1
            if start < len(self.words) and self.words[start].clause == clause:
                name = self.clause_name(start)
                if name:
                    found.append((start, name))
        return found

    @property
    def lowercase(self) -> bool:
        """Whether the writer types without capitals (then a name is not capitalised either)."""
        return self.text == self.text.casefold()

    def number_follows(self, at: int) -> bool:
        """Whether an age-like number follows word ``at``, right after it or after "tenho"
        ("ana clara 23", "joao pedro tenho 28 anos"; "tneho", its slip, too)."""
        words = self.words
        if _NUMBER_AFTER.match(self.text, words[at].end):
            return True
        verb = words[at + 1] if at + 1 < len(words) else None
        return (
            verb is not None
            and verb.clause == words[at].clause
            and (verb.key in _AGE_VERBS or _swapped_word(verb.key, _AGE_VERBS))
            and _NUMBER_AFTER.match(self.text, verb.end) is not None
        )

    def name_before_number(self) -> str | None:
        """Name-like words right before an age-like number ("joao pedro 19 anos", "Carol
        28", "bia souza tenho 30"): the run of them that the number ends, from the first word
        that is not one; it must be capitalised unless the whole message is in lower case."""
        words = self.words
        for at, word in enumerate(words):
            if not self.name_like(word) or not self.number_follows(at):
                continue
            start = at
            while (
                start > 0
                and words[start - 1].clause == word.clause
                and at - start + 1 < MAX_NAME_WORDS
                and (self.name_like(words[start - 1]) or words[start - 1].key in _CONNECTORS)
            ):
                start -= 1
            while words[start].key in _CONNECTORS:
                start += 1
            if any(w.key in _PLACE_BEFORE for w in words[max(0, start - 2) : start]):
                # "sou de São Paulo, 30 anos", "moro em Santos 20 anos": a place.
                continue
            name, end = self.name_from(start)
            if name and end == at + 1 and (self.lowercase or words[start].raw[:1].isupper()):
                return name
        return None

    def introduces(self, at: int) -> bool:
        """Whether the name clause at ``at`` ends in "aqui" ("Pedro aqui, tudo bem?")."""
        clause = self.words[at].clause
        last = at
        while last + 1 < len(self.words) and self.words[last + 1].clause == clause:
            last += 1
        return self.words[last].key == "aqui"

    def signs(self, at: int) -> bool:
        """Whether the name clause at ``at``, capitalised, ends a message that says something
        before it ("quero marcar a experimental, Sônia"): the writer signing it."""
        words = self.words
        clause = words[at].clause
        if self.lowercase or self.text.rstrip().endswith("?"):
            # "fica perto do metrô, Vila Mariana?": a question ends in what it asks about.
            return False
        if any(w.clause > clause for w in words[at:]):
            return False
        return sum(1 for w in words if w.clause < clause) >= 3

    def reply_name(self) -> str | None:
        """With a name expected: the first clause's name after "não, é", "é o"... ."""
        words = self.words
        at = 0
        while at < len(words) and (
            words[at].key in _REPLY_OPENERS
            or words[at].key in _GREETINGS
            or words[at].key in _GREETING_PARTS
        ):
            at += 1
        if at >= len(words) or (at and words[at].clause > words[at - 1].clause + 1):
            return None
        if at and words[at - 1].key == "pode" and _is_infinitive(words[at]):
            return None
        name, end = self.name_from(at)
        if name is None:
            return None
        # Laughter after the name ("Vini kkk", "Gabi rs") says nothing more.
        rest = [
            w for w in words[end:] if w.clause == words[at].clause and not _LAUGH.fullmatch(w.key)
        ]
        return name if not rest else None

    def relation(self) -> tuple[int, int] | None:
        """(index of the relation word, index after it) of "minha filha", "pro meu marido",
        or of "mãe da Helena" (then the index after it is the name's)."""
        words = self.words
        for at in range(len(words) - 1):
            if words[at].key in _POSSESSIVES and words[at + 1].key in _RELATIONS:
                before = words[at - 1].key if at else ""
                after = self.past_modifier(at + 2)
                if before not in ("com", "e") and not self.did_something(after):
                    return at + 1, after
            if words[at].key in _RELATIONS and words[at + 1].key in _CONNECTORS:
                # "mãe da Helena", "assistente do Sr. Albuquerque" (a title is skipped).
                named = at + 2
                while named < len(words) and words[named].key in _TITLES:
                    named += 1
                if words[at + 1].clause == words[at].clause and self.name_from(named)[0]:
                    return at, named
        return None

    def past_modifier(self, at: int) -> int:
        """The index after the words at ``at`` that say which relative ("mais velha", "do
        meio"), in the relation's clause; ``at`` when there are none."""
        keys = [word.key for word in self.words[at:]]
        for modifier in _RELATION_MODIFIERS:
            end = at + len(modifier)
            if tuple(keys[: len(modifier)]) == modifier and self.words[end - 1].clause == (
                self.words[at - 1].clause
            ):
                return end
        return at

    def did_something(self, at: int) -> bool:
        """Whether the word at ``at`` (right after a relation, same clause) is a past verb:
        the relative is the subject of a story ("minha irmã fez aula aí", "meu primo jogou"),
        not the person to book."""
        words = self.words
        if at >= len(words) or words[at].clause != words[at - 1].clause:
            return False
        key = words[at].key
        return key in _IRREGULAR_PAST or (len(key) > 3 and key.endswith("ou"))

    def relation_name(self, after: int) -> str | None:
        """The name right after the relation ("minha filha Sofia", "minha filha a julia") or
        as the next clause ("minha mãe, a Graça"). In that position a capitalised word is a
        name even when it is also a word ("Graça", "Vitória")."""
        words = self.words
        if after >= len(words):
            return None
        same_clause = words[after].clause == words[after - 1].clause
        if not same_clause and not self.opens_clause(after):
            return None
        at = after
        if at + 1 < len(words) and words[at].key in _ARTICLES:
            if words[at + 1].clause != words[at].clause:
                return None
            at += 1
        if same_clause or at > after:
            name, _ = self.name_from(at, positional=True)
            return name
        return self.clause_name(at)


def _is_infinitive(word: _Word) -> bool:
    """A lower-case word with a verb's ending: after "pode" it says what may be done ("pode
    enviar", "pode seguir"), not who ("pode ser Oscar" names someone after "ser")."""
    return word.raw[:1].islower() and word.key.endswith(("ar", "er", "ir"))


def _swapped_word(key: str, words: Collection[str]) -> bool:
    """Whether ``key`` is one of ``words`` with two neighbouring letters swapped ("tneho")."""
    if len(key) < 4:
        return False
    return any(
        key[:i] + key[i + 1] + key[i] + key[i + 2 :] in words
        for i in range(len(key) - 1)
        if key[i] != key[i + 1]
    )


def _swapped_common(key: str) -> bool:
    """Whether ``key`` is a function word or verb with two letters swapped ("tneho", "vuo"):
    a typing slip, not a name. Other one-letter edits of a word are left alone: "Marta" is
    one letter from "marca" and is a name."""
    return _swapped_word(key, GRAMMAR_WORDS)


def _title(word: str) -> str:
    if word.casefold() in _CONNECTORS:
        return word.casefold()
    for mark in "-'’":
        if mark in word:
            return mark.join(_title(part) for part in word.split(mark))
    return word[:1].upper() + word[1:].casefold()


def _after_cue(
    words: Sequence[_Word], cues: tuple[tuple[tuple[str, ...], str], ...], at: int
) -> tuple[int, str] | None:
    if words[at].key not in _CUE_FIRST_WORDS:
        return None
    keys = tuple(word.key for word in words[at : at + 5])
    for cue, whose in cues:
        end = at + len(cue)
        if keys[: len(cue)] == cue and words[end - 1].clause == words[at].clause:
            return end, whose
    return None


def _has_booking_data(text: str) -> bool:
    """Whether a message also gives an age, a level, a date or a time (a name list context)."""
    return bool(
        extract_age(text) is not None
        or tells_level(text)
        or time_candidates(text)
        or mentions_date(text)
    )


# The words that introduce a name or an age, each with what comes before or after it; one
# typo in them ("meu nomi é", "me chamu", "tenhu 28") hides the cue, and the typo itself
# would be read as a name ("Tenhu").
_CUE_TYPOS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("nome", re.compile(r"(?i)(\b(?:meu|seu|o) )([a-z]{4,5})\b")),
    ("chamo", re.compile(r"(?i)(\bme )([a-z]{4,6})\b")),
    ("tenho", re.compile(r"(?i)(\b)([a-z]{4,6})(?= \d{1,3}\b)")),
)


def with_cue_typos_fixed(text: str) -> str:
    """``text`` with one-letter typos of a name's or an age's cue words corrected in place
    (an unknown word one edit from the cue, with the same first letter, where the cue goes)."""

    def fixer(target: str) -> Callable[[re.Match[str]], str]:
        def fix(match: re.Match[str]) -> str:
            before, word = match[1], match[2]
            folded = word.casefold()
            if folded == target or folded[0] != target[0] or folded in COMMON_WORDS:
                return match[0]
            if number_value(folded) is not None:  # "o nove" is a number, not "o nome"
                return match[0]
            if OSA.distance(folded, target, score_cutoff=1) > 1:
                return match[0]
            return before + target

        return fix

    for target, pattern in _CUE_TYPOS:
        text = pattern.sub(fixer(target), text)
    return text


def extract_people(
    text: str, expecting_name: bool = False, *, not_names: Collection[str] = ()
) -> People:
    """The student's name, the writer's name and whether they book for someone else.

    Names come, in this order of trust, from a cue ("me chamo X", "o nome dele é X"), a
    relation ("pra minha filha Sofia"), a clause that is only a name in a message that also
    gives booking data ("Paulo, 50 anos"), or, when the name was asked, a short reply. The
    writer's own cues ("sou X") name the contact when the booking is for someone else.
    ``not_names`` adds words a caller knows are never names (a business's jargon); not a pack's
    whole vocabulary, whose FAQ questions name places ("São Paulo" would rule out Paulo).
    """
    text = with_cue_typos_fixed(text)
    reader = _Reader(text, expecting_name, not_names)
    if not reader.words:
        return People(None, None, None)
    context = _has_booking_data(text)
    cued = reader.cued_names(context)
    relation = reader.relation()
    own = next((name for name, whose in cued if whose == _SELF), None)
    other = next((name for name, whose in cued if whose != _SELF), None)
    if relation is None and any(whose == _OTHER for _, whose in cued):
        # "o nome dela é Valentina", "ele se chama Enzo": the student is someone else.
        return People(other, own, True)
    if relation is None:
        clauses = reader.clause_names()
        # A clause that is only a name counts beside booking data, or when the name was
        # asked ("sou eu mesma que vou, Rita. precisa do RG?").
        clause = next((name for _, name in clauses), None) if context or expecting_name else None
        if clause is None:
            clause = next(
                (name for at, name in clauses if reader.introduces(at) or reader.signs(at)),
                None,
            )
        reply = reader.reply_name() if expecting_name else None
        before_age = reader.name_before_number() if context else None
        return People(own or other or clause or before_age or reply, None, None)
    _, after = relation
    student = other or reader.relation_name(after)
    if student is None:
        student = next(
            (name for at, name in reader.clause_names() if at >= after and name != own), None
        )
    return People(student, own, True)


def extract_name(
    text: str, expecting_name: bool = False, *, not_names: Collection[str] = ()
) -> str | None:
    """The student's name in a message, title-cased, or None (see ``extract_people``)."""
    return extract_people(text, expecting_name, not_names=not_names).nome


def writer_name(
    text: str, expecting_name: bool = False, *, not_names: Collection[str] = ()
) -> str | None:
    """The name a message gives as the writer's own, by a first-person cue ("sou a Carla",
    "me chamo Carla", "aqui é a Carla"), title-cased, or None: while someone books for
    another person, that is who writes, not the student."""
    text = with_cue_typos_fixed(text)
    reader = _Reader(text, expecting_name, not_names)
    cued = reader.cued_names(_has_booking_data(text))
    return next((name for name, whose in cued if whose == _SELF), None)


_NUMBER = rf"(\d{{1,3}}|{NUMBER_WORDS})"
_YEARS = r"(?:anos?|aninhos)"
_AGE_CUED = re.compile(
    rf"\b(?:tenho|idade|idade de|com)\s+{_NUMBER}\s?{_YEARS}\b"
    rf"|\bidade:?\s*(?:e\s+)?{_NUMBER}\b"
    rf"|(?<![\d/:-]){_NUMBER}\s?{_YEARS} de idade\b"
)
_AGE_TENHO = re.compile(rf"\b(?:tenho|tem)\s+{_NUMBER}(?:\s+(?:e|sou|mas|ja|nunca)\b|$)")
# "ele tem 9 na verdade", "tenho 30 também", "ela tem 12 agora kk": said of a person, the
# number may end its clause with such words; a bare "tem 19 também?" asks about an hour.
_AGE_PERSON_HAS = re.compile(
    rf"\b(?:tenho|(?:ele|ela|eu)\s+tem)\s+{_NUMBER}"
    r"(?:\s+(?:na verdade|tambem|agora|ok|ne|viu|sabe|k+|rs+|ha(?:ha)+))+$"
)
# "27a" is 27 years, but "3ª 16" / "3a feira" is a weekday (the ordinal): not an age.
_AGE_YEARS = re.compile(
    rf"(?<![\w/:-])(?:(\d{{1,3}})(?:\s?{_YEARS}|a(?![\s-]*(?:feira\b|\d)))"
    rf"|({NUMBER_WORDS})\s{_YEARS})\b"
)
# Discourse markers that may trail a bare number without changing it ("24 tlgd", "30 ne").
_TRAILING_MARKERS = r"(?:\s+(?:ne|tlgd|mano|cara|vei|viu|sabe|hein|blz|beleza|k+|rs+|ha(?:ha)+))*"
_AGE_CLAUSE = re.compile(rf"^(\d{{1,3}})(?:\s?(?:anos?|a))?{_TRAILING_MARKERS}$")
_AGE_EXPECTED = re.compile(
    rf"^(?:(?:eu|ele|ela)\s+)?(?:tenho\s+|tem\s+|fez\s+|idade\s+|sao\s+)?{_NUMBER}(?:\s?anos?)?$"
)
_DURATION_BEFORE = frozenset(
    {"ha", "faz", "por", "durante", "a", "uns", "umas", "mais", "menos", "quase", "em"}
)
# "de" opens a span only after these ("mais de 2 anos"); "meu filho de 9 anos" is an age.
_SPAN_BEFORE_DE = frozenset({"mais", "menos", "cerca", "perto", "acima", "alem", "uns", "umas"})
_DURATION_AFTER = re.compile(r"\s*(?:de (?:experiencia|jogo|pratica|beach)|que|jogando|atras)\b")
_FIRST_CLAUSE = re.compile(r"[,;!?\n]|\.(?!\d)")
# "a Sofia de 12", "meu neto de 9": "de" and a number right after a name (capitalised) or a
# relative is that person's age, "anos" or not; not a count, an hour or a date ("Plano de 3x",
# "Pacote de 10 aulas", "Terça de 7 às 8").
_NOT_AN_AGE_AFTER = (
    r"(?!\s*(?:x|h|hs|horas?|min|:|/|vezes|aulas?|alunos|pessoas|dias|semanas|meses|reais"
    r"|anos de|as|às|a|ate|até)\b)" + _HOUR_AFTER
)
_AGE_AFTER_NAME = re.compile(rf"\b[A-ZÀ-Ý][a-zà-ÿ]+,?\s+de\s+(\d{{1,2}})\b{_NOT_AN_AGE_AFTER}")
# "sou o Nando 40 intermediário": a number right after a name, with no comma.
_AGE_RIGHT_AFTER_NAME = re.compile(
    rf"\b([A-ZÀ-Ý][a-zà-ÿ]+)\s+(\d{{1,2}})\b(?![.,]?\d){_NOT_AN_AGE_AFTER}(?!\s*de\b)"
)
_AGE_AFTER_RELATION = re.compile(
    rf"\b(?:{'|'.join(sorted(_RELATIONS))})\s+de\s+(\d{{1,2}})\b{_NOT_AN_AGE_AFTER}"
)


def _inside_sentence(text: str, at: int) -> bool:
    """Whether ``at`` is past a sentence's first word: a capital there may be a name's."""
    before = text[:at].rstrip()
    return bool(before) and before[-1] not in ".!?\n"


def _age_after_who(text: str, normalized: str) -> int | None:
    """The age in "a Sofia de 12", "meu neto de 9" or "sou o Nando 40"; a capitalised word
    opening the message or a sentence is no name by its capital ("Turma de 6?"), nor is a
    word of the language ("Terça 13" is a date)."""
    for match in _AGE_AFTER_NAME.finditer(text):
        if _inside_sentence(text, match.start()):
            return int(match[1])
    for match in _AGE_RIGHT_AFTER_NAME.finditer(text):
        named = strip_accents(match[1].casefold())
        if _inside_sentence(text, match.start()) and named not in _NOT_NAME:
            return int(match[2])
    relative = _AGE_AFTER_RELATION.search(normalized)
    return int(relative[1]) if relative is not None else None


def _first_clause(text: str) -> str:
    """What a reply says before its first punctuation ("28, quanto é o plano?" → "28")."""
    return next((clause for clause in _FIRST_CLAUSE.split(text) if clause.strip()), "")


def _number_in(match: re.Match[str]) -> int | None:
    return number_value(next(group for group in match.groups() if group is not None))


def _is_duration(text: str, match: re.Match[str], *, check_before: bool) -> bool:
    """ "2 anos de experiência", "jogo há 2 anos": a span of time, not an age."""
    if _DURATION_AFTER.match(text, match.end()):
        return True
    before = text[: match.start()].split()[-2:]
    if not check_before or not before:
        return False
    if before[-1] == "de":
        return len(before) == 2 and before[0] in _SPAN_BEFORE_DE
    return before[-1] in _DURATION_BEFORE


def _comma_list_age(text: str) -> int | None:
    """A bare number clause in a list that also names the person, their level or relation."""
    clauses = _CLAUSE_SPLIT.split(text)
    if len(clauses) < 2:
        return None
    reader = _Reader(text, False, ())
    listed = bool(reader.clause_names()) or reader.relation() is not None
    listed = listed or bool(reader.cued_names(context=False))
    if not listed and not tells_level(text):
        return None
    for clause in map(normalize, clauses):
        # An age clause is a few words at most; only those are worth reading number words in.
        match = _AGE_CLAUSE.match(with_digits(clause) if len(clause) <= 30 else clause)
        if match:
            return int(match[1])
    return None


def _clause_end_age(text: str) -> int | None:
    """ "tenho 24, jogo há 6 anos", "ela tem 16, joga com a gente": "tenho/tem N" ending a
    clause, or only words that change nothing after it ("ele tem 9 na verdade"); the comma
    is gone once the text is normalized, so clauses are cut first."""
    for clause in _CLAUSE_SPLIT.split(text):
        words = with_digits(normalize(clause))
        match = _AGE_TENHO.search(words) or _AGE_PERSON_HAS.search(words)
        if match:
            return _number_in(match)
    return None


# After one of these a person corrects the number just said ("tenho 27, na verdade 28", "ele
# tem 9, não pera, 10", "30 quer dizer 31"). A "não" right before a number denies that number
# ("tem 9, não 10"): it corrects nothing.
_AGE_CORRECTION = re.compile(
    r"\b(?:n[aã]o(?!\s*\d)|na (?:verdade|vdd)|ops|quis dizer|quer dizer|digo|corrigindo|errei"
    r"|pera[ií]?)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=512)
def extract_age(text: str, expecting_age: bool = False, *, today: date | None = None) -> int | None:
    """The person's age in years, unvalidated, or None (rules in the module doc).

    The latest correction wins: the text after each correction marker is read first, latest
    first, and a bare number there ("28") is the age once an age was said before it, as if it
    had been asked. ``today`` (the turn's business date) lets a birth date or year give the age
    (``shared.nlu.age``); "faço 30 mês que vem" is 29 with or without it. Cached, as
    ``normalize``: a turn's message is read by several extractors and services.
    """
    said = _age_in(text, expecting_age, today)
    for marker in reversed(list(_AGE_CORRECTION.finditer(text))):
        # "ela tem 11 quer dizer 12": "tem 11" is an age once the correction is cut off.
        corrects = said is not None or _age_in(text[: marker.start()], False, today) is not None
        corrected = _age_in(text[marker.end() :], expecting_age or corrects, today)
        if corrected is not None:
            return corrected
    return said


def _age_in(text: str, expecting_age: bool, today: date | None) -> int | None:
    """The age ``text`` says, corrections aside (``extract_age``)."""
    normalized = with_years_typos_fixed(with_digits(normalize(with_cue_typos_fixed(text))))
    turning = turning_spans(normalized)
    for pattern, check_before in ((_AGE_CUED, False), (_AGE_TENHO, False), (_AGE_YEARS, True)):
        for match in pattern.finditer(normalized):
            if any(start <= match.start() < end for start, end, _ in turning):
                continue
            if not _is_duration(normalized, match, check_before=check_before):
                return _number_in(match)
    if (after_who := _age_after_who(text, normalized)) is not None:
        return after_who
    if (clause_age := _clause_end_age(text)) is not None:
        return clause_age
    if today is not None and (born := age_from_birth(text, normalized, today)) is not None:
        return born
    if (turned := turned_age(normalized)) is not None:
        return turned
    if turning:
        return turning[0][2]
    if expecting_age:
        for clause in _FIRST_CLAUSE.split(text):
            said = with_digits(normalize(clause))
            # "27 e sou iniciante": the age asked, then the next answer joined by "e" (read
            # once the number words are digits: "vinte e sete" is one number).
            expected = _AGE_EXPECTED.match(said) or _AGE_EXPECTED.match(said.split(" e ", 1)[0])
            if expected:
                return _number_in(expected)
    return _comma_list_age(text)


_DURATION_NUMBER = (
    # "faz uns meses", "há umas semanas": a few, no number said.
    rf"(?:uns\s+|umas\s+|mais de\s+|quase\s+)?"
    rf"(\d{{1,2}}|{NUMBER_WORDS}|alguns|algumas|poucos|poucas|uns|umas)"
)
_DURATION_UNIT = r"(anos?|mes|meses|semanas?)"
# Playing, in every person ("jogo", "ela joga", "jogamos", "eles treinam") or ongoing; having
# started to play some time ago is playing since ("comecei a jogar há 8 meses").
_PLAY = (
    r"(?:(?:jog|pratic|trein)(?:o|a|am|amos)|(?:faco|faz|fazem|fazemos) aula"
    r"|jogando|praticando|treinando"
    r"|comec(?:ei|ou|amos|aram)(?:\s+a\s+(?:jogar|praticar|treinar))?)"
)
# How long someone has played ("jogo há 2 anos", "faz uns meses que treino").
_PLAYED = re.compile(
    rf"\b{_PLAY}(?:\s+beach(?:\s+tennis)?)?\s+(?:ha|a|faz|tem)\s+"
    rf"{_DURATION_NUMBER}\s+{_DURATION_UNIT}\b"
    rf"|\b(?:ha|faz)\s+{_DURATION_NUMBER}\s+{_DURATION_UNIT}\s+que\s+{_PLAY}\b"
)
# From how many months of play each level starts, ascending, as a pack states it
# (``TrialConfig.levels_by_time``): ((0, "iniciante"), (12, "intermediario"), (60, "avancado")).
# The business decides what a time played makes of someone, not this module.
LevelsByTime = tuple[tuple[int, Level], ...]
_LEVEL_PATTERNS: tuple[tuple[Level | None, re.Pattern[str]], ...] = (
    (None, _PLAYED),
    (
        "iniciante",
        re.compile(
            r"\b(?:iniciante|principiante|novat[oa]|leig[oa]|basic[oa]|comecando|iniciando"
            r"|beginner|never played|nunca (?:he )?jugad[oa]|nunca jugue"
            r"|comecei(?!\s+(?:a jogar\s+)?(?:ha|a|faz)\s)|primeira vez"
            r"|(?:sem|nenhuma|zero|pouca|pouquissima) experiencia"
            r"|nao\s+(?:tem|tenho|possui|possuo|temos|tinha)\s+(?:nenhuma\s+|muita\s+)?experiencia"
            r"|(?:sou|to|estou|e|ta)\s+(?:bem\s+|muito\s+|meio\s+)?(?:ruim|frac[oa]|crua|cru)"
            r"|(?:ja\s+)?fiz\s+(?:umas|algumas|poucas|uma|duas|tres)\s+aul(?:as|inhas|a)"
            # Played a few times, in every person ("joguei umas 2 vezes", "ela jogou poucas
            # vezes"; "umas" is a digit once numbers are), not how often ("3 vezes por semana").
            r"|(?:jog(?:uei|ou|amos|aram)|bati bola|fiz|fez)\s+(?:so\s+)?(?:(?:umas|uma|1)\s+)?"
            r"(?:algumas|poucas|duas|tres|[1-5])\s+(?:vezes|aulas?)"
            r"(?!\s+(?:por|ao|toda|todo|(?:na|a) semana|no mes)\b(?!\s+passad))"
            r"|do zero|nao sei jogar|ja joguei(?!\s+(?:ha|a|faz)\s)"
            r"|beach(?: tennis)?,? (?:eu |ele |ela )?nunca"
            # Every person of the past: "nunca joguei", "ela nunca jogou", "os três nunca jogaram".
            r"|(?:nunca|jamais)\s+(?:\w+\s+)?(?:jog|fiz|fez|fizemos|fizeram|pratic|pratiqu|trein|tive|teve"
            r"|tivemos|tiveram|peg|experiment)(?:uei|ei|ou|amos|aram|emos|eram)?\b"
            # "nunca" with the sport's things a few words on: "nunca nem segurou uma raquete".
            r"|(?:nunca|jamais)\s+(?:\w+\s+){0,5}?(?:quadras?|raquetes?|bolinhas?|beach|tenis))\b"
            r"|^nunca$"
        ),
    ),
    (
        "intermediario",
        re.compile(
            r"\b(?:intermediari[oa]|intermedio|intermediate|nivel medio|sou medi[oa]"
            r"|mais ou menos|razoavel"
            r"|ja jog(?:o|a|amos)(?!\s+(?:beach\s+(?:tennis\s+)?)?(?:ha|a|faz|tem)\s))\b"
            r"|^medi[oa]$"
        ),
    ),
    (
        "avancado",
        re.compile(
            r"\b(?:avancad[oa]|advanced|avanzad[oa]|experiente|profissional|competidor[a]?"
            r"|jogo torneios?"
            r"|disputo torneios?|compito|federad[oa])\b"
        ),
    ),
)
# A level named by its class word decides over one inferred from a story elsewhere in the
# message: in "ele já joga, é nível avançado" the person chose the word, "já joga" only hints.
_LEVEL_WORD = re.compile(r"\b(iniciante|principiante|intermediari|avancad)(?:[oa]s?|es?|s)?\b")
_LEVEL_WORD_LEVEL: dict[str, Level] = {
    "iniciante": "iniciante",
    "principiante": "iniciante",
    "intermediari": "intermediario",
    "avancad": "avancado",
}
_LEVEL_VOCABULARY = Vocabulary.from_phrases(
    ["iniciante", "principiante", "intermediario", "intermediaria", "avancado", "avancada"]
    # "nunca" read before the verbs of the past that say it ("nuca joguei"): alone it is too
    # short to correct.
    + [f"nunca {verb}" for verb in ("jog*", "fiz", "fez", "pratic*", "pratiqu*", "trein*")]
)
_NEGATED = re.compile(r"\bnao(?: sou| e| estou)?\s*$")
# One-word replies that only mean a level when the level was asked ("nada", "médio").
_LEVEL_REPLIES: tuple[tuple[Level, re.Pattern[str]], ...] = (
    (
        "iniciante",
        re.compile(r"^(?:nenhuma|nenhum|nada|zero|nunca|pouca|pouco|quase nada|quase nunca)$"),
    ),
    ("intermediario", re.compile(r"^(?:medio|media|mais ou menos|regular|razoavel)$")),
)


# "faz uns meses", "há umas semanas": a few, read as two.
_FEW = frozenset({"alguns", "algumas", "poucos", "poucas", "uns", "umas"})


def _months_played(match: re.Match[str]) -> int:
    """The whole months of play a duration says (weeks make months four at a time)."""
    amount_word, unit = next((match[i], match[i + 1]) for i in (1, 3) if match[i] is not None)
    amount = 2 if amount_word in _FEW else (number_value(amount_word) or 0)
    if unit.startswith("ano"):
        return amount * 12
    return amount if unit.startswith("mes") else amount // 4


def level_for_time(months: int, levels_by_time: LevelsByTime) -> Level | None:
    """The level a pack's rule gives ``months`` of play: the last one whose start it reached."""
    reached = [level for start, level in levels_by_time if months >= start]
    return reached[-1] if reached else None


def tells_level(text: str) -> bool:
    """Whether a message tells the person's level, in words or by how long they have played,
    whatever level a pack makes of that time: a booking field was given."""
    return (
        extract_level(text) is not None or _PLAYED.search(with_digits(normalize(text))) is not None
    )


@lru_cache(maxsize=512)
def extract_level(
    text: str, expecting_level: bool = False, levels_by_time: LevelsByTime = ()
) -> Level | None:
    """The person's beach-tennis level in canonical form, or None (rules in the module doc).

    Level words are read through typo correction ("iniciant", "intermediaro"). A time played
    ("jogo há 8 meses") is the level ``levels_by_time`` (the pack's rule) gives it, none without
    a rule. Cached, as ``extract_age``."""
    normalized = _LEVEL_VOCABULARY.correct(with_digits(normalize(text)))
    if expecting_level:
        first = with_digits(normalize(_first_clause(text)))
        for level, pattern in _LEVEL_REPLIES:
            if pattern.match(first):
                return level
    for match in _LEVEL_WORD.finditer(normalized):
        if not _NEGATED.search(normalized, 0, match.start()):
            return _LEVEL_WORD_LEVEL[match[1]]
    found: list[tuple[int, Level]] = []
    for named, pattern in _LEVEL_PATTERNS:
        for match in pattern.finditer(normalized):
            if _NEGATED.search(normalized, 0, match.start()):
                continue
            told = named or level_for_time(_months_played(match), levels_by_time)
            if told is not None:
                found.append((match.start(), told))
            break
    return min(found)[1] if found else None
