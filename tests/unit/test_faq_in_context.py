"""Questions heard in context: a question no keyword places still reaches the FAQ, the days and
times a question names do not hide what it asks, and what a minor must bring includes the
guardian's authorization; a name the conversation gave is whom a question is about, not what it
asks. Sentences are this project's own."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from services.faq.core import compose, retrieve
from services.faq.topic import FaqTopic
from services.triage.config import load_config
from services.triage.core import triage_turn
from services.triage.faq_evidence import faq_knows
from shared.faq.ages import ages_in
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.nlu.dates import without_dates_and_times
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)
KNOWS = faq_knows(PACK, CONFIG)
FAQ = PACK.section("faq", FaqConfig)
INDEX = FaqIndex(FAQ)
T0 = datetime(2026, 3, 10, 14, 0, tzinfo=UTC)


def routed(text: str) -> list[str]:
    decision = triage_turn(
        text, state=None, trial_stage=None, now=T0, config=CONFIG, pack=PACK, seed="t", knows=KNOWS
    )
    return decision.routes


@pytest.mark.parametrize(
    "text",
    [
        "vocês treinam gente que é bem desajeitada?",
        "o professor explica com calma pra quem é lento?",
        "quem organiza os torneios internos?",
    ],
)
def test_a_question_no_rule_places_goes_to_the_faq_not_the_menu(text: str) -> None:
    assert routed(text) == ["faq"]


@pytest.mark.parametrize("text", ["hmmm deixa eu pensar aqui", "ahn?", "oi?", "beleza, né"])
def test_what_asks_nothing_to_look_up_still_gets_the_menu(text: str) -> None:
    assert "faq" not in routed(text)


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("quinta dia 12 às 7h30 dá pra estacionar?", "da para estacionar"),
        ("depois de amanhã de manhã tem vestiário?", "tem vestiario"),
        ("sábado 9 horas tem chuveiro", "tem chuveiro"),
        ("somos 4 pessoas", "somos 4 pessoas"),
    ],
)
def test_days_and_times_are_taken_out_of_a_question(text: str, rest: str) -> None:
    assert without_dates_and_times(text) == rest


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        ("sexta que vem às 20h vocês têm estacionamento?", "estacionamento"),
        ("amanhã às 7 da manhã já tem chuveiro?", "vestiario"),
        ("abrem no domingo?", "horarios"),
    ],
)
def test_a_question_beside_a_day_and_time_is_answered(text: str, entry: str) -> None:
    assert retrieve(text, index=INDEX).entry_ids == [entry]


def test_a_follow_up_naming_only_a_day_continues_the_topic() -> None:
    topic = FaqTopic(entry_id="aula_experimental", clause="quando tem experimental", at=T0)
    assert retrieve("e na sexta-feira?", index=INDEX, topic=topic).entry_ids == [
        "aula_experimental"
    ]


def _bring(student_age: int | None) -> str:
    retrieval = retrieve("o que ele tem que levar?", index=INDEX)
    assert retrieval.entry_ids == ["o_que_levar"]
    return compose(
        retrieval, mode=None, config=FAQ, texts=PACK, seed="t", student_age=student_age
    ).text


def test_what_a_minor_brings_includes_the_guardians_authorization() -> None:
    assert "autorização do responsável" in _bring(12)


@pytest.mark.parametrize("age", [None, 30])
def test_an_adult_or_unknown_student_gets_no_authorization_note(age: int | None) -> None:
    assert "autorização" not in _bring(age)


def test_a_name_the_conversation_gave_does_not_hide_what_a_question_asks() -> None:
    question = "E a Yasmin tem que levar algo?"
    assert retrieve(question, index=INDEX).entry_ids == []
    assert retrieve(question, index=INDEX, names=["Yasmin"]).entry_ids == ["o_que_levar"]


def test_a_name_that_is_a_word_of_the_base_stays_in_the_question() -> None:
    assert retrieve("aceita pix?", index=INDEX, names=["Pix"]).entry_ids == ["pagamento"]


def routed_mid_booking(text: str) -> list[str]:
    decision = triage_turn(
        text,
        state=None,
        trial_stage="ask_date",
        now=T0,
        config=CONFIG,
        pack=PACK,
        seed="t",
        knows=KNOWS,
    )
    return decision.routes


@pytest.mark.parametrize(
    "text", ["quarta dia 18 às 19h, lá tem vestiário?", "sexta 7h30. dá pra deixar o carro aí?"]
)
def test_a_question_beside_the_bookings_day_reaches_the_faq_too(text: str) -> None:
    assert routed_mid_booking(text) == ["trial", "faq"]


@pytest.mark.parametrize(
    "text", ["ainda tem vaga sexta às 19h?", "que horário tem na quinta?", "18h30 tem?"]
)
def test_a_slot_question_stays_the_bookings(text: str) -> None:
    assert routed_mid_booking(text) == ["trial"]


def test_an_age_said_with_tem_is_an_answer_not_a_question() -> None:
    assert routed_mid_booking("o nome dele é Gael, tem 35 e nunca jogou") == ["trial"]


@pytest.mark.parametrize("text", ["então a aula é só de terça, né", "vocês fecham no domingo né"])
def test_a_statement_closed_by_a_tag_is_a_question(text: str) -> None:
    assert routed(text) == ["faq"]


@pytest.mark.parametrize(
    ("text", "ages"),
    [
        ("ela treina faz uns 3 anos", []),
        ("tenho 4 anos de quadra", []),
        ("jogo há 6 anos e tenho 33", [33]),
        ("ele faz 9 anos semana que vem", [9]),
    ],
)
def test_how_long_someone_plays_is_no_age(text: str, ages: list[int]) -> None:
    assert ages_in(text, None) == ages


def test_a_follow_up_the_topic_knows_stays_on_the_topic() -> None:
    topic = FaqTopic(entry_id="chuva", clause="se chover como fica", at=T0)
    assert retrieve("mas aí eu pago?", index=INDEX, topic=topic).entry_ids == ["chuva"]
    assert retrieve("e vocês têm chuveiro?", index=INDEX, topic=topic).entry_ids == ["vestiario"]


def test_an_entry_knowing_all_of_a_question_beats_a_stronger_partial_match() -> None:
    assert retrieve("a mensalidade pode ser no cartão?", index=INDEX).entry_ids == ["pagamento"]


@pytest.mark.parametrize("text", ["e o horário livre, quanto fica?", "qto sai por mês?"])
def test_how_much_something_comes_to_asks_a_price_not_a_place(text: str) -> None:
    assert retrieve(text, index=INDEX).entry_ids == ["planos"]


def test_a_day_free_reading_wins_when_it_knows_more_of_the_clause() -> None:
    retrieval = retrieve("terça às 19h, tem onde parar o carro?", index=INDEX)
    assert retrieval.entry_ids == ["estacionamento"]
