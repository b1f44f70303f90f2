"""Chat spelling and typos: normalization, the pack vocabulary and fuzzy correction, and triage
reading informal requests through them."""

from __future__ import annotations

import pytest

from services.triage.config import load_config
from services.triage.rules import classify
from shared.nlu.fuzzy import Vocabulary, pack_vocabulary
from shared.nlu.normalize import normalize
from shared.nlu.slots import extract_level
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)
VOCABULARY = pack_vocabulary(PACK)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("qro agenda uma aulinha", "quero agenda uma aulinha"),
        ("kero marcar", "quero marcar"),
        ("tô afim de experimentar", "quero experimentar"),
        ("to a fim de jogar", "quero jogar"),
        ("vc tb vai hj?", "voce tambem vai hoje"),
        ("amanhã blz", "amanha beleza"),
        ("terca q vem", "terca que vem"),
        ("sextinha q vem", "sexta que vem"),
        ("no sabadão", "no sabado"),
        ("simmmm", "sim"),
        ("bele", "bele"),
    ],
)
def test_chat_spelling(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("quero uma aula esperimental", "quero uma aula experimental"),
        ("quero agnedar", "quero agendar"),
        ("qual o enderesso", "qual o endereco"),
        ("tem estacionamneto", "tem estacionamento"),
        ("vcs emprestam raqete", "voces emprestam raquete"),
        ("mensalidadi", "mensalidade"),
    ],
)
def test_typos_are_corrected_to_the_pack_vocabulary(text: str, expected: str) -> None:
    assert VOCABULARY.correct(normalize(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "carla",
        "paulo",
        "sou de sao paulo",
        "minha filha sofia",
        "quero marcar",
        "terca que vem",
        "tudo bem",
        "19h",
        # A long word is no typo of a stem its first letters are two edits from ("chov*").
        "tenho um compromisso",
        # A plural, or an infinitive of a form the pack spells, is no typo of another word.
        "treino as quintas",
        "vao cobrar taxa",
        "pode deixar",
    ],
)
def test_known_words_and_names_stay_as_they_are(text: str) -> None:
    normalized = normalize(text)
    assert VOCABULARY.correct(normalized) == normalized


def test_a_short_word_is_read_with_the_word_after_it() -> None:
    """Alone, a four- or five-letter word is too short to tell a typo from another word; before
    the second word of a two-word target, one edit from its first word, it is that word."""
    vocabulary = Vocabulary.from_phrases(["nunca jog*", "aula experimental"])
    assert vocabulary.correct("nuca joguei") == "nunca joguei"
    assert vocabulary.correct("tem aual experimental") == "tem aula experimental"
    # Alone, before another word, further than one edit, or a known word: as written.
    assert vocabulary.correct("nuca") == "nuca"
    assert vocabulary.correct("a nuca doi") == "a nuca doi"
    assert vocabulary.correct("nixa joguei") == "nixa joguei"
    assert vocabulary.correct("unca joguei") == "unca joguei"  # not its first letter
    assert vocabulary.correct("aula experimental") == "aula experimental"


def test_a_short_typo_before_a_level_phrase_gives_the_level() -> None:
    assert extract_level("tenho 31 anos nuca joguei") == "iniciante"
    assert extract_level("tenho 31 anos, machuquei a nuca") is None


def test_a_vocabulary_from_words_and_stems() -> None:
    vocabulary = Vocabulary.from_phrases(["agend*", "aula experimental", "mensalidade"])
    assert vocabulary.correct("quero agnedamento de aula esperimental") == (
        "quero agendamento de aula experimental"
    )
    assert vocabulary.correct("qual a mensalidadr") == "qual a mensalidade"
    assert vocabulary.correct("oi") == "oi"


@pytest.mark.parametrize(
    "text",
    [
        "tô afim de experimentar o beach tennis",
        "qro agenda uma aulinha",
        "quero fazer uma aula esperimental",
        "kero agnedar uma aula",
    ],
)
def test_informal_requests_score_the_trial_intent(text: str) -> None:
    result = classify(text, trial_stage=None, config=CONFIG, pack=PACK)
    assert "trial" in result.intents
