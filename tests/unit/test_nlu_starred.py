"""A starred message corrects the most similar word typed before it in the same turn."""

import pytest

from shared.nlu.starred import with_starred_corrections


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["quero agendar", "pro Rafael", "Rafaela*"], ["quero agendar", "pro Rafaela"]),
        (["pode ser na quarta", "*quinta"], ["pode ser na quinta"]),
        (["meu nome é Jéssica Lima", "Jessyca*"], ["meu nome é Jessyca Lima"]),
        (
            ["tenho 30 anos, sou intermediaro", "intermediário*"],
            ["tenho 30 anos, sou intermediário"],
        ),
    ],
)
def test_a_starred_word_replaces_its_slip(texts: list[str], expected: list[str]) -> None:
    assert with_starred_corrections(texts) == expected


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        # Nothing similar before it: the word stays, without its asterisk.
        (["oi", "Marcos*"], ["oi", "Marcos"]),
        # A message alone, or starred text that is not one word, is left as it is.
        (["Rafaela*"], ["Rafaela*"]),
        (["quero marcar", "*obs: sou canhoto"], ["quero marcar", "*obs: sou canhoto"]),
        (["terça às 19h", "obrigado"], ["terça às 19h", "obrigado"]),
    ],
)
def test_what_is_not_a_correction(texts: list[str], expected: list[str]) -> None:
    assert with_starred_corrections(texts) == expected
