"""The FAQ reply for a message: answers per question, honesty, the oferta pointer, LLM use."""

from __future__ import annotations

import re

import pytest

from services.faq.core import FaqResult, answer, compose, focus, retrieve
from services.faq.llm import FaqLLMAnswer
from shared.contracts import TrialView
from shared.faq.config import FaqConfig
from shared.faq.index import FaqIndex
from shared.pack import Pack, load_pack


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("ctsmash")


@pytest.fixture(scope="module")
def index(pack: Pack) -> FaqIndex:
    return FaqIndex(pack.section("faq", FaqConfig))


def ask(
    text: str,
    index: FaqIndex,
    pack: Pack,
    *,
    mode: str | None = "discovery",
    llm_answer: FaqLLMAnswer | None = None,
) -> FaqResult:
    return answer(text, mode=mode, index=index, texts=pack, seed="turn-1", llm_answer=llm_answer)


def test_address_question_gets_the_address(index: FaqIndex, pack: Pack) -> None:
    result = ask("vcs ficam onde? 📍", index, pack)
    assert result.entry_ids == ["endereco"]
    assert "Rua das Palmeiras, 250" in result.text
    assert result.unanswered == []
    assert result.source == "rules"
    assert result.scores["endereco"] >= index.config.threshold


def test_two_questions_in_one_message_get_both_answers(index: FaqIndex, pack: Pack) -> None:
    result = ask("onde fica e quanto custa?", index, pack)
    assert result.entry_ids == ["endereco", "planos"]
    assert "Rua das Palmeiras" in result.text
    assert "R$ 280" in result.text
    assert result.text.index("Rua das Palmeiras") < result.text.index("R$ 280")
    assert result.unanswered == []


def test_a_list_of_topics_gets_each_answer(index: FaqIndex, pack: Pack) -> None:
    assert ask("endereço e preço?", index, pack).entry_ids == ["endereco", "planos"]


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        (
            "Prezados, gostaria de obter esclarecimentos a respeito do horário de "
            "funcionamento aos domingos. Atenciosamente, Marta Queiroz",
            ["horarios"],
        ),
        (
            "Solicito informações referentes aos valores das mensalidades e ao endereço.",
            ["planos", "endereco"],
        ),
        (
            "Poderiam me informar se há estacionamento no local? Desde já agradeço.",
            ["estacionamento"],
        ),
    ],
)
def test_a_formal_letters_framing_leaves_its_topics(
    index: FaqIndex, pack: Pack, text: str, entries: list[str]
) -> None:
    """The verbs and salutations of a formal request frame the question; the topics it names
    are what is answered, nothing is left unanswered."""
    result = ask(text, index, pack)
    assert result.entry_ids == entries
    assert result.unanswered == []


def test_a_greetings_question_does_not_hide_the_real_one(index: FaqIndex, pack: Pack) -> None:
    """ "tudo bem?" is question-shaped but asks nothing: the indirect question after it
    ("gostaria de saber se...") is the one answered."""
    result = ask(
        "Boa tarde, tudo bem? Sou o Osvaldo e tenho 70 anos. Gostaria de saber se alguém da "
        "minha idade pode fazer as aulas.",
        index,
        pack,
    )
    assert result.entry_ids == ["idade"] and result.unanswered == []


def test_the_same_entry_asked_twice_is_answered_once(index: FaqIndex, pack: Pack) -> None:
    result = ask("quanto custa? qual o valor da mensalidade?", index, pack)
    assert result.entry_ids == ["planos"]
    assert result.text.count("R$ 280") == 1


def test_unknown_question_is_answered_honestly(index: FaqIndex, pack: Pack) -> None:
    result = ask("vcs vendem raquete?", index, pack)
    assert result.entry_ids == []
    assert result.unanswered == ["vcs vendem raquete"]
    assert "atendente" in result.text
    assert "R$" not in result.text
    assert result.scores == {}
    assert not result.asks_question


def test_known_and_unknown_questions_answer_one_and_admit_the_other(
    index: FaqIndex, pack: Pack
) -> None:
    result = ask("qual o endereço? vcs tem wifi?", index, pack)
    assert result.entry_ids == ["endereco"]
    assert result.unanswered == ["vcs tem wifi"]
    assert result.text.startswith(index.config.entry("endereco").answer.strip())
    assert "atendente" in result.text


def test_a_complaint_beside_a_question_is_no_unknown_question(index: FaqIndex, pack: Pack) -> None:
    result = ask("que demora hein, aceitam cartão?", index, pack)
    assert (result.entry_ids, result.unanswered) == (["pagamento"], [])
    assert "atendente" not in result.text


def test_context_that_is_not_a_question_is_not_marked_unanswered(
    index: FaqIndex, pack: Pack
) -> None:
    result = ask("Meu nome é Ana. Qual o endereço?", index, pack)
    assert result.entry_ids == ["endereco"]
    assert result.unanswered == []


def test_a_message_with_nothing_to_look_up_is_unanswered(index: FaqIndex, pack: Pack) -> None:
    result = ask("🎾🎾", index, pack)
    assert result.entry_ids == []
    assert result.unanswered == ["🎾🎾"]
    assert "atendente" in result.text


@pytest.mark.parametrize("question", ["qto custa?", "que horas vcs abrem?"])
def test_oferta_mode_points_price_and_schedule_answers_to_the_trial(
    index: FaqIndex, pack: Pack, question: str
) -> None:
    pointer = pack.text(index.config.oferta_pointer.text_key, seed="turn-1")
    result = ask(question, index, pack, mode="oferta")
    assert result.oferta_pointer
    assert result.text.endswith(pointer)
    assert not result.asks_question


@pytest.mark.parametrize("mode", ["discovery", "followup", "reativacao", None])
def test_other_modes_get_no_pointer(index: FaqIndex, pack: Pack, mode: str | None) -> None:
    result = ask("qto custa?", index, pack, mode=mode)
    assert not result.oferta_pointer
    assert "aula experimental" not in result.text.lower()


@pytest.mark.parametrize("question", ["qual o endereço?", "a aula experimental é paga?"])
def test_oferta_mode_without_price_or_schedule_gets_no_pointer(
    index: FaqIndex, pack: Pack, question: str
) -> None:
    result = ask(question, index, pack, mode="oferta")
    assert not result.oferta_pointer
    pointer = pack.text(index.config.oferta_pointer.text_key, seed="turn-1")
    assert pointer not in result.text


def test_same_turn_same_text(index: FaqIndex, pack: Pack) -> None:
    assert ask("vcs tem wifi?", index, pack).text == ask("vcs tem wifi?", index, pack).text


def test_an_accepted_llm_answer_replaces_the_entries_text(index: FaqIndex, pack: Pack) -> None:
    llm = FaqLLMAnswer(answer="Fica na Rua das Palmeiras, 250! Bora?", ids_used=["endereco"])
    result = ask("onde fica e quanto custa?", index, pack, llm_answer=llm)
    assert result.source == "llm"
    assert result.text == llm.answer
    assert result.entry_ids == ["endereco"]
    assert result.asks_question


def test_an_ungrounded_llm_answer_falls_back_to_the_entries(index: FaqIndex, pack: Pack) -> None:
    llm = FaqLLMAnswer(answer="Custa R$ 99.", ids_used=["planos", "inventado"])
    result = ask("quanto custa?", index, pack, llm_answer=llm)
    assert result.source == "rules"
    assert "R$ 99" not in result.text
    assert "R$ 280" in result.text


def test_an_llm_answer_is_ignored_when_nothing_was_retrieved(index: FaqIndex, pack: Pack) -> None:
    llm = FaqLLMAnswer(answer="Vendemos sim!", ids_used=["o_que_levar"])
    result = ask("vcs vendem raquete?", index, pack, llm_answer=llm)
    assert result.source == "rules"
    assert "Vendemos" not in result.text
    assert result.unanswered == ["vcs vendem raquete"]


def test_retrieval_journals_every_clause(index: FaqIndex) -> None:
    retrieval = retrieve("onde fica? vcs tem wifi?", index=index)
    assert [(c.clause, c.answered) for c in retrieval.clauses] == [
        ("onde fica", True),
        ("vcs tem wifi", False),
    ]


def test_index_works_for_any_pack_section() -> None:
    base = load_pack("ctsmash").section("faq", FaqConfig).model_dump()
    base["entries"] = [
        {
            "id": "cardapio",
            "questions": ["qual o cardápio", "o que tem pra comer"],
            "answer": "Pizza e massa.",
            "tags": [],
        },
        {
            "id": "delivery",
            "questions": ["vocês entregam", "tem delivery"],
            "answer": "Entregamos no bairro.",
            "tags": [],
        },
    ]
    # BM25 scores grow with the corpus: each pack tunes its own threshold.
    base["threshold"] = 0.1
    # This business has no age rule (its entries say nothing about ages), nor bookings.
    base["age_rule"] = None
    base["booking_context"] = None
    index = FaqIndex(FaqConfig.model_validate(base))
    assert retrieve("vcs fazem delivery?", index=index).entry_ids == ["delivery"]
    assert retrieve("qual o cardapio", index=index).entry_ids == ["cardapio"]


def test_an_entry_about_an_action_needs_the_action_named() -> None:
    # "Cancelar a encomenda" shares every other word with the question about ordering: without
    # a word of cancelling, the entry that requires one is not a match, however many others
    # it shares; with one, it still is.
    base = load_pack("ctsmash").section("faq", FaqConfig).model_dump()
    base["entries"] = [
        {
            "id": "encomendar",
            "questions": ["como encomendo um bolo", "aceitam encomenda"],
            "answer": "Pelo telefone.",
        },
        {
            "id": "cancelar_encomenda",
            "questions": ["como faço pra cancelar a encomenda do bolo", "posso desistir"],
            "answer": "Até uma hora antes.",
            "requires": ["cancel", "desist"],
        },
    ]
    base["threshold"] = 0.1
    base["age_rule"] = None
    base["booking_context"] = None
    index = FaqIndex(FaqConfig.model_validate(base))
    ordering = retrieve("como faço pra encomendar o bolo?", index=index)
    assert ordering.entry_ids == ["encomendar"]
    cancelling = retrieve("e pra cancelar a encomenda?", index=index)
    assert cancelling.entry_ids == ["cancelar_encomenda"]


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("como faço pra me matricular? quais os planos?", ["planos"]),
        ("preciso avisar antes de sair do plano?", ["cancelamento"]),
    ],
)
def test_enrolling_is_not_leaving(text: str, ids: list[str], index: FaqIndex) -> None:
    assert retrieve(text, index=index).entry_ids == ids


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("quero agendar uma aula experimental e onde fica a CT?", ["endereco"]),
        (
            "quero agendar a experimental e saber o preço da mensalidade e se tem estacionamento",
            ["planos", "estacionamento"],
        ),
        (
            "tenho 45 anos, dor no joelho, nunca joguei. vcs abrem que horas? "
            "tem que pagar pra experimentar?",
            ["horarios", "aula_experimental"],
        ),
    ],
)
def test_every_question_next_to_a_request_is_answered(
    text: str, ids: list[str], index: FaqIndex, pack: Pack
) -> None:
    result = ask(text, index, pack)
    assert result.entry_ids == ids
    assert result.unanswered == []
    assert result.unknown_only is False


def test_a_statement_next_to_a_question_is_context(index: FaqIndex, pack: Pack) -> None:
    result = ask("ele é iniciante. vcs emprestam raquete?", index, pack)
    assert result.entry_ids == ["o_que_levar"]
    assert result.unanswered == []


def test_an_unknown_question_next_to_a_request_is_still_unknown(
    index: FaqIndex, pack: Pack
) -> None:
    result = ask("quero agendar e vcs vendem raquete?", index, pack)
    assert result.entry_ids == []
    assert result.unanswered
    assert result.unknown_only is False


def test_nothing_answered_and_nothing_asked_is_unknown_only(index: FaqIndex, pack: Pack) -> None:
    result = ask("quero agendar uma aulinha", index, pack)
    assert result.entry_ids == []
    assert result.unknown_only is True


@pytest.mark.parametrize("text", ["e como eu pago o plano?", "como faço pra pagar as aulas"])
def test_how_to_pay_for_a_plan_is_about_payment_not_prices(
    text: str, index: FaqIndex, pack: Pack
) -> None:
    # "como" asks for a manner, "quanto" for an amount: the question word is part of the topic.
    assert ask(text, index, pack).entry_ids == ["pagamento"]


def test_a_lead_in_before_a_colon_does_not_hide_the_first_question(
    index: FaqIndex, pack: Pack
) -> None:
    result = ask("duas duvidas: qual o endereço, e aceita pix?", index, pack)
    assert result.entry_ids == ["endereco", "pagamento"]
    assert result.unanswered == []


@pytest.mark.parametrize(
    "text", ["a partir de quantos anos ele pode entrar na turma?", "qnts anos precisa ter pra aula"]
)
def test_how_many_years_asks_the_minimum_age_whatever_the_verb(
    text: str, index: FaqIndex, pack: Pack
) -> None:
    result = ask(text, index, pack)
    assert result.entry_ids == ["idade"]
    assert result.unanswered == []


def test_mid_booking_a_bare_price_question_asks_the_trial_price(
    index: FaqIndex, pack: Pack
) -> None:
    context = index.config.booking_context
    assert context is not None
    tags = context.tags_for(TrialView(stage="ask_date"))
    assert retrieve("e qnt custa?", index=index).entry_ids == ["planos"]
    assert retrieve("e qnt custa?", index=index, context=tags).entry_ids == ["aula_experimental"]
    # A question the trial entries do not know as well stays with its own entry.
    assert retrieve("qnt é a mensalidade?", index=index, context=tags).entry_ids == ["planos"]
    assert retrieve("onde fica?", index=index, context=tags).entry_ids == ["endereco"]


def test_no_booking_context_outside_a_booking(index: FaqIndex) -> None:
    context = index.config.booking_context
    assert context is not None
    assert context.tags_for(None) == []
    assert context.tags_for(TrialView(stage="booked")) == []


def test_a_follow_up_gets_the_one_part_of_the_answer_it_asks_about(index: FaqIndex) -> None:
    """ "e domingo?" after the hours: that part, not the whole paragraph again."""
    answer = index.entry("horarios").answer
    assert focus(answer, "e domingo?", index) == "Domingos e feriados ficamos fechados."
    saturday = focus(answer, "e no sábado?", index)
    assert saturday is not None and saturday.startswith("Aos *sábados")
    assert focus(answer, "que horas abre?", index) is None  # not a follow-up: whole answer
    assert focus(answer, "e aí?", index) is None  # a follow-up naming no part of it


def test_an_age_given_beside_a_question_about_the_class_is_no_age_question(
    index: FaqIndex, pack: Pack
) -> None:
    """The age is given for the booking; the question asks what the trial class is."""
    result = ask(
        "Boa tarde. Sou a Irene, 61 anos. Queria informações sobre a aula experimental.",
        index,
        pack,
    )
    assert result.entry_ids == ["aula_experimental"]


def test_a_word_of_when_around_a_question_is_no_topic(index: FaqIndex) -> None:
    # Mid-booking, "antes" opening the question matched the trial class's entry as a topic of
    # its own ("dá pra experimentar antes de fechar"), beside the plans asked.
    retrieval = retrieve("antes, quanto custa o plano?", index=index, context=["aula_experimental"])
    assert retrieval.entry_ids == ["planos"]


@pytest.mark.parametrize(
    "text",
    [
        "se eu pagar no boleto tem desconto?",
        "rola um desconto pagando no débito?",
        "tem desconto pra quem paga com cartão?",
    ],
)
def test_an_answer_around_an_unknown_thing_asked_says_it_does_not_know_it(
    text: str, index: FaqIndex, pack: Pack
) -> None:
    # The payment entry knows how to pay, not a discount: it is said, and so is the "não sei".
    result = ask(text, index, pack)
    assert result.entry_ids == ["pagamento"]
    assert result.unanswered
    assert "não tenho essa informação" in result.text


@pytest.mark.parametrize("text", ["tem estacionamento?", "tem vestiário pra trocar de roupa?"])
def test_a_known_thing_asked_with_tem_is_answered_in_full(
    text: str, index: FaqIndex, pack: Pack
) -> None:
    result = ask(text, index, pack)
    assert result.entry_ids and result.unanswered == []


def test_no_offer_to_book_to_someone_with_a_booking(index: FaqIndex, pack: Pack) -> None:
    """The trial class's answer closes with an offer to book it, and price and schedule
    answers in the oferta mode with a pointer to it: neither once the class is booked."""
    context = index.config.booking_context
    assert context is not None
    booked = TrialView(stage="booked", booking_id="AE-4X7Q2M")
    for question in ("me explica como é essa aula experimental", "qto custa?"):
        text = compose(
            retrieve(question, index=index),
            mode="oferta",
            config=index.config,
            texts=pack,
            seed="turn-1",
            offer_booking=context.offers_booking(booked),
        ).text
        assert not re.search(r"\b(agend|marc)o\b", text)
    for trial in (None, TrialView(stage="collect_client_info"), TrialView(stage="cancelled")):
        assert context.offers_booking(trial)
    first = ask("me explica como é essa aula experimental", index, pack).text
    assert re.search(r"\bagendo\b", first)


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        # Whom a question is for, beside what it asks: the entry that answers what it asks.
        ("quanto custa pra criança?", "planos"),
        ("e pro meu filho o valor é o mesmo?", "planos"),
        ("meu filho tem onde tomar banho aí?", "vestiario"),
        # Nothing else asked: the person is the question (the age rule).
        ("tem aula pra criança?", "idade"),
        ("adolescente pode treinar?", "idade"),
    ],
)
def test_a_person_named_is_whom_a_question_is_for(
    index: FaqIndex, pack: Pack, text: str, entry: str
) -> None:
    assert ask(text, index, pack).entry_ids == [entry]


@pytest.mark.parametrize(
    "text",
    [
        "é obrigatório passar pela experimental antes da matrícula?",
        "dá pra entrar direto num plano sem a aula teste?",
        "preciso fazer a experimental antes de me matricular?",
    ],
)
def test_whether_the_trial_class_comes_before_enrolling(
    index: FaqIndex, pack: Pack, text: str
) -> None:
    """The first step is the trial class (the enrollment's own rule), not what to bring to it."""
    assert ask(text, index, pack).entry_ids == ["experimental_antes_do_plano"]


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        # "quanto é X" asks X's price, however "quanto" is typed.
        ("qnto é a aula experimental?", "aula_experimental"),
        ("quanto tá a mensalidade do 3x?", "planos"),
        ("qto tá a aula teste?", "aula_experimental"),
        # The weekdays, however said, are the days the hours name; "até tarde" is the night.
        ("em dia útil vocês ficam abertos até tarde?", "horarios"),
        ("nos dias de semana fecham muito tarde?", "horarios"),
        ("e no meio da semana fecha tarde?", "horarios"),
    ],
)
def test_colloquial_forms_are_answered_clearly_above_the_threshold(
    index: FaqIndex, pack: Pack, text: str, entry: str
) -> None:
    result = ask(text, index, pack)
    assert result.entry_ids == [entry]
    assert result.scores[entry] >= 1.25 * index.config.threshold


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        # "quanto" asks how much: paying how much is the price, not the parking's "é pago".
        ("a gente paga quanto?", "planos"),
        ("paga quanto por aula?", "planos"),
        # Without it, paid is still the parking's adjective.
        ("o estacionamento de vcs é pago?", "estacionamento"),
    ],
)
def test_how_much_is_paid_asks_the_price(
    index: FaqIndex, pack: Pack, text: str, entry: str
) -> None:
    assert ask(text, index, pack).entry_ids == [entry]


@pytest.mark.parametrize(
    ("text", "entry_ids"),
    [
        # Disbelief framing the question names no topic of its own.
        ("sério que vocês não abrem no domingo?", ["horarios"]),
        ("jura que domingo não tem aula?", ["horarios"]),
        # The diminutive is the class.
        ("quanto sai a aulinha experimental?", ["aula_experimental"]),
        # Closing a plan is signing up, not the closing time.
        ("pra fechar o plano de 2x como faço?", ["planos"]),
    ],
)
def test_framing_and_colloquial_forms_reach_the_topic(
    text: str, entry_ids: list[str], index: FaqIndex, pack: Pack
) -> None:
    assert ask(text, index, pack).entry_ids == entry_ids


def test_closing_a_plan_is_no_question_about_the_closing_time(index: FaqIndex, pack: Pack) -> None:
    """ "fechar o plano" read as "fecha" answered a question about a discount with the
    opening hours."""
    result = ask("se eu fechar o plano, a aula teste vira desconto?", index, pack)
    assert "horarios" not in result.entry_ids


@pytest.mark.parametrize(
    "text",
    [
        # Another entry's thing, asked with the plans' frame.
        "o estacionamento custa quanto?",
        # Things no entry knows, asked with the frame of an entry that knows the frame only.
        "quanto custa a piscina?",
        "qual o horário da sauna de vocês?",
    ],
)
def test_an_entry_matching_only_the_questions_frame_does_not_answer(
    text: str, index: FaqIndex, pack: Pack
) -> None:
    """ "quanto custa" is how a price is asked, not what: the plans' prices are no answer
    to what something else costs. The reply says it does not know."""
    result = ask(text, index, pack)
    assert result.entry_ids == []
    assert result.unanswered


def test_a_class_for_a_kind_of_person_is_the_age_rules(index: FaqIndex, pack: Pack) -> None:
    """Without the person, "têm turma infantil?" leaves only the frame of the question
    ("têm turma"), which the class size entry shares but does not answer."""
    assert ask("vocês têm turma infantil?", index, pack).entry_ids == ["idade"]


def test_a_verb_the_base_never_uses_is_part_of_the_frame(index: FaqIndex, pack: Pack) -> None:
    """A word the base never uses counts as the thing asked only where a thing is named
    (after "o", "a", "da"...): after a pronoun it is a verb of the question."""
    assert ask("me descreve como é a aula experimental", index, pack).entry_ids == [
        "aula_experimental"
    ]
    assert index.object_terms("me descreve a piscina") == index.object_terms("a piscina")


@pytest.mark.parametrize(
    "text",
    [
        # The plan is the case; what is asked (a discount on the trial class) is unknown.
        "e se eu fechar o plano de 3x, a aula teste é abatida?",
        "se eu pagar no boleto, tem desconto?",
    ],
)
def test_the_case_a_question_is_asked_for_is_not_the_question(
    text: str, index: FaqIndex, pack: Pack
) -> None:
    result = ask(text, index, pack)
    assert result.entry_ids == []
    assert "não sei" in result.text or "não tenho" in result.text


def test_a_condition_before_a_bare_question_is_what_is_asked(index: FaqIndex, pack: Pack) -> None:
    assert ask("se chover forte, como fica?", index, pack).entry_ids == ["chuva"]


def test_a_condition_closed_by_its_own_question_mark_is_a_question(
    index: FaqIndex, pack: Pack
) -> None:
    assert "chuva" in ask("e se cair uma chuva forte? dá pra repor depois?", index, pack).entry_ids
