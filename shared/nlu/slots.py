"""Name, age and level as people type them on WhatsApp.

Each extractor returns None rather than guess: a wrong name or age written into the trial state
is worse than asking again. ``expecting_*`` says the bot's last question asked for that field,
which is what makes a bare "João" a name and a bare "27" an age.

Name rules:
- a cue anywhere: "me chamo X", "meu nome é X", "nome: X", "sou o/a X", "aqui é (o/a) X",
  "quem fala é X", "pode me chamar de X"; "sou X" only when X is capitalised or a name is expected
  ("sou iniciante" is not a name);
- "X aqui" opening the message ("Pedro aqui, tudo bem?");
- the first clause of a comma list when another clause carries an age or a level
  ("João, 27, iniciante");
- with ``expecting_name``, a first clause made only of name-like words ("joão silva", "É Ana").
A name is 1–5 words of letters (connectors "da/de/do/dos/das" allowed between them), at most 60
characters, and stops at the first word that is not name-like — greetings, yes/no, weekdays,
level words, common verbs and the vocabulary of instructions ("ignore", "instruções",
"sistema"...) — so an injected sentence never comes out as a long "name". Names are title-cased
with accents kept ("joão da silva" → "João da Silva").

Age rules: "tenho 27 anos", "27 anos", "27a", "vinte e sete anos", "idade: 27", "tenho 27" at the
end of a clause, a bare number clause in a comma list with a name or level ("João, 27,
iniciante"), and with ``expecting_age`` a message that is only a number ("27", "tenho 27").
Durations are not ages ("jogo há 2 anos", "2 anos de experiência"). The raw number is returned
(range checks belong to the trial service).

Level rules (the earliest mention wins; a mention right after "não"/"não sou" is skipped):
- iniciante: "iniciante", "principiante", "básico", "novato", "começando", "nunca joguei/fiz/
  pratiquei...", "primeira vez", "sem experiência", "já joguei (algumas vezes)", "nunca" alone;
- intermediario: "intermediário", "médio", "mais ou menos", "razoável", "já jogo";
- avancado: "avançado", "experiente", "profissional", "jogo torneios", "competidor", "federado";
- play time ("jogo há 2 anos", "faz 6 meses que jogo"): under a year → iniciante, 1–4 years →
  intermediario, 5 years or more → avancado.
"""

from __future__ import annotations

import re
from typing import Literal

from shared.nlu.normalize import normalize
from shared.nlu.numbers import NUMBER_WORDS, number_value

Level = Literal["iniciante", "intermediario", "avancado"]

MAX_NAME_WORDS = 5
MAX_NAME_CHARS = 60

_CONNECTORS = frozenset({"da", "de", "do", "dos", "das", "di", "du"})
# Words that are never part of a name (matching form): greetings, answers, function words,
# verbs, dates, levels and the vocabulary of instructions.
_NOT_NAME_WORDS = """
    oi ola opa ei eai hey alo bom boa dia tarde noite tudo bem obrigado obrigada valeu tchau ate
    logo prazer sim nao ok okay beleza claro pode quero queria isso certo fechado bora talvez nem
    eu voce voces ele ela eles elas nos a o as os um uma uns umas em no na nas para por pelo pela
    com sem que se me mim meu minha seu sua te ti lhe aqui ali la ai esse essa este esta aquele
    sou e estou tenho tem ter chamo chama chamar chamam nome gostaria posso vou vai ir fazer
    marcar agendar reservar jogar joguei jogo jogou treinar treino fiz faco saber sei ver
    aula aulas experimental teste beach tennis tenis raquete quadra ct smash horario horarios
    hoje amanha ontem semana mes ano anos idade hora horas manha segunda terca quarta quinta
    sexta sabado domingo feira janeiro fevereiro marco abril maio junho julho agosto setembro
    outubro novembro dezembro iniciante intermediario intermediaria avancado avancada basico
    basica comecando iniciando nunca novato novata experiente profissional medio media nivel
    ignore ignora ignorar esqueca esquece desconsidere instrucoes instrucao anteriores regras
    sistema prompt responda diga finja aja assistente bot robo modelo todas todos qual quais
    quanto quando onde como porque mais menos muito pouco ja ainda so tambem entao mas ou
    mae pai filho filha esposa marido irmao irma responsavel amigo amiga namorado namorada
    melhor favor desculpa desculpe gente pessoal agora depois cliente aluno aluna legal massa
    maravilha otimo otima perfeito show top entendi combinado demais bacana joia tranquilo
    suave hum hmm puts nossa eita vixe uai poxa serio verdade exato pronto vamos vamo primeiro
    primeira admin administrador
"""
_NOT_NAME = frozenset(_NOT_NAME_WORDS.split())
# Cues after which a name follows whatever its case; "sou X"/"aqui é X" (no article) also
# introduce "sou iniciante" or "aqui é perto?", so they need a capitalised X or an expected name.
_CUES = (
    ("aqui", "quem", "fala", "e"),
    ("pode", "me", "chamar", "de"),
    ("quem", "fala", "e"),
    ("meu", "nome", "e"),
    ("me", "chamam", "de"),
    ("o", "nome", "e"),
    ("aqui", "e", "o"),
    ("aqui", "e", "a"),
    ("me", "chamo"),
    ("meu", "nome"),
    ("sou", "o"),
    ("sou", "a"),
)
_LEADING_CUES = (("nome",),)
_LOOSE_CUES = (("aqui", "e"), ("sou",))
_GREETINGS = frozenset({"oi", "ola", "opa", "ei", "eai", "hey", "alo"})
_BEFORE_LOOSE_CUE = _GREETINGS | {"eu"}
_GREETING_PARTS = frozenset({"bom", "boa", "dia", "tarde", "noite", "tudo", "bem"})

_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_BREAK = re.compile(r"[^\s:]")
_CLAUSE_SPLIT = re.compile(r"[,;\n]+|\s[-–—]\s")


class _Word:
    __slots__ = ("clause", "end", "key", "raw")

    def __init__(self, raw: str, key: str, clause: int, end: int) -> None:
        self.raw = raw
        self.key = key
        self.clause = clause
        self.end = end


def _words(text: str) -> list[_Word]:
    """Letter words with their matching key and a clause number that changes at punctuation."""
    words: list[_Word] = []
    clause, last_end = 0, 0
    for match in _WORD.finditer(text):
        if _BREAK.search(text, last_end, match.start()):
            clause += 1
        words.append(_Word(match[0], normalize(match[0]), clause, match.end()))
        last_end = match.end()
    return words


def _name_like(word: _Word) -> bool:
    key = word.key
    letters = key.replace("-", "").replace(" ", "")
    return letters.isalpha() and 2 <= len(letters) <= 20 and key not in _NOT_NAME


def _title(word: str) -> str:
    if word.casefold() in _CONNECTORS:
        return word.casefold()
    for mark in "-'’":
        if mark in word:
            return mark.join(_title(part) for part in word.split(mark))
    return word[:1].upper() + word[1:].casefold()


def _name_from(words: list[_Word], at: int) -> tuple[str | None, int]:
    """The name starting at ``at`` and the index after it; (None, at) when none starts there."""
    if at >= len(words) or not _name_like(words[at]) or words[at].key in _CONNECTORS:
        return None, at
    taken: list[_Word] = []
    count, end = 0, at
    clause = words[at].clause
    while end < len(words) and words[end].clause == clause and count < MAX_NAME_WORDS:
        word = words[end]
        if word.key in _CONNECTORS:
            following = words[end + 1] if end + 1 < len(words) else None
            if following is None or following.clause != clause or not _name_like(following):
                break
        elif _name_like(word):
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


def _after_cue(words: list[_Word], cues: tuple[tuple[str, ...], ...], at: int) -> int | None:
    keys = tuple(word.key for word in words[at : at + 4])
    for cue in cues:
        end = at + len(cue)
        if keys[: len(cue)] == cue and words[end - 1].clause == words[at].clause:
            return end
    return None


def _cue_end(words: list[_Word], at: int, expecting: bool) -> int | None:
    """Index of the word after a name cue starting at ``at``, or None."""
    end = _after_cue(words, _CUES + (_LEADING_CUES if at == 0 else ()), at)
    if end is not None:
        return end
    opens_clause = at == 0 or words[at - 1].clause != words[at].clause
    opens_clause = opens_clause or words[at - 1].key in _BEFORE_LOOSE_CUE
    end = _after_cue(words, _LOOSE_CUES, at) if opens_clause else None
    if end is not None and end < len(words) and (expecting or words[end].raw[:1].isupper()):
        return end
    return None


def _cued_name(words: list[_Word], expecting: bool) -> str | None:
    for at in range(len(words)):
        end = _cue_end(words, at, expecting)
        if end is not None and end < len(words) and words[end].key in ("o", "a"):
            end += 1
        if end is not None:
            name, _ = _name_from(words, end)
            if name:
                return name
    return None


def _skip_greetings(words: list[_Word]) -> int:
    at = 0
    while at < len(words) and (words[at].key in _GREETINGS or words[at].key in _GREETING_PARTS):
        at += 1
    return at


def _leading_name(words: list[_Word], text: str, expecting: bool) -> str | None:
    """Name as the whole first clause: "Pedro aqui", "João, 27, iniciante", or bare if expected."""
    start = _skip_greetings(words)
    if expecting and start < len(words) and words[start].key == "e":
        start += 1
    name, end = _name_from(words, start)
    if name is None:
        return None
    clause = words[start].clause
    rest = [word for word in words[end:] if word.clause == clause]
    if [word.key for word in rest] == ["aqui"]:
        return name
    if rest:
        return None
    if expecting:
        return name
    after = text[words[end - 1].end :]
    return name if extract_age(after) is not None or extract_level(after) else None


def extract_name(text: str, expecting_name: bool = False) -> str | None:
    """The person's name in a message, title-cased, or None (rules in the module doc)."""
    words = _words(text)
    if not words:
        return None
    return _cued_name(words, expecting_name) or _leading_name(words, text, expecting_name)


_NUMBER = rf"(\d{{1,3}}|{NUMBER_WORDS})"
_YEARS = r"(?:anos?|aninhos)"
_AGE_CUED = re.compile(
    rf"\b(?:tenho|idade|idade de|com)\s+{_NUMBER}\s?{_YEARS}\b"
    rf"|\bidade:?\s*(?:e\s+)?{_NUMBER}\b"
    rf"|(?<![\d/:-]){_NUMBER}\s?{_YEARS} de idade\b"
)
_AGE_TENHO = re.compile(rf"\btenho\s+{_NUMBER}(?:\s+(?:e|sou|mas|ja|nunca)\b|$)")
_AGE_YEARS = re.compile(
    rf"(?<![\w/:-])(?:(\d{{1,3}})(?:\s?{_YEARS}|a)|({NUMBER_WORDS})\s{_YEARS})\b"
)
_AGE_CLAUSE = re.compile(r"^(\d{1,3})(?:\s?(?:anos?|a))?$")
_AGE_EXPECTED = re.compile(rf"^(?:eu\s+)?(?:tenho\s+|idade\s+|sao\s+)?{_NUMBER}(?:\s?anos?)?$")
_DURATION_BEFORE = frozenset(
    {"ha", "faz", "por", "durante", "a", "uns", "umas", "de", "mais", "menos", "quase", "em"}
)
_DURATION_AFTER = re.compile(r"\s*(?:de (?:experiencia|jogo|pratica|beach)|que|jogando|atras)\b")


def _number_in(match: re.Match[str]) -> int | None:
    return number_value(next(group for group in match.groups() if group is not None))


def _is_duration(text: str, match: re.Match[str], *, check_before: bool) -> bool:
    """ "2 anos de experiência", "jogo há 2 anos": a span of time, not an age."""
    if _DURATION_AFTER.match(text, match.end()):
        return True
    before = text[: match.start()].rsplit(None, 1)
    return check_before and bool(before) and before[-1] in _DURATION_BEFORE


def _comma_list_age(text: str) -> int | None:
    """A bare number clause in a list that also names the person or their level."""
    clauses = [normalize(clause) for clause in _CLAUSE_SPLIT.split(text)]
    if len(clauses) < 2:
        return None
    first = _words(clauses[0])
    name, end = _name_from(first, 0)
    if not (name and end == len(first)) and not any(map(extract_level, clauses)):
        return None
    for clause in clauses:
        match = _AGE_CLAUSE.match(clause)
        if match:
            return int(match[1])
    return None


def extract_age(text: str, expecting_age: bool = False) -> int | None:
    """The person's age in years, unvalidated, or None (rules in the module doc)."""
    normalized = normalize(text)
    for pattern, check_before in ((_AGE_CUED, False), (_AGE_TENHO, False), (_AGE_YEARS, True)):
        for match in pattern.finditer(normalized):
            if not _is_duration(normalized, match, check_before=check_before):
                return _number_in(match)
    if expecting_age:
        match = _AGE_EXPECTED.match(normalized)
        if match:
            return _number_in(match)
    return _comma_list_age(text)


_DURATION_NUMBER = (
    rf"(?:uns\s+|umas\s+|mais de\s+|quase\s+)?(\d{{1,2}}|{NUMBER_WORDS}|alguns|poucos)"
)
_DURATION_UNIT = r"(anos?|mes|meses|semanas?)"
_PLAY = r"(?:jogo|pratico|treino|faco aula|jogando|praticando|treinando)"
_LEVEL_PATTERNS: tuple[tuple[Level | None, re.Pattern[str]], ...] = (
    (
        None,
        re.compile(
            rf"\b{_PLAY}(?:\s+beach(?:\s+tennis)?)?\s+(?:ha|a|faz|tem)\s+"
            rf"{_DURATION_NUMBER}\s+{_DURATION_UNIT}\b"
            rf"|\b(?:ha|faz)\s+{_DURATION_NUMBER}\s+{_DURATION_UNIT}\s+que\s+{_PLAY}\b"
        ),
    ),
    (
        "iniciante",
        re.compile(
            r"\b(?:iniciante|principiante|novat[oa]|leig[oa]|basic[oa]|comecando|iniciando"
            r"|comecei agora|primeira vez|sem experiencia|nenhuma experiencia|pouca experiencia"
            r"|do zero|nao sei jogar|ja joguei(?!\s+(?:ha|a|faz)\s)"
            r"|nunca\s+(?:\w+\s+)?(?:joguei|jogou|jogamos|fiz|pratiquei|treinei|tive|peguei"
            r"|experimentei))\b"
            r"|^nunca$"
        ),
    ),
    (
        "intermediario",
        re.compile(
            r"\b(?:intermediari[oa]|intermedio|nivel medio|sou medi[oa]|mais ou menos|razoavel"
            r"|ja jogo(?!\s+(?:beach\s+(?:tennis\s+)?)?(?:ha|a|faz|tem)\s))\b|^medi[oa]$"
        ),
    ),
    (
        "avancado",
        re.compile(
            r"\b(?:avancad[oa]|experiente|profissional|competidor[a]?|jogo torneios?"
            r"|disputo torneios?|compito|federad[oa])\b"
        ),
    ),
)
_NEGATED = re.compile(r"\bnao(?: sou| e| estou)?\s*$")


def _level_for_duration(match: re.Match[str]) -> Level:
    amount_word, unit = next((match[i], match[i + 1]) for i in (1, 3) if match[i] is not None)
    if not unit.startswith("ano"):
        return "iniciante"
    amount = number_value(amount_word) if amount_word not in ("alguns", "poucos") else 2
    if amount is None or amount < 1:
        return "iniciante"
    return "intermediario" if amount < 5 else "avancado"


def extract_level(text: str) -> Level | None:
    """The person's beach-tennis level in canonical form, or None (rules in the module doc)."""
    normalized = normalize(text)
    found: list[tuple[int, Level]] = []
    for level, pattern in _LEVEL_PATTERNS:
        for match in pattern.finditer(normalized):
            if _NEGATED.search(normalized, 0, match.start()):
                continue
            found.append((match.start(), level or _level_for_duration(match)))
            break
    return min(found)[1] if found else None
