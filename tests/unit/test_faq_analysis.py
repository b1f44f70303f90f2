"""Light stemming, filler removal and clause splitting for Portuguese WhatsApp text."""

from __future__ import annotations

import pytest

from shared.faq.analysis import Analyzer, stem
from shared.nlu.normalize import normalize


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("fica", "ficam"),
        ("preço", "precos"),
        ("levar", "levo"),
        ("raquete", "raquetes"),
        ("horário", "horarios"),
        ("chovendo", "chove"),
        ("localização", "localizações"),
        ("aberto", "aberta"),
    ],
)
def test_stem_joins_inflections(a: str, b: str) -> None:
    assert stem(normalize(a)) == stem(normalize(b))


@pytest.mark.parametrize(("a", "b"), [("aula", "alunos"), ("pix", "pais"), ("chuva", "cancela")])
def test_stem_keeps_different_words_apart(a: str, b: str) -> None:
    assert stem(normalize(a)) != stem(normalize(b))


def test_short_and_numeric_words_are_left_alone() -> None:
    assert stem("mes") == "mes"
    assert stem("3x") == "3x"


@pytest.fixture
def analyzer() -> Analyzer:
    return Analyzer(
        extra_stopwords=["vcs", "Oi"],
        filler_phrases=["bom dia", "tem problema"],
        question_words=["onde", "quanto", "que", "tem", "Qual"],
        synonyms={"grátis": "gratuito"},
    )


def test_words_drop_fillers_stopwords_and_map_synonyms(analyzer: Analyzer) -> None:
    assert analyzer.words("Oi, bom dia!! vcs tem aula GRÁTIS? 🎾") == ["aula", "gratuito"]


def test_words_split_symbols_kept_by_normalize(analyzer: Analyzer) -> None:
    assert analyzer.words("plano 2x/semana") == ["plano", "2x", "semana"]


def test_two_questions_joined_by_e_are_split(analyzer: Analyzer) -> None:
    clauses = analyzer.clauses("onde fica e quanto custa?")
    assert [c.text for c in clauses] == ["onde fica", "quanto custa"]
    assert all(c.question_shaped for c in clauses)


def test_a_list_inside_one_question_is_not_split(analyzer: Analyzer) -> None:
    assert [c.text for c in analyzer.clauses("preciso levar raquete e bolinha?")] == [
        "preciso levar raquete e bolinha"
    ]


def test_a_topic_then_its_question_stays_one_clause(analyzer: Analyzer) -> None:
    assert [c.text for c in analyzer.clauses("aula experimental, quanto custa?")] == [
        "aula experimental, quanto custa"
    ]


def test_sentence_punctuation_always_splits(analyzer: Analyzer) -> None:
    clauses = analyzer.clauses("Meu nome é Ana. Qual o endereço?\nvalores")
    assert [(c.text, c.question_shaped) for c in clauses] == [
        ("Meu nome é Ana", False),
        ("Qual o endereço", True),
        ("valores", False),
    ]


def test_decimal_points_do_not_split(analyzer: Analyzer) -> None:
    assert len(analyzer.clauses("custa R$ 2.50 mesmo?")) == 1


def test_pieces_cut_a_list_of_topics(analyzer: Analyzer) -> None:
    assert analyzer.pieces("endereço, preço e horário") == ["endereço", "preço", "horário"]


def test_a_phrase_synonym_is_read_as_its_word() -> None:
    analyzer = Analyzer(
        extra_stopwords=[],
        filler_phrases=[],
        question_words=[],
        synonyms={"quantos anos": "idade"},
    )
    assert analyzer.words("com Quantos anos pode?") == ["idade", "pode"]
    assert analyzer.words("tenho 40 anos") == ["40", "anos"]
