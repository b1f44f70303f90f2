"""The CT Smash pack's faq section: it loads, and it states the facts the business gave."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shared.faq.config import FaqConfig
from shared.pack import load_pack


@pytest.fixture(scope="module")
def config() -> FaqConfig:
    return load_pack("ctsmash").section("faq", FaqConfig)


def test_section_loads_with_every_required_topic(config: FaqConfig) -> None:
    ids = {e.id for e in config.entries}
    assert {
        "endereco",
        "horarios",
        "aula_experimental",
        "o_que_levar",
        "planos",
        "niveis",
        "idade",
        "pagamento",
        "cancelamento",
        "atendente",
        "chuva",
        "vestiario",
        "alunos_por_turma",
    } <= ids
    assert config.threshold > 0
    assert 0 < config.min_coverage <= 1


@pytest.mark.parametrize(
    ("entry_id", "facts"),
    [
        ("endereco", ["Rua das Palmeiras, 250", "Vila Mariana", "São Paulo/SP", "gratuito"]),
        ("horarios", ["06:00", "22:00", "08:00", "14:00", "Domingos e feriados"]),
        ("aula_experimental", ["gratuita", "terças", "07:00", "18:00", "19:00", "20:00", "1 hora"]),
        ("o_que_levar", ["raquete e", "bolinhas", "água", "protetor solar", "roupa confortável"]),
        ("planos", ["R$ 280", "R$ 360", "R$ 450", "R$ 60"]),
        ("niveis", ["iniciante", "intermediário", "avançado"]),
        ("idade", ["8 anos", "autorização do"]),
        ("pagamento", ["Pix", "cartão", "boleto"]),
        ("cancelamento", ["30 dias"]),
        ("atendente", ["atendente"]),
        ("alunos_por_turma", ["6 alunos"]),
    ],
)
def test_answers_state_the_business_facts(
    config: FaqConfig, entry_id: str, facts: list[str]
) -> None:
    text = " ".join(config.entry(entry_id).answer.split())
    for fact in facts:
        assert fact in text


def test_texts_referenced_by_the_section_exist(config: FaqConfig) -> None:
    pack = load_pack("ctsmash")
    for key in (
        config.unknown_text_key,
        config.partial_unknown_text_key,
        config.oferta_pointer.text_key,
    ):
        assert pack.text(key, seed="x")


def test_user_facing_faq_texts_ask_nothing(config: FaqConfig) -> None:
    """So the merger may keep another part's question (one question per message)."""
    pack = load_pack("ctsmash")
    keys = [config.unknown_text_key, config.partial_unknown_text_key]
    keys.append(config.oferta_pointer.text_key)
    for key in keys:
        variants = pack.sections["texts"][key]
        for variant in [variants] if isinstance(variants, str) else variants:
            assert "?" not in variant
    assert all("?" not in e.answer for e in config.entries)


def test_an_entry_the_booking_replies_for_must_exist(config: FaqConfig) -> None:
    data = config.model_dump()
    data["booking_context"]["replied_by_booking"] = ["no_such_entry"]
    with pytest.raises(ValidationError, match="replied_by_booking names no entry"):
        FaqConfig.model_validate(data)


def test_duplicate_entry_ids_are_rejected(config: FaqConfig) -> None:
    data = config.model_dump()
    data["entries"].append(data["entries"][0])
    with pytest.raises(ValidationError, match="duplicate faq entry ids"):
        FaqConfig.model_validate(data)
