"""Rules-mode triage: routing table, active context, general alone, long messages, needs_llm."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from services.triage.config import ClarifyOption, TriageConfig, load_config
from services.triage.core import triage_turn
from services.triage.faq_evidence import faq_knows
from services.triage.models import TriageResult
from services.triage.rules import classify, needs_llm
from shared.contracts import FlowView, ModeView
from shared.pack import Pack, PackError, load_pack

PACK = load_pack("ctsmash")
CONFIG = load_config(PACK)
NOW = datetime(2026, 2, 3, 15, 0, tzinfo=UTC)
LONG_RAMBLE = (
    "entao, eu jogava tenis quando era mais novo, parei faz uns anos por causa do joelho e "
    "agora meu medico falou que seria bom voltar a fazer alguma atividade, minha namorada joga"
)


def intents(text: str, stage: str | None = None) -> list[str]:
    return classify(text, trial_stage=stage, config=CONFIG, pack=PACK).intents


def variants(key: str) -> list[str]:
    value = PACK.sections["texts"][key]
    return [value] if isinstance(value, str) else value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("quero marcar uma aula teste", ["trial"]),
        ("Quero agendar uma aula experimental 🎾", ["trial"]),
        ("onde fica a CT?", ["faq"]),
        ("quais os horarios?", ["faq"]),
        ("quanto custa a mensalidade", ["faq"]),
        ("oi", ["general"]),
        ("obrigado", ["general"]),
        ("tchau", ["general"]),
        ("quero agendar e onde fica a CT?", ["trial", "faq"]),
        ("quero falar com uma pessoa", ["handoff"]),
        ("quero falar com um atendente", ["handoff"]),
        ("quanto custa? e quero falar com um atendente", ["faq", "handoff"]),
    ],
)
def test_routing_table_without_active_context(text: str, expected: list[str]) -> None:
    assert intents(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sim", ["trial"]),
        ("19:00", ["trial"]),
        ("João, 27 anos", ["trial"]),
        ("iniciante", ["trial"]),
        ("terça", ["trial"]),
        ("onde fica a CT?", ["faq"]),
        ("sim, e onde fica?", ["trial", "faq"]),
        ("Pedro, 29. quanto custa a mensalidade?", ["trial", "faq"]),
        ("obrigado! e onde fica?", ["faq"]),
        ("quero falar com um atendente", ["handoff"]),
    ],
)
def test_active_context_routes_short_answers_to_trial(text: str, expected: list[str]) -> None:
    assert intents(text, stage="ask_date") == expected


def test_booked_stage_is_not_an_active_context() -> None:
    assert intents("sim", stage="booked") == []
    assert intents("sim", stage=None) == []


def test_long_answer_mid_booking_stays_with_trial() -> None:
    assert intents(LONG_RAMBLE, stage="collect_client_info") == ["trial"]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("oi", "general_greeting"),
        ("obrigado!!", "general_thanks"),
        ("tchau", "general_bye"),
        ("👍", "general_fallback"),
    ],
)
def test_general_carries_a_pack_reply(text: str, key: str) -> None:
    result = classify(text, trial_stage=None, config=CONFIG, pack=PACK, seed="turn-1")
    assert result.intents == ["general"]
    assert result.general_response in variants(key)
    assert result.confidences["general"] == 1.0


@pytest.mark.parametrize(
    ("text", "expected"), [("oi, quero agendar", ["trial"]), ("obrigado, onde fica?", ["faq"])]
)
def test_general_is_always_alone(text: str, expected: list[str]) -> None:
    result = classify(text, trial_stage=None, config=CONFIG, pack=PACK)
    assert result.intents == expected
    assert result.general_response is None


def test_long_message_without_action_is_unplaced_even_with_keywords() -> None:
    text = LONG_RAMBLE + " e ja me perguntou o preço"
    assert len(text) > CONFIG.clarification.long_message_chars
    assert CONFIG.intents["faq"].score("preco") > 0
    result = classify(text, trial_stage=None, config=CONFIG, pack=PACK)
    assert result.intents == []
    assert result.reason == "long_without_action"


def test_long_message_with_action_verb_is_classified() -> None:
    text = LONG_RAMBLE + ". Queria marcar uma aula experimental pra terça a noite"
    assert len(text) > 150
    assert intents(text) == ["trial"]


def test_short_unknown_message_is_unplaced_but_greeting_is_not() -> None:
    assert classify("hmm", trial_stage=None, config=CONFIG, pack=PACK).reason == "no_evidence"
    assert intents("oi") == ["general"]


def test_confidences_cover_every_intent_and_stay_in_range() -> None:
    result = classify("quero agendar e onde fica", trial_stage=None, config=CONFIG, pack=PACK)
    assert set(result.confidences) == set(CONFIG.intents) >= {"trial", "faq", "handoff"}
    assert all(0.0 <= c <= 1.0 for c in result.confidences.values())
    assert result.source == "rules"


def test_handoff_routes_to_its_owner_and_routes_are_deduplicated() -> None:
    decision = triage_turn(
        "quero agendar mas antes queria falar com alguem",
        state=None,
        trial_stage=None,
        now=NOW,
        config=CONFIG,
        pack=PACK,
        seed="t",
    )
    assert decision.intents == ["trial", "handoff"]
    assert decision.routes == [CONFIG.routes["handoff"]] == ["trial"]


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (TriageResult(intents=[], reason="no_evidence"), True),
        (TriageResult(intents=["general"], general_response="Oi!"), False),
        (TriageResult(intents=["trial"], confidences={"trial": 1.0, "faq": 0.0}), False),
        (TriageResult(intents=["trial"], confidences={"trial": 1.0, "faq": 0.3}), True),
        (TriageResult(intents=[], source="llm"), False),
    ],
)
def test_needs_llm_when_rules_are_unsure(result: TriageResult, expected: bool) -> None:
    assert needs_llm(result, CONFIG) is expected


def test_needs_llm_on_real_classifications() -> None:
    def unsure(text: str) -> bool:
        return needs_llm(classify(text, trial_stage=None, config=CONFIG, pack=PACK), CONFIG)

    assert unsure("vc é um robo?")
    assert not unsure("quero agendar uma aula experimental")
    assert not unsure("oi")


def test_pack_missing_a_text_fails_at_load() -> None:
    sections = {**PACK.sections, "texts": dict(PACK.sections["texts"])}
    del sections["texts"]["clarify_confirm"]
    with pytest.raises(PackError, match="clarify_confirm"):
        load_config(Pack("broken", sections))


def test_triage_reuses_general_texts_of_texts_yaml() -> None:
    kinds = {kind.name: kind.text_key for kind in CONFIG.general}
    assert kinds["greeting"] == "general_greeting"
    assert kinds["thanks"] == "general_thanks"
    assert kinds["bye"] == "general_bye"
    assert CONFIG.fallback_text_key == "general_fallback"


def test_option_asking_confirmation_needs_a_subject() -> None:
    with pytest.raises(ValidationError, match="subject_key"):
        ClarifyOption(id="x", label_key="k", intent="trial", confirm=True)


def test_every_intent_needs_a_route() -> None:
    data = PACK.sections["triage"]
    with pytest.raises(ValidationError, match="without a route"):
        TriageConfig.model_validate({**data, "routes": {"trial": "trial", "faq": "faq"}})


def test_booked_trial_waiting_for_an_answer_is_active_context() -> None:
    from services.triage.rules import trial_context

    # The trial slice as stored, read through its public view.
    pending = FlowView.model_validate(
        {"stage": "booked", "pending_tool": {"tool": "cancel_booking", "args": {}}}
    )
    assert trial_context(pending) == "awaiting_tool_confirmation"
    rescheduling = FlowView.model_validate({"stage": "booked", "rescheduling": True})
    assert trial_context(rescheduling) == "rescheduling"
    assert trial_context(FlowView.model_validate({"stage": "booked"})) == "booked"
    assert trial_context(None) is None
    result = classify("sim", trial_stage=trial_context(pending), config=CONFIG, pack=PACK)
    assert result.intents == ["trial"]


def test_mode_question_answered_whichever_service_decides_the_turn_first() -> None:
    from services.triage.rules import mode_awaits_answer

    waiting = ModeView(
        mode="discovery", pending_transition="oferta", last_turn_id="t1", last_decision="pending"
    )
    assert mode_awaits_answer(waiting, "t2")  # mode_router has not decided t2 yet
    confirmed = ModeView(
        mode="oferta", pending_transition=None, last_turn_id="t2", last_decision="confirm"
    )
    assert mode_awaits_answer(confirmed, "t2")  # it already took t2 as the answer
    assert not mode_awaits_answer(waiting, "t1")  # the turn that asked is not its answer
    assert not mode_awaits_answer(ModeView(mode="discovery"), "t3")
    assert not mode_awaits_answer(None, "t3")


@pytest.mark.parametrize(
    "text",
    [
        "Oi! Consigo fazer a aula experimental sexta que vem às 6? Sou a Rita, 35 anos",
        "teria aula teste depois de amanhã?",
        "posso agendar a experimental pro dia 17 às 20h?",
    ],
)
def test_a_booking_request_put_as_a_question_is_the_booking_s(text: str) -> None:
    """Asking for the class on a day or at an hour books it; the FAQ does not answer too."""
    assert intents(text) == ["trial"]


def test_a_real_question_next_to_a_booking_request_still_reaches_the_faq() -> None:
    assert intents("posso fazer a aula teste na terça? quanto custa a mensalidade?") == [
        "trial",
        "faq",
    ]


def test_a_question_about_the_class_with_no_day_stays_the_faq_s() -> None:
    assert "faq" in intents("como funciona a aula experimental?")


@pytest.mark.parametrize(
    "text", ["gostava de experimentar o beach tennis", "gostávamos de marcar a aula teste"]
)
def test_portugal_s_polite_imperfect_is_a_wish(text: str) -> None:
    assert "trial" in intents(text)


@pytest.mark.parametrize(
    ("text", "intents"),
    [
        ("brigadão! mais tarde eu te aviso", ["general"]),
        ("valeu, qualquer coisa volto aqui... tchau", ["general"]),
        ("valeu, me chamo Ciro, 41", ["trial"]),
        ("beleza", ["trial"]),
        ("obrigada!", ["trial"]),
    ],
)
def test_closing_small_talk_mid_booking_is_not_an_answer(text: str, intents: list[str]) -> None:
    """A goodbye ("I'll get back to you") ends the talk for now: the booking waits instead of
    asking its question again; an acknowledgement or a bare thanks still goes to it."""
    pack = load_pack("ctsmash")
    config = load_config(pack)
    assert classify(text, trial_stage="collect_client_info", config=config, pack=pack).intents == (
        intents
    )


@pytest.mark.parametrize(
    ("text", "handoff"),
    [
        ("então pode chamar alguém da equipe?", True),
        ("me transfere pra um atendente", True),
        ("chame o gerente por favor", True),
        ("vou chamar alguém pra jogar comigo", False),
    ],
)
def test_asking_the_bot_to_bring_someone_in_is_a_handoff(text: str, handoff: bool) -> None:
    pack = load_pack("ctsmash")
    intents = classify(text, trial_stage=None, config=load_config(pack), pack=pack).intents
    assert ("handoff" in intents) is handoff


@pytest.mark.parametrize(
    ("text", "handoff"),
    [
        # The staff's noun as the message, or as what a request asks for.
        ("Atendente!", True),
        ("um humano pfv", True),
        ("cadê o atendente?", True),
        ("preciso de um atendente urgente pra ver meu pagamento", True),
        ("queria o gerente, por favor", True),
        # The same nouns in a sentence about someone else ask for no one.
        ("sou responsável pela minha filha de 12, quero agendar pra ela", False),
        ("quem é o responsável técnico das aulas?", False),
        ("o gerente da loja ao lado que indicou vocês", False),
        ("meu marido é atendente de loja e só pode à noite", False),
        ("queria saber quem é o responsável pelas turmas", False),
    ],
)
def test_a_staff_noun_hands_off_only_when_asked_for(text: str, handoff: bool) -> None:
    """Early handoffs: "responsável", "gerente" or "atendente" anywhere used to hand the
    conversation to a person, so a parent saying who they are lost the bot mid-booking."""
    pack = load_pack("ctsmash")
    intents = classify(text, trial_stage=None, config=load_config(pack), pack=pack).intents
    assert ("handoff" in intents) is handoff


@pytest.mark.parametrize(
    ("text", "late"),
    [
        ("peguei trânsito, vou chegar uns 10 minutos atrasada", True),
        ("acho que vamos nos atrasar um pouco", True),
        ("vou chegar atrasado, dá pra remarcar pra semana que vem?", False),
    ],
)
def test_running_late_is_acknowledged(text: str, late: bool) -> None:
    pack = load_pack("ctsmash")
    result = classify(text, trial_stage="booked", config=load_config(pack), pack=pack)
    assert (result.general_response == pack.text("general_late", seed="")) is late


@pytest.mark.parametrize(
    ("text", "intents"),
    [
        ("pode ser esse mesmo, terça dia 17", ["trial"]),
        ("então fica o primeiro horário", ["trial"]),
        ("e tem vestiário?", ["faq"]),
    ],
)
def test_after_a_question_mid_booking_a_slot_answer_stays_with_the_booking(
    text: str, intents: list[str]
) -> None:
    pack = load_pack("ctsmash")
    config = load_config(pack)
    got = classify(text, trial_stage="ask_date", config=config, pack=pack, follow_up=True)
    assert got.intents == intents


@pytest.mark.parametrize("follow_up", [False, True])
@pytest.mark.parametrize(
    ("text", "intents"),
    [
        ("qual dia que tem?", ["trial"]),
        ("que horas tem?", ["trial"]),
        ("quais horários?", ["trial"]),
        ("e pela manhã?", ["trial"]),
        ("só à noite tem?", ["trial"]),
        # A limit on the time is a filter on the classes the booking offers.
        ("tem antes das 19h?", ["trial"]),
        ("mas e mais tarde, tem?", ["trial"]),
        # Even naming what the FAQ knows (the classes' size), the limit is the question.
        ("tem alguma turma antes das 19h?", ["trial"]),
        # What it asks about named, the opening hours stay the FAQ's.
        ("que horas vocês fecham?", ["faq"]),
        ("qual horário vocês abrem?", ["faq"]),
    ],
)
def test_mid_booking_a_bare_question_of_days_or_times_is_the_bookings(
    text: str, intents: list[str], follow_up: bool
) -> None:
    """While the booking asks for a day and a time, "que horas tem?" asks its classes' times,
    even right after the FAQ answered something else: it got the opening hours."""
    pack = load_pack("ctsmash")
    config = load_config(pack)
    knows = faq_knows(pack, config)
    got = classify(
        text, trial_stage="ask_date", config=config, pack=pack, knows=knows, follow_up=follow_up
    )
    assert got.intents == intents


@pytest.mark.parametrize("text", ["qual é o código mesmo?", "me manda o código de novo"])
def test_the_booking_code_asked_again_goes_to_the_booking(text: str) -> None:
    pack = load_pack("ctsmash")
    got = classify(text, trial_stage="booked", config=load_config(pack), pack=pack)
    assert got.intents == ["trial"]


@pytest.mark.parametrize(
    ("text", "intents"),
    [
        ("como eu faço pra agendar uma aulinha?", ["trial"]),
        ("tem como fazer uma aula experimental essa semana?", ["trial"]),
        ("tem alguma atendente disponível agora?", ["handoff"]),
        ("como funciona a aula experimental?", ["faq"]),
    ],
)
def test_a_request_put_as_a_question_goes_to_the_service_that_does_it(
    text: str, intents: list[str]
) -> None:
    """How to book, or asking for a person, is answered by doing it, not by the FAQ."""
    pack = load_pack("ctsmash")
    assert classify(text, trial_stage=None, config=load_config(pack), pack=pack).intents == intents


@pytest.mark.parametrize(
    "text",
    [
        "beleza. e a experimental é obrigatória pra quem vai se matricular?",
        "ok! e essa aula experimental é necessária mesmo?",
    ],
)
def test_an_acknowledgement_before_a_question_leaves_the_question_to_the_faq(text: str) -> None:
    assert intents(text) == ["faq"]


def test_small_talk_after_thanks_is_still_small_talk() -> None:
    assert intents("obrigada! tudo bem?") == ["general"]


def test_a_price_question_beside_how_to_book_reaches_the_faq_too() -> None:
    assert sorted(intents("qual o valor do plano e como eu faço pra marcar a aula teste?")) == [
        "faq",
        "trial",
    ]


@pytest.mark.parametrize(
    "text",
    ["queria quarta 20h", "prefiro a próxima terça às 19", "quero dia 17 às 7", "queria na terça"],
)
def test_wanting_a_day_or_an_hour_with_no_verb_asks_for_a_class(text: str) -> None:
    """ "queria terça 19h" got the menu: a wished slot is the class asked for."""
    pack = load_pack("ctsmash")
    config = load_config(pack)
    knows = faq_knows(pack, config)
    intents = classify(text, trial_stage=None, config=config, pack=pack, knows=knows).intents
    assert intents == ["trial"]


@pytest.mark.parametrize(
    ("text", "trial"),
    [
        ("poxa, queria muito ir no sábado", True),
        ("dá pra ir amanhã cedinho?", True),
        ("queria ir na quinta depois do serviço", True),
        ("minha filha pode vir de manhã?", True),
        ("posso ir às 19h?", True),
        # Going somewhere else, or how to get there, is no class asked for.
        ("queria ir ao banheiro antes, tem vestiário?", False),
        ("a gente pode ir de carro? tem estacionamento?", False),
    ],
)
def test_wanting_to_go_on_a_day_or_at_an_hour_asks_for_a_class(text: str, trial: bool) -> None:
    """A wish said with "ir"/"vir" was answered "essa informação eu não tenho": going to the
    class on a day is taking one."""
    pack = load_pack("ctsmash")
    config = load_config(pack)
    knows = faq_knows(pack, config)
    intents = classify(text, trial_stage=None, config=config, pack=pack, knows=knows).intents
    assert ("trial" in intents) is trial


@pytest.mark.parametrize(
    "text",
    [
        "e se eu fechar o plano de 3x, a aula teste é abatida?",
        "caso eu me matricule, vocês dão desconto na primeira mensalidade?",
    ],
)
def test_a_condition_before_a_question_is_no_request(text: str) -> None:
    """ "se eu fechar o plano" sets the case a question is asked for: no enrollment starts;
    the question still goes to the FAQ."""
    got = intents(text)
    assert "enrollment" not in got
    assert "faq" in got


def test_a_condition_alone_is_the_question() -> None:
    assert intents("e se eu fechar o plano?") != []


@pytest.mark.parametrize("text", ["ahh que ótimo!", "muito bom então", "oba, que legal"])
@pytest.mark.parametrize("follow_up", [False, True])
def test_being_pleased_alone_is_acknowledged(text: str, follow_up: bool) -> None:
    """A word of approval said alone ("que X!", an interjection before it) is an
    acknowledgement, not an unplaced message that gets the menu, nor, right after an FAQ
    answer, its next question."""
    result = classify(text, trial_stage=None, config=CONFIG, pack=PACK, follow_up=follow_up)
    assert result.intents == ["general"]
    assert result.general_response in variants("general_ack")


def test_approval_beside_a_request_or_a_greeting_is_no_acknowledgement() -> None:
    assert intents("que bom, quero agendar pra terça") == ["trial"]
    greeting = classify("bom dia", trial_stage=None, config=CONFIG, pack=PACK)
    assert greeting.general_response in variants("general_greeting")


@pytest.mark.parametrize("text", ["aceita vale-transporte?", "aceitam wellhub?"])
def test_a_question_asked_outright_about_anything_goes_to_the_faq(text: str) -> None:
    """A direct question nothing else knows is about the business: the FAQ says honestly what
    it does not know (with the way to a person) instead of the menu asking what is wanted. The
    rules placed it by its shape alone, so hybrid mode still asks the LLM."""
    result = classify(text, trial_stage=None, config=CONFIG, pack=PACK)
    assert result.intents == ["faq"]
    assert needs_llm(result, CONFIG)


@pytest.mark.parametrize("text", ["como assim?", "?", "e ai?"])
def test_a_question_about_what_the_bot_said_is_not_sent_to_the_faq(text: str) -> None:
    assert "faq" not in intents(text)
