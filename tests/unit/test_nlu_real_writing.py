"""Slots as customers really write them: names in any place, ages in words, levels described in
a sentence, chat spelling, informal dates and clock forms, hours read in business context.

Each group is a failure class seen in real conversations; the cases are shapes of the class,
not a list the rules were tuned to one by one.
"""

from datetime import date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from shared.nlu.dates import parse_iso_date, resolve_date, resolve_time, time_candidates
from shared.nlu.extract import extract_slots
from shared.nlu.slots import extract_age, extract_level, extract_name, extract_people
from shared.pack import load_pack
from shared.trial.config import load_trial_config

TZ = ZoneInfo("America/Sao_Paulo")
THURSDAY = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)
MONDAY = datetime(2026, 2, 9, 10, 0, tzinfo=TZ)
TRIAL_TIMES = ["07:00", "18:00", "19:00", "20:00"]
# The CT Smash pack's rule for the level of a time played ("jogo há 2 anos").
LEVELS = load_trial_config(load_pack("ctsmash")).levels_by_time


@pytest.mark.parametrize(
    ("text", "nome", "idade", "nivel"),
    [
        ("quero agendar experimental. Paulo, 50 anos, iniciante", "Paulo", 50, "iniciante"),
        ("sou carla 29 anos intermediaria", "Carla", 29, "intermediario"),
        ("Renata aqui, 41, intermediária", "Renata", 41, "intermediario"),
        ("oi! quero marcar a aula. Beatriz, 33, nunca joguei", "Beatriz", 33, "iniciante"),
        ("bom dia, sou fernanda, tenho 38 anos e jogo faz 2 anos", "Fernanda", 38, "intermediario"),
        ("terça às 19h, Paulo, 30 anos", "Paulo", 30, None),
        ("pode ser terça 10/02 às 18h. meu nome é Bruno", "Bruno", None, None),
        ("queria a aula de terça 19h. sou o rafael, tenho 25", "Rafael", 25, None),
        (
            "Prezados, gostaria de agendar para terça às 19h. Atenciosamente, Márcia",
            "Márcia",
            None,
            None,
        ),
        ("eae mano, bora marcar um treino? sou o lucas 17 anos", "Lucas", 17, None),
    ],
)
def test_a_name_anywhere_in_a_booking_message(
    text: str, nome: str, idade: int | None, nivel: str | None
) -> None:
    slots = extract_slots(text, THURSDAY, TZ, levels_by_time=LEVELS)
    assert (slots.nome, slots.idade, slots.nivel) == (nome, idade, nivel)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Nome completo: Carlos Alberto", "Carlos Alberto"),
        ("nome completo é Ana Lúcia Ramos", "Ana Lúcia Ramos"),
        ("me chama de Duda", "Duda"),
        ("pode chamar de Gabi", "Gabi"),
        ("me chamem de Lelê", "Lelê"),
        ("o nome dele é Theo", "Theo"),
    ],
)
def test_name_cues(text: str, expected: str) -> None:
    assert extract_name(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("paulo", "Paulo"),
        ("maria eduarda", "Maria Eduarda"),
        ("não, é Maria", "Maria"),
        ("nao é maria", "Maria"),
        ("é o joão", "João"),
        ("Ju", "Ju"),
        ("sou a bia", "Bia"),
        ("paulo, e vcs emprestam raquete?", "Paulo"),
        ("pode ser Bia", "Bia"),
    ],
)
def test_a_short_reply_is_a_name_when_the_name_was_asked(text: str, expected: str) -> None:
    assert extract_name(text, expecting_name=True) == expected


@pytest.mark.parametrize(
    "text",
    [
        "sim",
        "pode ser",
        "não sei",
        "tanto faz",
        "boa noite",
        "quanto custa?",
        "qua",
        "terça",
        "iniciante",
        "nunca joguei",
        "ok obrigado",
        "vcs emprestam raquete?",
        "onde fica?",
        "blz",
    ],
)
def test_common_words_are_not_names_even_when_asked(text: str) -> None:
    assert extract_name(text, expecting_name=True) is None


@pytest.mark.parametrize(
    "text",
    [
        "sou nova aqui, tenho 30 anos",
        "sou de são paulo, 30 anos",
        "Sou iniciante, 30 anos",
        "quero marcar terça, 19h",
        "tô afim de experimentar o beach tennis",
        "qro agenda uma aulinha",
        "estacionamento, 30 anos",
    ],
)
def test_no_name_in_messages_without_one(text: str) -> None:
    assert extract_name(text) is None


@pytest.mark.parametrize(
    ("text", "nome", "idade", "contact"),
    [
        ("pra minha filha Sofia, 6 anos, iniciante, terça 10/02 18h", "Sofia", 6, None),
        ("Oi! Sou a Ana e queria marcar pro meu filho Pedro de 9 anos", "Pedro", 9, "Ana"),
        ("quero marcar para o meu marido", None, None, None),
        ("meu filho tem 10 anos", None, 10, None),
        ("é pra minha esposa, Juliana, 35", "Juliana", 35, None),
        ("sou o Marcos, a aula é pro meu sobrinho Davi, 12 anos", "Davi", 12, "Marcos"),
        # What a parent calls a child stands for the relation.
        ("queria uma aula teste pra minha pequena, a Lara, de 8 anos", "Lara", 8, None),
        ("minha princesa Helena tem 7 e quer jogar", "Helena", 7, None),
        ("é pro meu guri, ele se chama Otávio, 11 anos", "Otávio", 11, None),
    ],
)
def test_booking_for_someone_else(
    text: str, nome: str | None, idade: int | None, contact: str | None
) -> None:
    slots = extract_slots(text, THURSDAY, TZ)
    assert slots.for_someone_else is True
    assert (slots.nome, slots.idade, slots.contact_name) == (nome, idade, contact)


@pytest.mark.parametrize(
    ("text", "nome"),
    [
        ("meu nome é marina tnh 31 anos", "Marina"),
        ("sou a Clara, vc tem vaga terça?", "Clara"),
        ("me chamo Flávio blz", "Flávio"),
    ],
)
def test_an_abbreviation_without_a_vowel_is_no_part_of_a_name(text: str, nome: str) -> None:
    assert extract_name(text) == nome


@pytest.mark.parametrize(
    ("text", "nome"), [("tá, é Gustavo", "Gustavo"), ("bom, é a Rebeca", "Rebeca")]
)
def test_a_name_given_in_after_a_word_that_gives_in(text: str, nome: str) -> None:
    assert extract_name(text, expecting_name=True) == nome


def test_a_small_doubt_is_no_child() -> None:
    assert (
        extract_slots("tenho uma pequena dúvida sobre a aula", THURSDAY, TZ).for_someone_else
        is None
    )


def test_the_writer_booking_for_themself() -> None:
    slots = extract_slots("sou carla 29 anos intermediaria", THURSDAY, TZ)
    assert slots.for_someone_else is None
    assert slots.contact_name is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("vinte e nove", 29),
        ("trinta e cinco anos", 35),
        ("tenho quarenta e dois", 42),
        ("28,", 28),
        ("28, quanto é o plano 2x?", 28),
        ("tenho 31. vcs tem vestiario?", 31),
        ("dezessete", 17),
        ("ele tem 9", 9),
        ("ela fez 12 anos", 12),
    ],
)
def test_age_replies(text: str, expected: int) -> None:
    assert extract_age(text, expecting_age=True) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tenho vinte e nove anos", 29),
        ("Paulo, cinquenta e cinco anos", 55),
        ("minha filha tem 6 anos", 6),
        ("carla, trinta e um, iniciante", 31),
    ],
)
def test_ages_in_words_and_digits(text: str, expected: int) -> None:
    assert extract_age(text) == expected


@pytest.mark.parametrize(
    "text",
    ["terça 18h", "dia 23", "10/02", "as 8", "dia vinte e três", "19:30", "18.30", "ter 19h"],
)
def test_dates_and_hours_are_not_ages_even_when_asked(text: str) -> None:
    assert extract_age(text, expecting_age=True) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nunca joguei", "iniciante"),
        ("jogo faz 2 anos", "intermediario"),
        ("ja joguei tenis mas beach nunca", "iniciante"),
        ("ele é iniciante", "iniciante"),
        ("tô começando", "iniciante"),
        ("comecei mês passado", "iniciante"),
        ("jogo há uns 3 meses", "iniciante"),
        ("jogo há 6 anos", "avancado"),
        ("nunca peguei numa raquete", "iniciante"),
        ("nunca fiz aula", "iniciante"),
        ("zero experiência", "iniciante"),
        ("sei o básico", "iniciante"),
        ("não sou iniciante, jogo há 3 anos", "intermediario"),
        ("ela nunca jogou", "iniciante"),
        ("já jogo um pouco", "intermediario"),
        ("jogo a um ano", "intermediario"),
        ("nunca pratiquei nenhum esporte de raquete", "iniciante"),
        ("sou bem ruim kkk", "iniciante"),
        ("já fiz umas aulas", "iniciante"),
    ],
)
def test_levels_described_in_a_sentence(text: str, expected: str) -> None:
    assert extract_level(text, levels_by_time=LEVELS) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nenhuma", "iniciante"),
        ("nada", "iniciante"),
        ("nunca", "iniciante"),
        ("medio", "intermediario"),
    ],
)
def test_level_replies_when_the_level_was_asked(text: str, expected: str) -> None:
    assert extract_level(text, expecting_level=True) == expected


def test_level_words_need_the_question_to_count() -> None:
    assert extract_level("nada") is None


@pytest.mark.parametrize(
    ("text", "now", "expected"),
    [
        ("ter 19h", THURSDAY, date(2026, 2, 10)),
        ("pode ser qui as 18h", THURSDAY, date(2026, 2, 5)),
        ("terca q vem", THURSDAY, date(2026, 2, 10)),
        ("terca q vem", MONDAY, date(2026, 2, 17)),
        ("na terça seguinte", MONDAY, date(2026, 2, 17)),
        ("dia vinte e três", THURSDAY, date(2026, 2, 23)),
        ("10/02", THURSDAY, date(2026, 2, 10)),
        ("vinte e três de fevereiro", THURSDAY, date(2026, 2, 23)),
        ("amanha n posso, sexta", THURSDAY, date(2026, 2, 6)),
        ("terça não, melhor quarta", THURSDAY, date(2026, 2, 11)),
        ("terça... alias quarta", THURSDAY, date(2026, 2, 11)),
    ],
)
def test_informal_dates(text: str, now: datetime, expected: date) -> None:
    assert resolve_date(text, now, TZ) == expected


@pytest.mark.parametrize(
    ("text", "expected"), [("qui", date(2026, 2, 5)), ("sex", date(2026, 2, 6))]
)
def test_a_bare_weekday_abbreviation_when_the_date_was_asked(text: str, expected: date) -> None:
    assert resolve_date(text, THURSDAY, TZ, expecting=True) == expected


@pytest.mark.parametrize("text", ["vai ter aula?", "quero ter uma aula"])
def test_weekday_abbreviations_need_context(text: str) -> None:
    assert resolve_date(text, THURSDAY, TZ) is None


def test_a_weekday_abbreviation_alone_is_that_day() -> None:
    # Issue 29: a bare abbreviation ("qua", "sex", "seg") names the day, asked for or not.
    assert resolve_date("seg", THURSDAY, TZ) == date(2026, 2, 9)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("18.30", time(18, 30)),
        ("18h30", time(18, 30)),
        ("7 e meia da noite", time(19, 30)),
        ("18hrs", time(18, 0)),
        ("as 8 da noite", time(20, 0)),
        ("nao, prefiro as 18hrs", time(18, 0)),
        ("terça às 19h, não, 18h", time(18, 0)),
        ("19h ou melhor 20h", time(20, 0)),
        ("das 18h às 20h", time(18, 0)),
        ("às 3", time(15, 0)),
        ("as oito e meia da noite", time(20, 30)),
        ("ter 19h", time(19, 0)),
    ],
)
def test_clock_forms_and_corrections(text: str, expected: time) -> None:
    assert resolve_time(text) == expected


def test_day_dot_month_is_not_a_time() -> None:
    assert resolve_time("10.02") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("as 8", time(20, 0)),
        ("às 7", time(7, 0)),
        ("as 10 da manhã", time(10, 0)),
        ("lá pelas 6 e pouco", time(18, 0)),
        ("19h", time(19, 0)),
    ],
)
def test_an_ambiguous_hour_takes_the_valid_slot(text: str, expected: time) -> None:
    assert resolve_time(text, valid_times=TRIAL_TIMES) == expected


def test_an_ambiguous_hour_has_both_readings() -> None:
    assert time_candidates("as 8") == [time(8, 0), time(20, 0)]
    assert time_candidates("as 8 da noite") == [time(20, 0)]
    assert time_candidates("sem hora") == []


def test_an_ambiguous_hour_alone_is_literal_inside_business_hours() -> None:
    assert resolve_time("as 8") == time(8, 0)


@pytest.mark.parametrize(
    ("text", "nome", "idade"),
    [
        ("entao quero marcar: Caio, 30, iniciante, terça 31 as 19h", "Caio", 30),
        ("quero marcar terca 16/06 as 19h. Nome: Vanessa, 29 anos, iniciante", "Vanessa", 29),
        ("ok, me inscreve na experimental: Priscila, 33", "Priscila", 33),
        ("Terça-feira, dia 24 de março, às 18h, por favor.", None, None),
        ("ops, na verdade dia 24 nao posso, pode ser na terca seguinte?", None, None),
        ("ah esqueci, terca tenho medico de tarde... tem de manha?", None, None),
        ("Bom dia, sou o Dr. Fernando, 67 anos.", "Fernando", 67),
        ("ok, sou a Tati, 34", "Tati", 34),
    ],
)
def test_names_after_a_colon_a_title_and_not_interjections(
    text: str, nome: str | None, idade: int | None
) -> None:
    slots = extract_slots(text, THURSDAY, TZ)
    assert (slots.nome, slots.idade) == (nome, idade)


@pytest.mark.parametrize(
    ("text", "nome", "contact"),
    [
        ("oi, sou a Patricia, mae da Helena. Ela tem 12 anos", "Helena", "Patricia"),
        ("Sou o pai do Enzo, ele tem 11 anos", "Enzo", None),
        ("o nome dela é Valentina", "Valentina", None),
        ("sou a Carla, ele se chama Enzo", "Enzo", "Carla"),
    ],
)
def test_the_writer_named_by_relation_to_the_student(
    text: str, nome: str, contact: str | None
) -> None:
    slots = extract_slots(text, THURSDAY, TZ)
    assert (slots.nome, slots.contact_name, slots.for_someone_else) == (nome, contact, True)


def test_a_misspelt_level_is_a_level_not_a_name() -> None:
    slots = extract_slots("iniciant", THURSDAY, TZ, "nivel")
    assert (slots.nome, slots.nivel) == (None, "iniciante")


@pytest.mark.parametrize(
    ("text", "now", "expected"),
    [
        ("terca 24, 7h", datetime(2026, 2, 11, 10, 0, tzinfo=TZ), date(2026, 2, 24)),
        ("terca 10 entao, as 20h", datetime(2026, 3, 2, 10, 0, tzinfo=TZ), date(2026, 3, 10)),
        ("terca 14 as 20", datetime(2026, 4, 9, 17, 0, tzinfo=TZ), date(2026, 4, 14)),
        (
            "ops, na verdade dia 24 nao posso, pode ser na terca seguinte?",
            datetime(2026, 2, 19, 9, 0, tzinfo=TZ),
            date(2026, 3, 3),
        ),
    ],
)
def test_weekday_with_a_day_and_the_tuesday_after_a_named_day(
    text: str, now: datetime, expected: date
) -> None:
    assert resolve_date(text, now, TZ) == expected


def test_a_weekday_and_an_hour_stay_a_weekday_and_an_hour() -> None:
    assert resolve_date("terça 19h", THURSDAY, TZ) == date(2026, 2, 10)
    assert resolve_date("terça 19", THURSDAY, TZ) == date(2026, 2, 10)


def test_the_tuesday_after_the_date_already_agreed() -> None:
    now = datetime(2026, 4, 30, 11, 0, tzinfo=TZ)
    text = "surgiu um imprevisto, da pra remarcar pra terca seguinte no mesmo horario?"
    assert resolve_date(text, now, TZ, reference=date(2026, 5, 5)) == date(2026, 5, 12)
    assert resolve_date(text, now, TZ) == date(2026, 5, 5)
    assert resolve_date("terça", now, TZ, reference=date(2026, 5, 5)) == date(2026, 5, 5)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2026-05-05", date(2026, 5, 5)), ("2026-02-30", None), ("amanhã", None), (None, None)],
)
def test_a_stored_date_is_read_only_when_it_is_a_real_day(
    value: str | None, expected: date | None
) -> None:
    assert parse_iso_date(value) == expected


def test_a_relative_in_a_story_is_not_the_person_booked() -> None:
    """A relative who did something ("meu primo jogou aí") is talked about, not booked for;
    one who is named or wants a class is."""
    story = extract_people("meu primo jogou aí ano passado e gostou, queria experimentar também")
    assert story.for_someone_else is None
    told = extract_people("minha tia foi na aula de vcs e recomendou, eu queria conhecer")
    assert told.for_someone_else is None
    booked = extract_people("queria marcar pro meu primo Caio, 16 anos")
    assert booked.for_someone_else is True and booked.nome == "Caio"
