"""Several people in one booking message: "pra mim e pro meu marido", "meus dois filhos",
"somos 3 amigas", "eu e meu neto".

A trial booking is for one person; a message that names a group must not silently book one
of them and forget the rest. This reads how many people a message speaks of and the names of
those it gives, so the booking flow can say it books one at a time, naming the others, and
offer the next booking after the first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from shared.nlu.normalize import normalize, strip_accents
from shared.nlu.numbers import NUMBER_WORDS, number_value
from shared.nlu.slots import Level, LevelsByTime, extract_age, extract_level

_COUNT = r"(\d|dois|duas|tres|quatro|cinco|seis)"
_RELATIVE = (
    r"(?:marido|esposa|mulher|namorad[oa]|noiv[oa]|filh[oa]s?|net[oa]s?|sobrinh[oa]s?|"
    r"irma(?:o|os|s)?|prim[oa]s?|amig[oa]s?|pai|mae|avo|avos|tia|tio|sogr[oa]|cunhad[oa]|"
    r"colegas?|parceir[oa]s?|companheir[oa]s?|menin[oa]s?|garot[oa]s?|crianca|criancas)"
)
# "pra mim e pro meu marido", "eu e minha filha", "eu e o Beto".
_ME_AND = re.compile(
    r"\b(?:para mim|eu)\s+e\s+(?:para\s+)?(?:(?:a|o)\s+)?(?:(?:meu|minha|meus|minhas)\s+)?"
    rf"{_RELATIVE}\b"
)
# "meus dois filhos", "os 3", "pros dois", "nos dois", "somos 3 amigas", "as duas juntas".
# After a feminine article ("as", "das", "pras", "para as") a number is an hour unless people
# follow it: "às 7" and "das 8" say when, "as duas amigas" says who.
_GROUP = rf"(?:\s+{_RELATIVE}|\s+(?:juntos|juntas|pessoas|alunos|alunas))"
_COUNTED = re.compile(
    rf"\b(?:meus|minhas|os|pros|para os|nos|somos(?: em)?|dos)\s+{_COUNT}{_GROUP}?\b"
    # "vamos em 4 amigos", "seremos 5 pessoas", "em 3 colegas": a count of the people.
    rf"|\b(?:vamos|iremos|seremos|vamos ser|estamos|em)\s+(?:em\s+)?{_COUNT}{_GROUP}\b"
    rf"|\b(?:as|das|pras|para as)\s+{_COUNT}{_GROUP}\b"
)
# "pros meus filhos", "minhas netas querem": relatives in the plural booked for, or wanting
# the class, are several people, their count not said; with two names or more, whoever is
# said of them ("meus filhos Enzo e Rafa"). "meus amigos falaram de vocês" is no group.
_PLURAL = (
    r"(?:meus|minhas)\s+(?:filh[oa]s|net[oa]s|sobrinh[oa]s|irmaos|irmas|prim[oa]s|"
    r"amig[oa]s|colegas|criancas|menin[oa]s|gemeos|gemeas)"
)
_RELATIVES = re.compile(
    rf"\b(?:pr[oa]s?|para|com)\s+(?:os\s+|as\s+)?{_PLURAL}\b"
    rf"|\b{_PLURAL}\s+(?:querem|quer|vao|gostariam|precisam|podem)\b"
)
_NAMED_RELATIVES = re.compile(rf"\b{_PLURAL}\b")
# Capitalized words that are no one's name when they open a clause inside a message.
_NOT_NAMES = frozenset(
    strip_accents(w)
    for w in [
        "eu",
        "ele",
        "ela",
        "nos",
        "meu",
        "minha",
        "meus",
        "minhas",
        "o",
        "a",
        "os",
        "as",
        "e",
        "de",
        "do",
        "da",
        "pra",
        "pro",
        "para",
        "sou",
        "somos",
        "oi",
        "ola",
        "bom",
        "boa",
        "quero",
        "queria",
        "gostaria",
        "ok",
        "sim",
        "nao",
        "obrigado",
        "obrigada",
        "vcs",
        "voces",
        "terca",
        "quarta",
        "quinta",
        "sexta",
        "sabado",
        "domingo",
        "segunda",
        "iniciante",
        "intermediario",
        "avancado",
    ]
)


class Party(NamedTuple):
    """How many people a message books for (None: several, count not said) and the names it
    gives for them, in order."""

    size: int | None
    names: tuple[str, ...]


def _names(text: str) -> tuple[str, ...]:
    """Capitalized words inside clauses (not a message's or line's first word, which any
    sentence capitalizes, unless an age follows it: "Lia 19, Duda 22"), without words that are
    never names."""
    found: list[str] = []
    for line in re.split(r"[\n.!?]+", text):
        words = line.split()
        for position, word in enumerate(words):
            clean = word.strip(",;:()\"'")
            aged = position + 1 < len(words) and words[position + 1].strip(",;").isdigit()
            if (position == 0 and not aged) or not clean[:1].isupper() or not clean.isalpha():
                continue
            if strip_accents(clean.casefold()) not in _NOT_NAMES:
                found.append(clean)
    return tuple(dict.fromkeys(found))


_A_RELATIVE = re.compile(rf"\b(?:um|uma|o|a|os|as|meu|minha|meus|minhas)\s+{_RELATIVE}\b")


def names_a_relative(text: str) -> bool:
    """Whether a message speaks of someone by their relation to the writer ("uma amiga",
    "meu marido"): someone else."""
    return _A_RELATIVE.search(normalize(text)) is not None


# The booking turned to the writer ("é pra mim mesmo", "sou eu que vou").
_FOR_SELF = re.compile(r"\b(?:pra|para) mim\b|\beu mesm[oa]\b|\bsou eu\b")


def for_the_writer(text: str) -> bool:
    """Whether a message says the writer is the one booked ("na verdade é pra mim")."""
    return _FOR_SELF.search(normalize(text)) is not None


def includes_writer(text: str) -> bool:
    """Whether the group is the writer and someone else ("pra mim e pro meu marido", "eu e
    a minha filha")."""
    return _ME_AND.search(normalize(text)) is not None


# The writer speaking as one of the group ("somos 3", "nós dois", "a gente quer"); "nos" only
# with a count, as it is also "in the" ("nos dias").
_WE = re.compile(
    r"\b(?:somos|vamos|iremos|seremos|estamos|queremos|podemos|gostariamos|queriamos"
    rf"|a gente|nossa|nosso|nos\s+{_COUNT})\b"
)


def writer_in_group(text: str) -> bool:
    """Whether the writer is one of the group a message speaks of: "eu e ...", speaking as
    "we", or named with an age of their own ("sou o Rui, 41, e ela é a Ana, 38"); "pros meus
    dois filhos" books for others only."""
    if includes_writer(text) or _WE.search(normalize(text)) is not None:
        return True
    party = party_in(text)
    return party is not None and writer_with_age(text, party.names)


def writer_with_age(text: str, names: Sequence[str]) -> bool:
    """Whether the writer names themselves among ``names`` ("sou o Rui", "aqui é a Ana") and
    gives an age of their own: then the writer is one of the people booked."""
    folded = strip_accents(text.casefold())
    return any(
        _writer_named(strip_accents(name.casefold())).search(folded) is not None
        and member_facts(text, name, names)[0] is not None
        for name in names
    )


# The writer telling their own age ("eu tenho 38", "tenho 29 anos", "e eu 35", "tô com 40"),
# matched on the text without accents; "tenho um filho de 8" tells no age of the writer's.
_WRITER_AGE = re.compile(
    rf"\b(?:eu\s+)?(?:tenho|tnh|estou com|to com|tou com)\s+(?:\d{{1,3}}|{NUMBER_WORDS})"
    r"(?:\s*anos?)?\b(?!\s*(?:[:h/]|horas?\b))"
    r"|\beu\s*,?\s*(?:com\s+)?\d{1,3}\b(?!\s*[:h/])",
    re.IGNORECASE,
)


def without_writer_age(text: str) -> str:
    """``text`` (accents dropped, capitals kept) without the writer's statements of their own
    age: in a message booking for someone else, "tenho 38" is the parent's age, not the
    child's ("meu filho de 8 anos quer fazer, eu tenho 38" → the student is 8)."""
    return _WRITER_AGE.sub(" ", strip_accents(text))


def _writer_named(key: str) -> re.Pattern[str]:
    """The writer giving their own name ``key`` (folded): "sou o Rui", "aqui é a Ana"."""
    return re.compile(rf"\b(?:sou|chamo|nome e|aqui e)\s+(?:o\s+|a\s+)?{re.escape(key)}\b")


def party_in(text: str) -> Party | None:
    """The group a booking message speaks of, or None when it speaks of one person."""
    normalized = normalize(text)
    counted = _COUNTED.search(normalized)
    if counted is not None:
        size = number_value(next(g for g in counted.groups() if g is not None))
        if size is not None and size >= 2:
            return Party(size, _names(text))
    if includes_writer(text):
        return Party(2, _names(text))
    names = _names(text)
    folded = strip_accents(text.casefold())
    listed = [n for n in names if not _writer_named(strip_accents(n.casefold())).search(folded)]
    if len(listed) >= 2 and all(member_facts(text, n, names)[0] is not None for n in listed):
        # "Luna 9 e Maya 11", "o Téo tem 10 e a Bia 12": people listed, each with an age (the
        # writer's own, "sou a Carla, 35. Minha filha Bia tem 10", lists no one).
        return Party(len(listed), tuple(listed))
    if _RELATIVES.search(normalized) is not None:
        return Party(len(names) if len(names) >= 2 else None, names)
    if len(names) >= 2 and _NAMED_RELATIVES.search(normalized) is not None:
        return Party(len(names), names)
    return None


# The group spoken of as one ("os três são iniciantes", "todas iniciantes"): what follows is
# said of each of them.
_ALL_OF_THEM = re.compile(r"\b(os dois|as duas|ambos|ambas|todos|todas|os tres|as tres)\b.*")


def said_of_all(text: str) -> bool:
    """Whether a message says something of the whole group ("os dois nunca jogaram")."""
    return _ALL_OF_THEM.search(strip_accents(text.casefold())) is not None


_THIRD_PERSON_AGE = re.compile(
    r"\b(?:ele|ela)\s+(?:tem|com|fez|fara)\s+(\d{1,2})\b(?!\s*(?:h|:|/))"
)


def member_facts(
    text: str, name: str, names: Sequence[str], levels_by_time: LevelsByTime = ()
) -> tuple[int | None, Level | None]:
    """The age and level a group's message gives one of its people: read in the words from
    their name to the next person's ("o Enzo de 10 e o Rafa de 6", "Lia 19, Duda 22"), the
    level also from what is said of the whole group ("os três nunca jogaram"); a time played
    is a level by the pack's rule (``levels_by_time``, see ``extract_level``)."""
    folded = strip_accents(text.casefold())
    key = strip_accents(name.casefold())
    found = re.search(rf"\b{re.escape(key)}\b", folded) if key else None
    if found is None:
        return None, None
    starts = [
        m.start()
        for other in names
        if (other_key := strip_accents(other.casefold())) != key
        for m in re.finditer(rf"\b{re.escape(other_key)}\b", folded)
        if m.start() > found.start()
    ]
    end = min(starts, default=len(folded))
    words = folded[found.start() : end]
    # "a Luna, ela tem 9" is Luna's age; the writer's "sou o Rui, ela tem 39" is not Rui's.
    writer = _writer_named(key).search(folded)
    pronoun = "" if writer else r"ela\s+|ele\s+|"
    right_after = re.match(
        rf"{re.escape(key)}\s*,?\s*(?:(?:{pronoun}que\s+)?(?:tem|de|com)\s+)?(\d{{1,2}})\b"
        r"(?!\s*[:h/])",
        words,
    )
    # A third person's age inside these words ("Rui, ela tem 39") is someone else's.
    age = int(right_after[1]) if right_after else extract_age(_THIRD_PERSON_AGE.sub(" ", words))
    if age is None and len(names) <= 2:
        # "pra minha esposa, Joana. Eu sou o Rui, ela tem 39": in a pair, "ela" said outside
        # this person's words is about them.
        outside = [
            m for m in _THIRD_PERSON_AGE.finditer(folded) if not found.start() <= m.start() < end
        ]
        age = int(outside[0][1]) if outside else None
    level = extract_level(words, levels_by_time=levels_by_time)
    if level is None and (group := _ALL_OF_THEM.search(folded)) is not None:
        level = extract_level(group[0], levels_by_time=levels_by_time)
    return age, level


def names_of_groups(said: Sequence[str]) -> list[str]:
    """The names of the people the group messages among ``said`` booked for, in order."""
    found: dict[str, None] = {}
    for text in said:
        party = party_in(text)
        if party is not None:
            found.update(dict.fromkeys(party.names))
    return list(found)


def age_named(question: str, said: Sequence[str]) -> int | None:
    """The age the conversation gave a person of a group whom ``question`` names ("O Artur
    precisa levar algo?" after "eu e meu neto Artur, de 12" → 12), read in the latest of
    ``said`` (the person's messages, oldest first) that names them in a group; None when the
    question names no one whose age a group message gave."""
    asked = strip_accents(question.casefold())
    for text in reversed(said):
        party = party_in(text)
        if party is None:
            continue
        for name in party.names:
            if re.search(rf"\b{re.escape(strip_accents(name.casefold()))}\b", asked) is None:
                continue
            age, _ = member_facts(text, name, party.names)
            if age is not None:
                return age
    return None
