"""Who the student is and when, as people tell it: two-digit birth years, a level named over a level
inferred, "nunca" near the sport, an hour after "às" that is no group of people, and the words
around an hour that say its half of the day."""

from datetime import date

import pytest

from shared.nlu.age import age_from_birth
from shared.nlu.dates import resolve_time
from shared.nlu.normalize import normalize
from shared.nlu.party import age_named, party_in
from shared.nlu.slots import extract_level
from shared.pack import load_pack
from shared.trial.config import load_trial_config

TODAY = date(2026, 6, 15)
# The CT Smash pack's rule for the level of a time played ("jogo há 2 anos").
LEVELS = load_trial_config(load_pack("ctsmash")).levels_by_time


@pytest.mark.parametrize(
    ("text", "age"),
    [
        ("nasci em 87", 39),
        ("minha filha nasceu em 15", 11),
        ("nascido em 02, faço aula há pouco", 24),
        # A day and month after the birth word is a date, not a year.
        ("nasci em 12 de abril", None),
        ("nasci em 12/4", None),
    ],
)
def test_two_digit_birth_year_after_a_birth_word(text: str, age: int | None) -> None:
    assert age_from_birth(text, normalize(text), TODAY) == age


def test_two_digits_without_a_birth_word_are_no_birth_year() -> None:
    assert age_from_birth("sou de 90", normalize("sou de 90"), TODAY) is None


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("já joga uns jogos com os amigos, mas é iniciante", "iniciante"),
        ("joga faz 8 anos, se acha intermediária", "intermediario"),
        ("já jogo, sou do avançado", "avancado"),
        # Without a class word the story still decides.
        ("já jogo com a turma do prédio", "intermediario"),
        # A class word taken back does not count.
        ("não sou iniciante, jogo há 6 anos", "avancado"),
    ],
)
def test_a_class_word_wins_over_a_level_inferred_from_a_story(text: str, level: str) -> None:
    assert extract_level(text, levels_by_time=LEVELS) == level


@pytest.mark.parametrize(
    "text",
    [
        "ele nunca entrou numa quadra",
        "nunca tinha visto uma bolinha dessas",
        "minha mãe nunca nem pegou em raquete",
        # A Spanish speaker's past tense.
        "tengo 31 años y nunca jugué",
    ],
)
def test_never_near_the_sport_is_a_beginner(text: str) -> None:
    assert extract_level(text) == "iniciante"


@pytest.mark.parametrize(
    "text",
    ["terça às 7, sou o Caio Reis", "pode ser das 8 às 9?", "para as 6 da tarde"],
)
def test_an_hour_after_a_feminine_article_is_no_group(text: str) -> None:
    assert party_in(text) is None


@pytest.mark.parametrize(
    ("text", "size"),
    [("queremos marcar as duas amigas", 2), ("pras 3 meninas", 3), ("os dois nunca treinaram", 2)],
)
def test_a_number_with_people_after_it_is_a_group(text: str, size: int) -> None:
    party = party_in(text)
    assert party is not None and party.size == size


@pytest.mark.parametrize(
    ("question", "said", "age"),
    [
        # A question naming one of a group reads that person's age, not the writer's.
        ("e a Lívia, leva o quê?", ["eu e minha sobrinha Lívia, ela tem 13"], 13),
        ("o Davi precisa de raquete?", ["somos 3: eu (41), o Davi de 8 e a Clara de 15"], 8),
        # The latest group message that gives it wins.
        (
            "Davi leva algo?",
            ["eu e meu filho Davi, de 8", "na verdade eu e meu filho Davi, ele tem 9"],
            9,
        ),
        # No one of a group named, or no group at all: nothing.
        ("o que eu levo?", ["eu e minha sobrinha Lívia, ela tem 13"], None),
        ("o Davi leva algo?", ["quero marcar pro Davi, ele tem 8"], None),
    ],
)
def test_a_question_naming_one_of_a_group_reads_their_age(
    question: str, said: list[str], age: int | None
) -> None:
    assert age_named(question, said) == age


CLASS_TIMES = {"07:00", "18:00", "19:00", "20:00"}


@pytest.mark.parametrize(
    ("text", "hour"),
    [
        ("quinta às 7, antes de ir trabalhar", 7),
        ("pode ser às 7 bem cedinho", 7),
        ("às 7, depois do expediente", 19),
        ("de noite, lá pelas 8", 20),
        ("às 7", 7),
    ],
)
def test_words_around_an_hour_choose_its_half_of_the_day(text: str, hour: int) -> None:
    found = resolve_time(text, valid_times=CLASS_TIMES)
    assert found is not None and found.hour == hour
