"""The ages a question is about: "minha filha tem 9", "alguém de 99?", "quando ele fizer 8",
"nasci em 1961".

Whether someone may take a class is a question about an age, and the age is rarely in the
clause that asks ("vcs tem aula pra criança? minha filha tem 9"). Only numbers something marks
as an age count: a unit ("9 anos"), a verb of having or turning ("tem 9", "fizer 8", "faço
30"), a person before "de" ("filha de 7", "alguém de 99"), or a birth year, turned into an age
at the turn's business time. A time ("às 18"), a price ("R$ 60"), a count ("3x") or how long
someone has played ("jogo faz 2 anos") is none.
"""

from __future__ import annotations

import re
from datetime import datetime

from shared.faq.analysis import stem
from shared.faq.index import FaqIndex
from shared.nlu.normalize import normalize
from shared.nlu.numbers import with_digits

# Words naming a person (whoever the class is for) before "de N" ("a filha de 7").
_PEOPLE = (
    r"(?:alguem|pessoa|pessoas|gente|crianca|criancas|filh[oa]s?|net[oa]s?|sobrinh[oa]s?|"
    r"irma(?:o|os|s)?|prim[oa]s?|menin[oa]s?|garot[oa]s?|adolescentes?|senhor[a]?|idos[oa]s?|"
    r"mae|pai|avo|avos|tia|tio|esposa|marido|amig[oa]s?|sogr[oa]s?|cunhad[oa]s?|entead[oa]s?|"
    r"afilhad[oa]s?|padrinho|madrinha|namorad[oa]|noiv[oa]|vizinh[oa]s?|colegas?|cacula|"
    r"ele|ela|dele|dela|deles|delas|eu|a|o|os|as)"
)
_NUMBER = r"(\d{1,3})(?![\d:.,/hx%])"
_AGE = re.compile(
    rf"\b{_NUMBER}\s*(?:anos?|anso|aninhos)\b"
    rf"|\b(?:tem|tenho|temos|tinha|fizer|fazer|faz|faco|fez|completa|completar|completou|"
    rf"com|idade de|idade)\s+(?:so\s+|quase\s+|uns\s+)?{_NUMBER}(?!\s*(?:h\b|horas?|reais|x\b))"
    rf"|\b{_PEOPLE}\s+(?:de|com)\s+{_NUMBER}(?!\s*(?:h\b|horas?|reais|x\b|vezes))"
)
# A span of practice, not an age: "joga faz uns 2 anos", "treino há 3 anos", "5 anos que jogo".
_PRACTICE_BEFORE = re.compile(r"\b(?:jog|trein|pratic)\w*(?:\s+\S+){0,2}\s*$")
_SPAN_AFTER = re.compile(
    r"\s*(?:anos?\s+)?(?:de (?:experiencia|jogo|pratica|beach|quadra)|que|jogando|atras)\b"
)
_BIRTH_YEAR = re.compile(r"\b(?:nasci|nasceu|nascid[oa]|nascemos)\s+(?:em|no ano de)?\s*(\d{4})\b")


def ages_in(text: str, now: datetime | None) -> list[int]:
    """The ages ``text`` gives, in order, each once; a birth year becomes the age it gives at
    ``now`` (the birthday may not have come yet: the younger of the two possible ages), and
    is read only when ``now`` is known."""
    normalized = with_digits(normalize(text))
    found: list[tuple[int, int]] = []
    for match in _AGE.finditer(normalized):
        before = normalized[: match.start()]
        if _PRACTICE_BEFORE.search(before) or _SPAN_AFTER.match(normalized, match.end()):
            continue
        value = next(int(group) for group in match.groups() if group is not None)
        found.append((match.start(), value))
    if now is not None:
        for match in _BIRTH_YEAR.finditer(normalized):
            year = int(match[1])
            if 1900 <= year <= now.year:
                found.append((match.start(), now.year - year - 1))
    return list(dict.fromkeys(value for _, value in sorted(found)))


def asks_about_age(
    clause: str, index: FaqIndex, ages: list[int], *, continuing: bool = False
) -> bool:
    """Whether ``clause`` asks if someone of ``ages`` may take classes: the pack has an age
    rule, an age was given, and the clause names nothing but what the age entry knows.

    Words the base never uses do not count against it (people name relatives in endless ways:
    "meu enteado de 7, pode jogar?"), but the clause must then name something the age entry
    knows ("jogar", "criança") or ask for permission ("minha sogra de 70 pode?", "aceitam
    alguém de 99?": an age alone, "tem 10", is given, not asked about); a word another entry
    owns makes it that entry's question, and so does an unknown word with no permission asked
    ("tenho 30, tem desconto?").
    ``continuing``: the conversation's topic is already ages ("e a de 12?").
    """
    rule = index.config.age_rule
    if rule is None or not ages:
        return False
    if continuing:
        return True
    carriers = {stem(normalize(w)) for w in rule.age_words}
    content = index.content_terms(clause) - carriers
    known = {t for t in content if index.known(t)}
    age_terms = index.entry_terms(rule.entry)
    permission = {normalize(w) for w in rule.permission_words}
    asks_permission = bool(permission & set(normalize(clause).split()))
    if not content:
        # Nothing but the age: a question only when it asks for permission ("com 12 pode?");
        # "tem 10" alone is someone's age given, not asked about.
        return asks_permission
    return (bool(known) or asks_permission) and known <= age_terms


def age_question(
    clause: str,
    index: FaqIndex,
    ages: list[int],
    said: list[int],
    *,
    continuing: bool = False,
) -> bool:
    """Whether ``clause`` is answered by the age rule: it gives an age itself (``ages``) and
    asks about it (:func:`asks_about_age`), or names the age entry's words while another part
    of the message gives the age (``said``: "tem limite de idade? nasci em 1950")."""
    if asks_about_age(clause, index, ages, continuing=continuing):
        return True
    if not said or not index.content_terms(clause):
        return False
    # An age given elsewhere does not make every question about the class an age question:
    # "tenho 55. gostaria de informações sobre a aula experimental" asks what another entry
    # answers whole.
    best = index.best(clause)
    rule = index.config.age_rule
    if (
        best is not None
        and rule is not None
        and best.entry_id != rule.entry
        and best.coverage >= 1
        and best.score >= index.config.threshold
    ):
        return False
    return asks_about_age(clause, index, said)
