"""Every question is heard: clauses, what the FAQ is given, questions mid-booking and at the
menu, and a menu that cannot trap anyone (triage's pure core with the CT Smash pack)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.triage.config import load_config
from services.triage.core import triage_turn
from services.triage.faq_evidence import faq_knows
from services.triage.models import TriageDecision, TriageState
from services.triage.questions import clauses, faq_text
from services.triage.rules import classify
from shared.pack import load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)
KNOWS = faq_knows(PACK, CONFIG)
T0 = datetime(2026, 2, 3, 15, 0, tzinfo=UTC)
MID_BOOKING = "collect_client_info"


def intents(text: str, stage: str | None = None) -> list[str]:
    return classify(text, trial_stage=stage, config=CONFIG, pack=PACK, knows=KNOWS).intents


def turn(
    text: str, state: TriageState | None = None, *, stage: str | None = None, minutes: int = 0
) -> TriageDecision:
    return triage_turn(
        text,
        state=state,
        trial_stage=stage,
        now=T0 + timedelta(minutes=minutes),
        config=CONFIG,
        pack=PACK,
        seed="turn",
        knows=KNOWS,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "quero agendar uma aula experimental e onde fica a CT?",
            ["quero agendar uma aula experimental", "onde fica a CT"],
        ),
        (
            "quero agendar a experimental e saber o preço da mensalidade e se tem estacionamento",
            [
                "quero agendar a experimental",
                "saber o preço da mensalidade",
                "se tem estacionamento",
            ],
        ),
        # A topic and its question, or a list inside one question, stay whole.
        ("aula experimental e quanto custa?", ["aula experimental e quanto custa"]),
        ("preciso levar raquete e bolinha?", ["preciso levar raquete e bolinha"]),
        ("Pedro, 29. quanto custa?", ["Pedro, 29", "quanto custa"]),
    ],
)
def test_a_message_is_cut_into_its_clauses(text: str, expected: list[str]) -> None:
    assert [c.text for c in clauses(text, CONFIG)] == expected


@pytest.mark.parametrize(
    ("text", "active", "asked"),
    [
        ("quero agendar uma aula experimental e onde fica a CT?", False, "onde fica a CT?"),
        (
            "quero agendar a experimental e saber o preço da mensalidade e se tem estacionamento",
            False,
            "saber o preço da mensalidade\nse tem estacionamento",
        ),
        ("ele é iniciante. vcs emprestam raquete?", True, "vcs emprestam raquete?"),
        (
            "tenho 45 anos, dor no joelho, nunca joguei. vcs abrem que horas? "
            "tem que pagar pra experimentar?",
            False,
            "vcs abrem que horas?\ntem que pagar pra experimentar?",
        ),
        # Nothing stands out as a question: the FAQ gets the message as it is.
        ("aula experimental, quanto custa?", False, "aula experimental, quanto custa?"),
        ("valores", False, "valores"),
    ],
)
def test_the_faq_is_given_the_clauses_that_ask(text: str, active: bool, asked: str) -> None:
    assert faq_text(text, CONFIG, active=active, knows=KNOWS) == asked


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # An answer next to a question: both reach their specialist.
        ("ele é iniciante. vcs emprestam raquete?", ["trial", "faq"]),
        ("28, quanto é o plano 2x?", ["trial", "faq"]),
        # A question no keyword names, which the knowledge base answers.
        ("a partir de que idade pode?", ["faq"]),
        # Questions about the booking itself stay with it.
        ("pq precisa da idade?", ["trial"]),
        ("quais horarios tem na terça?", ["trial"]),
    ],
)
def test_mid_booking_every_question_and_every_answer_is_routed(
    text: str, expected: list[str]
) -> None:
    assert intents(text, MID_BOOKING) == expected


def test_without_the_knowledge_base_the_keywords_decide() -> None:
    result = classify(
        "a partir de que idade pode?", trial_stage=MID_BOOKING, config=CONFIG, pack=PACK
    )
    assert result.intents == ["trial"]


def test_a_long_message_with_questions_is_routed_not_sent_to_the_menu() -> None:
    text = (
        "boa tarde, tenho 45 anos e faz tempo que nao faço exercicio, tenho uma dor no joelho "
        "que vai e volta. vcs abrem que horas? tem que pagar pra experimentar?"
    )
    assert len(text) > CONFIG.clarification.long_message_chars
    assert intents(text) == ["faq"]


def test_an_unplaced_question_the_faq_knows_goes_to_the_faq() -> None:
    assert intents("a partir de que idade pode?") == ["faq"]


def test_a_wish_in_informal_words_is_a_booking() -> None:
    assert intents("tô afim de experimentar o beach tennis") == ["trial"]


def test_the_faq_route_gets_the_question_and_trial_the_whole_message() -> None:
    text = "quero agendar uma aula experimental e onde fica a CT?"
    decision = turn(text)
    assert decision.routes == ["trial", "faq"]
    assert decision.text == text
    assert decision.route_texts == {"faq": "onde fica a CT?"}


def menu() -> TriageDecision:
    return turn("hmm sei la")


def test_a_question_at_the_menu_is_answered_not_read_as_an_option() -> None:
    opened = menu()
    assert opened.journal["clarification"] == "n1_menu"
    decision = turn("tem aula pra criança?", opened.state, minutes=1)
    assert decision.routes == ["faq"] and decision.text == "tem aula pra criança?"
    assert decision.state.pending is None
    assert decision.journal["pending_superseded"] == "awaiting_context"


def test_a_request_in_other_words_at_the_menu_is_taken() -> None:
    decision = turn("tô afim de experimentar o beach tennis", menu().state, minutes=1)
    assert decision.routes == ["trial"] and decision.state.pending is None


def test_the_menu_is_shown_at_most_twice_then_a_person_takes_over() -> None:
    opened = menu()
    again = turn("hmm", opened.state, minutes=1)
    assert again.journal["clarification"] == "n1_invalid"
    assert again.state.pending is not None and again.state.pending.menus_shown == 2
    third = turn("sei la", again.state, minutes=2)
    assert third.journal["clarification"] == "n1_handoff"
    assert third.intents == ["handoff"] and third.routes == [CONFIG.routes["handoff"]]
    assert third.text == opened.state.pending.original_message
    assert third.state.pending is None


def test_the_second_menu_says_what_to_write() -> None:
    again = turn("hmm", menu().state, minutes=1)
    intro = again.inline_text.split("\n\n")[0]
    assert "ex.:" in intro


def test_an_answer_leaning_to_one_option_picks_it_and_asks_its_confirmation() -> None:
    decision = turn("experimentar", menu().state, minutes=1)
    assert decision.journal["clarification"] == "n2_confirm"
    pending = decision.state.pending
    assert pending is not None and pending.chosen_option == "trial"


def test_an_answer_leaning_nowhere_or_everywhere_gets_the_menu_again() -> None:
    assert turn("sei la", menu().state, minutes=1).journal["clarification"] == "n1_invalid"


def test_mid_booking_a_pure_question_also_reaches_the_booking_to_re_ask_its_step() -> None:
    decision = turn("a partir de que idade pode?", stage=MID_BOOKING)
    # The message is a question (its intents say so), and the booking hears it too.
    assert decision.intents == ["faq"]
    assert decision.routes == ["trial", "faq"]
    # Nothing in it is for the booking: it is given no text to read a name or a date from.
    assert decision.route_texts["trial"] == ""


def test_outside_a_booking_a_question_goes_to_the_faq_alone() -> None:
    assert turn("a partir de que idade pode?").routes == ["faq"]
    assert turn("onde fica?", stage="booked").routes == ["faq"]


def test_a_booking_request_asked_as_a_question_is_not_given_to_the_faq() -> None:
    text = "qual o valor da mensalidade e como faço pra agendar?"
    assert intents(text) == ["trial", "faq"]
    assert faq_text(text, CONFIG, active=False, knows=KNOWS) == "qual o valor da mensalidade"


def test_mid_booking_a_question_the_faq_cannot_answer_still_reaches_it() -> None:
    # The FAQ says honestly that it does not know, instead of the question being an answer.
    assert intents("tenho 40. qual a idade maxima?", MID_BOOKING) == ["trial", "faq"]
    # Small talk and proposals for the booking are not such questions.
    assert intents("tudo bem?", MID_BOOKING) == ["trial"]
    assert intents("Ana?", MID_BOOKING) == ["trial"]
    assert intents("pode ser no nome da minha filha? ela tem 14", MID_BOOKING) == ["trial"]


def test_a_booking_given_outright_is_a_booking_request() -> None:
    assert intents("pra minha filha Sofia, 6 anos, iniciante, terça 10/02 18h") == ["trial"]


def test_a_question_about_a_grandchild_is_one_the_faq_knows() -> None:
    assert intents("Boa tarde. Gostaria de saber se minha neta de 5 anos pode fazer aulas") == [
        "faq"
    ]


def test_a_question_the_faq_knows_is_heard_next_to_a_booking_word() -> None:
    assert {"faq", "trial"} <= set(intents("vou marcar a aula teste, tem idade minima?"))
    # Naming the class in a question asks about it: the FAQ answers, no booking starts.
    assert intents("qual a idade minima pra fazer a aula experimental?") == ["faq"]


def test_an_age_question_with_nothing_else_goes_to_the_faq() -> None:
    assert "faq" in intents("aceitam quem ja tem 80?")


def test_a_short_question_right_after_an_faq_answer_is_its_follow_up() -> None:
    after_faq = TriageState(last_intents=["faq"])
    follow_up = turn("e em dia de jogo do brasil?", after_faq)
    assert "faq" in follow_up.intents and follow_up.journal["clarification"] is None
    # Out of the blue no rule places it; as a question it still reaches the FAQ, not the menu.
    alone = turn("e em dia de jogo do brasil?")
    assert alone.journal["clarification"] == "question_unplaced"


def test_small_talk_after_an_faq_answer_is_not_a_follow_up() -> None:
    after_faq = TriageState(last_intents=["faq"])
    assert "faq" not in turn("valeu, obrigado!", after_faq).intents


def test_an_age_said_beside_an_age_question_makes_it_the_faqs() -> None:
    text = "ola, tem idade maxima pra aula experimental? eu nasci em 1948"
    found = classify(text, trial_stage=None, config=CONFIG, pack=PACK, knows=KNOWS, now=T0).intents
    assert "faq" in found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The class and its day are the setting; what is asked after the comma is the FAQ's.
        ("a minha aula experimental é na terça, vai ter aula se chover?", ["trial", "faq"]),
        # Asked after the comma, a slot is still the booking's.
        ("pra terça às 20h, ainda tem vaga?", ["trial"]),
        # About the booked class, but nothing the booking's replies say: the FAQ's.
        ("vou na experimental de terça, tenho que levar raquete?", ["trial", "faq"]),
        # The class's times are what the booking's replies say.
        ("quero agendar a experimental de terça, que horas tem?", ["trial"]),
    ],
)
def test_a_question_after_the_day_of_the_class_is_asked_apart(
    text: str, expected: list[str]
) -> None:
    assert intents(text) == expected


@pytest.mark.parametrize("text", ["como assim?", "não entendi a pergunta", "hein?"])
def test_the_bots_question_not_understood_is_the_bookings_to_say_again(text: str) -> None:
    assert intents(text, MID_BOOKING) == ["trial"]


@pytest.mark.parametrize(
    ("text", "booked", "other"),
    [
        # With a class booked, its time asked again is the booking's; otherwise the hours'.
        ("e que horas é mesmo?", ["trial"], ["faq"]),
        ("qual era o dia?", ["trial"], ["faq"]),
        # The hours asked again are still the hours.
        ("que horas abre mesmo?", ["faq"], ["faq"]),
    ],
)
def test_what_a_booking_holds_asked_again_is_the_bookings(
    text: str, booked: list[str], other: list[str]
) -> None:
    assert intents(text, "booked") == booked
    assert intents(text) == other


@pytest.mark.parametrize(
    "text", ["queria tanto aprender", "topo fazer essa aula", "me encaixa na turma de terça"]
)
def test_a_wish_to_learn_or_be_put_in_a_class_is_a_booking(text: str) -> None:
    assert "trial" in intents(text)


@pytest.mark.parametrize("text", ["nossa, vocês demoram demais pra responder", "quanta demora"])
@pytest.mark.parametrize("after_faq", [False, True])
def test_a_calm_complaint_is_said_sorry_for_not_asked_of_the_faq(
    text: str, after_faq: bool
) -> None:
    """A complaint said calmly is not a question the FAQ does not know (nor, after an answer,
    its next question): it gets the pack's apology, and no person is called."""
    state = TriageState(last_intents=["faq"]) if after_faq else None
    decision = turn(text, state)
    assert decision.intents == ["general"]
    assert decision.inline_text in PACK.sections["texts"]["general_complaint"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A question naming the trial class asks about it: the FAQ answers (and offers).
        ("qto fica a experimental?", ["faq"]),
        ("qual horário da experimental?", ["faq"]),
        # ... when it knows the answer; otherwise the booking still introduces the class.
        ("a experimental tem professor junto?", ["trial", "faq"]),
        # A wish, a day, or a booking's field given beside the name asks for the class.
        ("quero marcar a experimental", ["trial"]),
        ("tem experimental na quinta?", ["trial"]),
        ("me chamo Bia, qto sai a aula teste?", ["trial", "faq"]),
    ],
)
def test_a_question_about_the_trial_class_is_no_request_for_one(
    text: str, expected: list[str]
) -> None:
    assert intents(text) == expected


@pytest.mark.parametrize(
    "text", ["que demora hein, aceitam cartão?", "ta demorando demais, onde vcs ficam?"]
)
def test_a_complaint_beside_a_question_is_said_sorry_for_and_the_question_answered(
    text: str,
) -> None:
    decision = turn(text)
    assert decision.routes == ["faq"]
    assert decision.inline_text in PACK.sections["texts"]["general_complaint_aside"]


def test_mid_booking_the_booking_says_sorry_for_a_complaint_itself() -> None:
    decision = turn("que demora, vcs abrem sabado?", stage=MID_BOOKING)
    assert decision.routes == ["trial", "faq"] and decision.inline_text is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Wanting, looking for or asking for a slot is a booking request.
        ("tô procurando um horário na terça à noite", ["trial"]),
        ("vocês teriam um horário pra mim terça?", ["trial"]),
        ("queria uma vaga pra minha filha", ["trial"]),
        ("me arruma um horário quinta cedo", ["trial"]),
        # The timetable, the opening hours and a parking space are no slot.
        ("queria saber os horários", ["faq"]),
        ("queria saber o horário de funcionamento", ["faq"]),
        ("preciso de uma vaga pra estacionar", ["faq"]),
    ],
)
def test_a_wish_for_a_slot_is_a_booking_request(text: str, expected: list[str]) -> None:
    assert intents(text) == expected


@pytest.mark.parametrize("text", ["terça às 19 pode?", "dia 17 às 20, pode?"])
def test_a_slot_proposed_with_a_bare_yes_asked_is_the_bookings(text: str) -> None:
    """A "pode?" after a day and a time asks whether that slot will do, not the age rule
    (whose questions use "pode"): no FAQ "não sei" beside the booking's confirmation."""
    assert intents(text, "ask_date") == ["trial"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Wanting to know is asking: the FAQ answers, no booking starts.
        ("queria saber se tem aula pra quem tem 55 anos", ["faq"]),
        ("gostaria de saber se tem aula de manhã", ["faq"]),
        # Asked to know whether one can book, the booking is still asked for.
        ("queria saber se posso marcar aula", ["trial", "faq"]),
    ],
)
def test_wanting_to_know_is_a_question_not_a_wish_for_the_class(
    text: str, expected: list[str]
) -> None:
    assert intents(text) == expected


@pytest.mark.parametrize("text", ["que ótimo! me chamo Lia", "que bom! bora seguir"])
def test_an_exclamation_after_an_faq_answer_is_no_question(text: str) -> None:
    """The word "que" starts questions, but "que ótimo!" exclaims: mid-booking, right after an
    FAQ answer, the message is the booking's, not a next question the FAQ would not know."""
    after_faq = TriageState(last_intents=["faq"])
    assert turn(text, after_faq, stage=MID_BOOKING).intents == ["trial"]
    # Asked, the same words are a question.
    assert "faq" in turn("que ótimo, e tem estacionamento?", after_faq, stage=MID_BOOKING).intents


@pytest.mark.parametrize("text", ["ah o nome? Bruna", "o nível dela? iniciante", "a idade dele?"])
def test_the_field_asked_echoed_mid_booking_is_the_bookings(text: str) -> None:
    """Echoing the field the booking asks is no question for the FAQ (which would say it does
    not know); the person of another topic ("o nome do professor?") still asks the FAQ."""
    assert intents(text, MID_BOOKING) == ["trial"]
    assert "faq" in intents("o nome do professor?", MID_BOOKING)
