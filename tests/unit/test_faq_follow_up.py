"""Questions heard in context: a follow-up continues the conversation's topic, an age gets a
yes or a no from the pack's rule, and the topic is remembered (and forgotten) as the FAQ
service keeps it. Sentences written for these tests, with the CT Smash pack."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.faq.core import compose, retrieve
from services.faq.topic import FaqState, FaqTopic, current_topic, current_unknown, remember
from shared.faq.ages import ages_in
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.nlu.normalize import normalize
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = PACK.section("faq", FaqConfig)
INDEX = FaqIndex(CONFIG)
T0 = datetime(2027, 5, 4, 9, 0, tzinfo=UTC)


def conversation(*messages: str, minutes_apart: int = 1) -> list[str]:
    """The FAQ's reply to each message, carrying the topic as the service does."""
    state: FaqState | None = None
    replies: list[str] = []
    for position, message in enumerate(messages):
        now = T0 + timedelta(minutes=position * minutes_apart)
        topic = current_topic(state, now, CONFIG.follow_up)
        unknown = current_unknown(state, now, CONFIG.follow_up)
        retrieval = retrieve(
            message, index=INDEX, topic=topic, message=message, now=now, unknown=unknown
        )
        state = remember(state, retrieval.answered, now, retrieval.unanswered)
        result = compose(retrieval, mode=None, config=CONFIG, texts=PACK, seed="t")
        replies.append(normalize(result.text))
    return replies


def is_unknown(reply: str) -> bool:
    return "atendente" in reply and ("nao sei" in reply or "nao tenho" in reply)


def test_an_elliptical_plan_question_gets_that_plans_price() -> None:
    first, follow = conversation("quanto sai o plano de duas vezes na semana?", "e o de 3x?")
    assert "280" in first
    assert "360" in follow and "280" not in follow


def test_a_follow_up_with_an_unknown_word_continues_the_opening_hours() -> None:
    _, follow = conversation("a que horas vcs abrem?", "e domingo, rola treinar cedinho?")
    assert "fechad" in follow and "06:00" not in follow


def test_a_follow_up_naming_nothing_the_base_knows_is_not_the_topic() -> None:
    _, follow = conversation("tem vestiario?", "e sauna?")
    assert is_unknown(follow)


def test_an_unknown_question_asked_again_for_another_case_stays_unknown() -> None:
    first, again = conversation("tem desconto pra quem indica amigo?", "e pra quem paga no cartão?")
    assert is_unknown(first)
    assert is_unknown(again) and "cartao" not in again.split("atendente")[0]


def test_the_same_follow_up_after_an_answer_is_read_on_its_own() -> None:
    _, follow = conversation("onde fica o ct?", "e pra pagar, aceita cartão?")
    assert "cartao" in follow and not is_unknown(follow)


def test_an_answer_closes_the_unknown_question() -> None:
    *_, follow = conversation(
        "tem desconto pra quem indica amigo?", "aceita pix?", "e pra pagar no cartão, pode?"
    )
    assert not is_unknown(follow)


def test_a_question_of_its_own_does_not_inherit_a_topic_sharing_one_word() -> None:
    _, other = conversation("onde fica a quadra?", "vcs tem quadra com iluminacao de led?")
    assert is_unknown(other)


def test_a_follow_up_after_the_topic_expired_is_read_alone() -> None:
    late = CONFIG.follow_up.minutes + 1
    _, follow = conversation("qual o preco do plano de 2x?", "e o de 3x?", minutes_apart=late)
    assert is_unknown(follow)


def test_an_age_alone_continues_an_age_question() -> None:
    first, cousin, grandma = conversation(
        "meu enteado tem 7 anos, ja pode jogar?", "e o primo dele de 12?", "e a avo de 81?"
    )
    assert "8 anos" in first and "pode sim" not in first
    assert "pode sim" in cousin and "autorizacao do responsavel" in cousin
    assert "pode sim" in grandma and "autorizacao" not in grandma


def test_an_age_question_gets_a_verdict_from_the_pack_rule() -> None:
    (older,) = conversation("vcs aceitam gente com 104?")
    (teen,) = conversation("a partir de qual idade? minha afilhada completa 15 mes que vem")
    assert "104" in older and "99" in older and "pode sim" not in older
    assert "pode sim" in teen and "autorizacao" in teen


def test_a_birth_year_is_an_age_at_the_turns_business_time() -> None:
    (reply,) = conversation("tem idade maxima? nasci em 1940")
    assert "pode sim" in reply and "86" in reply


def test_an_age_next_to_another_question_is_not_an_age_question() -> None:
    (reply,) = conversation("tenho 52 anos, tem desconto pra aposentado?")
    assert is_unknown(reply)


@pytest.mark.parametrize(
    ("text", "ages"),
    [
        ("minha enteada tem 9", [9]),
        ("e o caçula dele, com 6?", [6]),
        ("ele faz 13 em agosto", [13]),
        ("meus netos de 10 e de 14 anos", [10, 14]),
        ("nasceu em 2016", [10]),
        ("chego às 18, pode?", []),
        ("o de 3x sai 360 reais?", []),
        ("turma de 6 alunos", []),
    ],
)
def test_ages_are_read_only_where_something_marks_an_age(text: str, ages: list[int]) -> None:
    assert ages_in(text, T0) == ages


def test_remembering_keeps_the_topic_through_an_unknown_question() -> None:
    topic = FaqTopic(entry_id="planos", clause="quanto custa", at=T0)
    kept = remember(FaqState(topic=topic), [], T0 + timedelta(minutes=2))
    assert kept.topic == topic
    moved = remember(kept, [("tem chuveiro", "vestiario")], T0 + timedelta(minutes=3))
    assert moved.topic is not None and moved.topic.entry_id == "vestiario"
    expired = T0 + timedelta(minutes=CONFIG.follow_up.minutes + 4)
    assert current_topic(moved, expired, CONFIG.follow_up) is None


def test_a_salutation_and_a_signature_do_not_hide_a_list_of_topics() -> None:
    (reply,) = conversation(
        "Prezados, gostaria de receber informações sobre os valores das mensalidades e os "
        "meios de pagamento aceitos.\nAtenciosamente,\nMarta Ribeiro"
    )
    assert "280" in reply and "boleto" in reply


def test_a_question_inside_a_long_voice_note_is_found_after_the_phrase_that_asks() -> None:
    (reply,) = conversation(
        "boa noite td bem entao minha esposa me mandou o link de voces e ela ja treina em "
        "outro lugar mas eu queria saber se voces emprestam raquete porque a minha quebrou "
        "semana passada e ainda nao comprei outra valeu"
    )
    assert "empresta" in reply


def test_a_follow_up_mostly_about_the_topic_continues_it() -> None:
    _, follow = conversation("vcs abrem cedo?", "e no meio da semana fecha tarde?")
    assert "22:00" in follow


def test_an_interjection_typed_long_is_no_unknown_word() -> None:
    (reply,) = conversation("ahhh e tem vestiario?")
    assert "chuveiro" in reply
