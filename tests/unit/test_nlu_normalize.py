"""Normalization: the matching form every rule in shared/nlu is written against."""

import pytest

from shared.nlu.dates import part_of_day
from shared.nlu.normalize import normalize, strip_accents, tokens
from shared.nlu.slots import extract_name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Terça-feira às 19h", "terca-feira as 19h"),
        ("SIIIIM!!!", "sim"),
        ("Nãããão", "nao"),
        ("vc pode hj?", "voce pode hoje"),
        ("blz, tmj", "beleza tmj"),
        ("  muito   espaço\n\tentre  ", "muito espaco entre"),
        ("10/02 às 19:00", "10/02 as 19:00"),
        ("3ª feira, 1º de março", "3a feira 1o de marco"),
        ("dps de amanhã", "depois de amanha"),
        ("19 hrs", "19 horas"),
        ("n", "nao"),
        ("s", "sim"),
        ("kkkkkk", "k"),
        ("🎾👍", ""),
        ("", ""),
        ("ＦＵＬＬ １９ｈ", "full 19h"),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("João", "Joao"), ("ação", "acao"), ("Ñandú", "Nandu"), ("sem acento", "sem acento")],
)
def test_strip_accents_keeps_case(text: str, expected: str) -> None:
    assert strip_accents(text) == expected


def test_tokens_are_the_normalized_words() -> None:
    assert tokens("Oi, vc tem horário pra terça?") == [
        "oi",
        "voce",
        "tem",
        "horario",
        "para",
        "terca",
    ]


def test_slang_expansion_is_per_word_only() -> None:
    # "tb" inside a word must stay as it is.
    assert normalize("atbc tb") == "atbc tambem"


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("terça dia 15 de manhãzinha", "manha"),
        ("de tardezinha", "tarde"),
        ("lá pela noitinha", "noite"),
    ],
)
def test_a_part_of_the_day_in_the_diminutive_is_the_part_and_no_name(text: str, part: str) -> None:
    """ "de manhãzinha" was read as a name ("Manhãzinha") and no time."""
    assert part_of_day(text) == part
    assert extract_name(text, expecting_name=True) is None
