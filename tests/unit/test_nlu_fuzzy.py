"""Chat spelling and typos: normalization, the pack vocabulary and fuzzy correction, and triage
reading informal requests through them."""

from __future__ import annotations

import pytest

from services.triage.config import load_config
from services.triage.rules import classify
from shared.nlu.fuzzy import Vocabulary, pack_vocabulary
from shared.nlu.normalize import normalize
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
    ],
)
def test_known_words_and_names_stay_as_they_are(text: str) -> None:
    normalized = normalize(text)
    assert VOCABULARY.correct(normalized) == normalized


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
