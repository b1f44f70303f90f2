"""The upset signal (shared/nlu/upset.py): words decide, style only weighs them."""

import pytest

from shared.nlu.upset import complains, is_upset, upset_signal


@pytest.mark.parametrize(
    "text",
    [
        # An insult alone.
        "vcs são uns incompetentes",
        "que lixo de atendimento",
        # Two complaints.
        "isso é um absurdo, que descaso com o cliente",
        "fiquei esperando e perdi meu tempo, vou reclamar",
        # One complaint with emphasis.
        "que palhaçada!!",
        "ESTOU MUITO DECEPCIONADA COM VOCES",
        "ninguém me responde?!",
    ],
)
def test_upset_messages(text: str) -> None:
    assert is_upset(text)


@pytest.mark.parametrize(
    "text",
    [
        # Capitals out of habit and quick punctuation are not anger.
        "BOA NOITE GOSTARIA DE MARCAR UMA AULA PARA MINHA ESPOSA",
        "alguém aí??",
        "vcs abrem sábado???",
        # One complaint word said calmly is not enough.
        "nunca mais joguei desde a faculdade",
        "achei o preço um absurdo de bom",
        "quero marcar uma aula, pode ser terça?",
    ],
)
def test_calm_messages(text: str) -> None:
    assert not is_upset(text)


def test_the_signal_counts_each_part() -> None:
    signal = upset_signal("QUE VERGONHA, QUE DESCASO!!!")
    assert (signal.complaints, signal.insults, signal.shouting, signal.repeated_marks) == (
        2,
        0,
        True,
        True,
    )


@pytest.mark.parametrize(
    ("text", "calm_complaint"),
    [
        # Waiting is a complaint: said calmly, one is said sorry for, not handed off.
        ("nossa, vocês demoram demais pra responder", True),
        ("quanta demora pra me atenderem", True),
        ("tá demorando né", True),
        ("que descaso", True),
        # The customer's own delay, a question about a duration, nothing complained of.
        ("foi mal a demora, tava no trabalho", False),
        ("demora quanto tempo a aula?", False),
        ("quero marcar uma aula", False),
        # Upset (with emphasis): a person, not an apology.
        ("que demora!!", False),
    ],
)
def test_a_calm_complaint(text: str, calm_complaint: bool) -> None:
    assert complains(text) is calm_complaint
