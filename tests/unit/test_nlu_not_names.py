"""Words a person says of themselves are no name: where they are from ("sou capixaba", a
demonym in "-ense" by its ending), what they are like ("sou destra", "sou o próprio") and an
apology ("perdoa, foi engano"), even while the name is asked."""

from __future__ import annotations

import pytest

from shared.nlu.slots import extract_name


@pytest.mark.parametrize(
    "text",
    [
        "sou capixaba",
        "sou pernambucana",
        "sou paraense, tenho 28",
        "sou amapaense",
        "sou destra",
        "sou o próprio",
        "perdoa, foi engano",
        "desculpas pela demora",
    ],
)
@pytest.mark.parametrize("expecting", [True, False])
def test_what_a_person_is_or_an_apology_is_no_name(text: str, expecting: bool) -> None:
    assert extract_name(text, expecting) is None


def test_names_beside_them_are_still_read() -> None:
    assert extract_name("sou a Josefa, sou capixaba", False) == "Josefa"
    assert extract_name("Heloísa Prado", True) == "Heloísa Prado"
    assert extract_name("Cristiano", True) == "Cristiano"
