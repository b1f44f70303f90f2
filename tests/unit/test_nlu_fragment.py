"""The fragment classifier: greetings and openers alone wait for the rest; anything to answer
does not. Run on the real ctsmash pack (its greetings and ``burst.openers``)."""

from __future__ import annotations

import pytest

from shared.nlu.fragment import Fragments, is_fragment
from shared.pack import load_pack

PACK = load_pack("ctsmash")


@pytest.mark.parametrize(
    "text",
    [
        "oi",
        "Oii",
        "oie!",
        "bom dia",
        "Bom diaaa 😊",
        "olá, tudo bem?",
        "boa tarde! td bem?",
        "e aí, tudo certo?",
        "queria saber",
        "Oi! Queria saber",
        "uma dúvida",
        "tenho uma dúvida...",
        "então",
        "tipo",
        "é o seguinte",
        "oi gente, é o seguinte:",
        "posso tirar uma dúvida?",
        "👋😊",
        "?",
    ],
)
def test_greetings_and_openers_alone_are_fragments(text: str) -> None:
    assert is_fragment(text, PACK)


@pytest.mark.parametrize(
    "text",
    [
        "quanto custa o plano de 3x?",
        "oi, quanto custa o plano de 3x?",
        "queria saber o preço",
        "bom dia, quero agendar uma aula experimental",
        "oi, sou o Paulo",
        "Paulo",
        "28",
        "sim",
        "s",
        "2",
        "iniciante",
        "terça às 18h",
        "onde fica?",
        "obrigado!",
        "ok",
        "tchau",
        "uma dúvida: vocês emprestam raquete?",
        "oi u",  # a word the vocabulary does not know is something to answer
    ],
)
def test_a_message_with_something_to_answer_is_complete(text: str) -> None:
    assert not is_fragment(text, PACK)


def test_an_empty_text_is_not_a_fragment() -> None:
    """A photo without a caption arrives with no text: nothing to wait for."""
    assert not is_fragment("", PACK)
    assert not is_fragment("   ", PACK)


def test_the_vocabulary_comes_from_the_pack() -> None:
    greetings = next(g for g in PACK.sections["triage"]["general"] if g["name"] == "greeting")
    assert "salve" in greetings["keywords"]
    assert is_fragment("salve", PACK)  # a triage greeting, not in burst.openers
    assert not is_fragment("obrigado", PACK)  # thanks is small talk but not an opener


def test_a_trailing_star_matches_word_starts() -> None:
    fragments = Fragments(["bom dia", "salv*"])
    assert fragments.is_fragment("salveee, bom dia")
    assert fragments.is_fragment("Salvo")
    assert not fragments.is_fragment("bom")


@pytest.mark.parametrize(
    "text", ["quanto custa", "Quanto é", "oi, qual o valor", "como funciona...", "vcs tem"]
)
def test_a_question_naming_no_subject_waits_for_it(text: str) -> None:
    """Typed as "quanto custa" then "a aula experimental": the subject is the next message."""
    assert is_fragment(text, PACK)


@pytest.mark.parametrize(
    "text", ["quanto custa?", "oi, qual o valor?", "quanto custa o plano", "como funciona a aula"]
)
def test_a_question_mark_or_a_subject_finishes_it(text: str) -> None:
    assert not is_fragment(text, PACK)


def test_an_unfinished_question_runs_on_into_the_next_message() -> None:
    fragments = Fragments.from_pack(PACK)
    assert fragments.is_unfinished("quanto custa")
    assert fragments.is_unfinished("opa, qual o valor")
    for finished in ("quanto custa?", "oi", "quanto custa o plano", "Paulo"):
        assert not fragments.is_unfinished(finished)
