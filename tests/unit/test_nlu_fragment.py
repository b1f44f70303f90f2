"""The fragment classifier: a message that asks nothing, or only greets, waits for the rest; a
question does not. Run on the real ctsmash pack (its greetings and ``burst.openers``)."""

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
        "bom dia, quero agendar uma aula experimental",
        "oi, sou o Paulo",
        "Paulo",
        "Helena Prado",
        "28",
        "tenho 52 anos",
        "sim",
        "s",
        "2",
        "iniciante",
        "nunca peguei numa raquete",
        "terça às 18h",
        "qui 9/3",
        "ok",
        "obrigado!",
        "queria saber o preço",
        "quanto custa o plano",
        "oi u",
    ],
)
def test_a_message_that_asks_nothing_may_go_on(text: str) -> None:
    """A request, a name, an age, a day, a yes: what people split into pieces as they type."""
    assert is_fragment(text, PACK)


@pytest.mark.parametrize(
    "text",
    [
        "quanto custa o plano de 3x?",
        "oi, quanto custa o plano de 3x?",
        "onde fica?",
        "uma dúvida: vocês emprestam raquete?",
        "dá pra levar meu cachorro?? kkk",
        "sou o Paulo, 28, tem vaga terça?",
        "¿Cuánto cuesta una clase",
    ],
)
def test_a_question_is_done(text: str) -> None:
    """People stop and wait after a question: it is answered after the short window."""
    assert not is_fragment(text, PACK)


def test_an_empty_text_is_not_a_fragment() -> None:
    """A photo without a caption arrives with no text: nothing to wait for."""
    assert not is_fragment("", PACK)
    assert not is_fragment("   ", PACK)


def test_the_vocabulary_comes_from_the_pack() -> None:
    greetings = next(g for g in PACK.sections["triage"]["general"] if g["name"] == "greeting")
    assert "salve" in greetings["keywords"]
    fragments = Fragments.from_pack(PACK)
    assert fragments.covers("salve")  # a triage greeting, not in burst.openers
    assert not fragments.covers("obrigado")  # thanks is small talk but not an opener
    assert fragments.is_fragment("salve, tudo certo?")  # a greeting's question is no subject


def test_a_trailing_star_matches_word_starts() -> None:
    fragments = Fragments(["bom dia", "salv*"])
    assert fragments.covers("salveee, bom dia")
    assert fragments.covers("Salvo")
    assert not fragments.covers("bom")


@pytest.mark.parametrize(
    "text", ["quanto custa", "Quanto é", "oi, qual o valor", "como funciona...", "vcs tem"]
)
def test_a_question_naming_no_subject_waits_for_it(text: str) -> None:
    """Typed as "quanto custa" then "a aula experimental": the subject is the next message."""
    assert is_fragment(text, PACK)


def test_an_unfinished_question_runs_on_into_the_next_message() -> None:
    fragments = Fragments.from_pack(PACK)
    assert fragments.is_unfinished("quanto custa")
    assert fragments.is_unfinished("opa, qual o valor")
    for finished in ("quanto custa?", "oi", "quanto custa o plano", "Paulo"):
        assert not fragments.is_unfinished(finished)
