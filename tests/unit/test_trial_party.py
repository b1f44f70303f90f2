"""Several people in one booking message: the trial books one at a time, says so naming the
others, and offers the next booking after the first (sentences written for these tests)."""

from __future__ import annotations

import pytest

from services.trial.models import BookedClass, PartyMember, ToolResult
from shared.nlu.normalize import normalize
from shared.nlu.party import Party, member_facts, party_in
from tests.unit.test_trial_flow import Chat, booked_chat, confirming_chat, view


@pytest.mark.parametrize(
    ("text", "party"),
    [
        ("quero marcar pra mim e pra minha sogra", Party(2, ())),
        ("eu e o meu cunhado Tiago queremos experimentar", Party(2, ("Tiago",))),
        ("queria para as minhas duas sobrinhas, Alice e Cecília", Party(2, ("Alice", "Cecília"))),
        ("somos 4 colegas de trabalho", Party(4, ())),
        ("quero marcar pra minha filha Laís, 11 anos", None),
        ("marca às 19h pra mim", None),
    ],
)
def test_a_group_is_heard_with_its_size_and_names(text: str, party: Party | None) -> None:
    assert party_in(text) == party


def test_a_group_is_told_one_booking_at_a_time_naming_the_others() -> None:
    chat = Chat()
    out = chat.say("oi, quero aula experimental pros meus dois netos, Otávio e Heitor")
    said = normalize(out.text)
    assert "uma pessoa por vez" in said
    assert "otavio" in said and "heitor" in said
    assert out.state.party_size == 2


def test_a_group_without_names_is_told_how_many_others_remain() -> None:
    out = Chat().say("somos em 3 vizinhas e queremos fazer a aula")
    assert "outras 2 pessoas" in normalize(out.text)


def test_the_next_booking_is_offered_after_the_first_is_made() -> None:
    chat = confirming_chat()
    assert chat.state is not None
    chat.state = chat.state.model_copy(update={"party_size": 2, "party_names": ["João", "Ivo"]})
    booked = view("AE-7K3Q9P", "2026-02-10", "19:00")
    out = chat.say("sim", result=ToolResult(status="created", booking=booked))
    said = normalize(out.text)
    assert "ivo" in said and "quer que eu marque" in said
    assert out.state.next_person == PartyMember(nome="Ivo")
    assert [b.booking_id for b in out.state.booked] == ["AE-7K3Q9P"]


def test_the_last_of_the_group_booked_offers_no_one_else() -> None:
    chat = confirming_chat()
    assert chat.state is not None
    earlier = BookedClass(nome="Ivo", booking_id="AE-1111AA")
    chat.state = chat.state.model_copy(
        update={"party_size": 2, "party_names": ["João", "Ivo"], "booked": [earlier]}
    )
    out = chat.say(
        "sim", result=ToolResult(status="created", booking=view("AE-2222BB", "2026-02-10", "19:00"))
    )
    assert "quer que eu marque" not in normalize(out.text)
    assert (out.state.party_size, out.state.next_person) == (None, None)


GROUP = (
    "Bom dia! Quero marcar a experimental pra mim e pra minha cunhada. Sou a Lúcia, tenho 39 "
    "e nunca peguei numa raquete. A minha cunhada, a Vera, tem 44 e já joga faz um ano"
)


def _first_booked() -> Chat:
    chat = Chat()
    chat.say(GROUP)
    chat.say("terça dia 10 às 19h")
    chat.say(
        "sim", result=ToolResult(status="created", booking=view("AE-1111AA", "2026-02-10", "19:00"))
    )
    return chat


def test_a_group_with_the_writer_starts_with_the_writer() -> None:
    chat = Chat()
    out = chat.say(GROUP)
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("Lúcia", 39, "iniciante")
    assert not out.state.for_someone_else
    assert "vera" in normalize(out.text)


def test_the_next_person_is_offered_with_what_the_group_message_said_of_them() -> None:
    chat = _first_booked()
    assert chat.state is not None
    assert chat.state.next_person == PartyMember(nome="Vera", idade=44, nivel="intermediario")


def test_asked_whether_the_next_person_is_booked_the_bot_says_not_yet_and_offers() -> None:
    chat = _first_booked()
    out = chat.say("e a Vera, ficou marcada também?")
    said = normalize(out.text)
    assert "vera" in said and "ainda nao" in said and "lucia" in said
    assert out.state.next_person is not None and out.state.booking_id == "AE-1111AA"


def test_a_yes_to_the_offer_books_the_next_person_in_the_same_class() -> None:
    chat = _first_booked()
    plan = chat.plan_for("pode sim, marca ela junto, confirmado")
    assert plan.tool_call is not None and plan.tool_call.tool == "create_booking"
    args = plan.tool_call.args
    assert (args["nome"], args["idade"], args["nivel"]) == ("Vera", 44, "intermediario")
    assert (args["date"], args["time"]) == ("2026-02-10", "19:00")


def test_the_next_person_on_another_day_is_asked_to_confirm_that_day() -> None:
    chat = _first_booked()
    out = chat.say("quero sim, mas pra ela na terça dia 24 às 20h")
    assert out.state.stage == "awaiting_confirmation" and out.state.nome == "Vera"
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-24", "20:00")


def test_a_no_lets_the_offer_go() -> None:
    chat = _first_booked()
    out = chat.say("não, por enquanto não")
    assert out.state.next_person is None and out.state.booking_id == "AE-1111AA"


def test_an_earlier_booking_of_the_group_is_looked_up_by_name() -> None:
    chat = _first_booked()
    chat.say(
        "pode sim, marca ela junto, confirmado",
        result=ToolResult(status="created", booking=view("AE-2222BB", "2026-02-10", "19:00")),
    )
    plan = chat.plan_for("a Lúcia continua marcada né?")
    assert plan.tool_call is not None
    assert (plan.tool_call.tool, plan.tool_call.args) == (
        "get_booking",
        {"booking_id": "AE-1111AA"},
    )
    found = view("AE-1111AA", "2026-02-10", "19:00").model_copy(update={"nome": "Lúcia"})
    out = chat.say("a Lúcia continua marcada né?", result=ToolResult(status="found", booking=found))
    assert "Lúcia" in out.text and "AE-1111AA" in out.text
    assert out.state.booking_id == "AE-2222BB"


def test_a_booking_message_asking_for_the_times_gets_them() -> None:
    out = Chat().say(
        "Bom dia, sou a Tereza Lins, 40 anos. Poderiam me informar os horários disponíveis?"
    )
    assert "07:00" in out.text and out.asks_question


def test_a_booking_message_without_a_times_request_gets_no_times_added() -> None:
    out = Chat().say("Bom dia, sou a Tereza Lins, 40 anos")
    assert "07:00" not in out.text


@pytest.mark.parametrize(
    ("text", "fits"),
    [
        ("somos em 3 vizinhas e queremos fazer a aula", True),
        ("somos 9 colegas da firma, dá pra todo mundo junto?", False),
    ],
)
def test_a_group_is_told_whether_it_fits_in_one_class(text: str, fits: bool) -> None:
    """The class's seats (6 in the pack) answer "dá pra irmos juntos?" before anything else."""
    said = normalize(Chat().say(text).text)
    assert "ate 6 vagas" in said
    assert ("juntos no mesmo horario" in said) is fits
    assert ("nao cabem" in said) is not fits


@pytest.mark.parametrize(
    ("text", "size"),
    [("vamos em 5 colegas do escritório", 5), ("seremos 3 pessoas", 3), ("vamos às 7", None)],
)
def test_a_group_counted_by_going_in_n(text: str, size: int | None) -> None:
    heard = party_in(text)
    assert (heard.size if heard else None) == size


def test_a_question_answered_elsewhere_leaves_the_offer_standing_and_says_nothing() -> None:
    chat = _first_booked()
    out = chat.say("e quanto custa o plano de 2x por semana depois?", intents=["faq", "trial"])
    assert out.text == "" and out.state.next_person is not None
    assert out.state.booking_id == "AE-1111AA" and out.state.stage == "booked"


def test_a_member_of_the_group_too_young_is_told_and_not_offered() -> None:
    chat = Chat()
    out = chat.say("oi, quero marcar pros meus dois filhos, o Davi de 10 e o Noah de 6, iniciantes")
    said = normalize(out.text)
    assert "a partir dos 8 anos" in said and "noah" in said
    assert "uma pessoa por vez" not in said
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("Davi", 10, "iniciante")
    assert out.state.party_size is None


def test_a_group_listed_with_ages_starts_with_the_first_named() -> None:
    out = Chat().say(
        "somos 3 primas querendo a experimental\nLia 19, Duda 22 e Mel 20\ntodas iniciantes"
    )
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("Lia", 19, "iniciante")
    assert "duda e mel" in normalize(out.text)


@pytest.mark.parametrize(
    ("text", "names", "facts"),
    [
        (
            "quero marcar pra mim e pra minha esposa, Joana. Eu sou o Rui, 41, ela tem 39, os dois "
            "iniciantes",
            ("Joana", "Rui"),
            [(39, "iniciante"), (41, "iniciante")],
        ),
        (
            "pra mim e pra minha esposa, Joana. Eu sou o Rui, ela tem 39",
            ("Joana", "Rui"),
            [(39, None), (None, None)],
        ),
        (
            "pros meus filhos: a Luna, ela tem 9, e o Téo, ele tem 11",
            ("Luna", "Téo"),
            [(9, None), (11, None)],
        ),
        (
            "tenho dois meninos, o Enzo de 10 e o Rafa de 6, os dois nunca jogaram",
            ("Enzo", "Rafa"),
            [(10, "iniciante"), (6, "iniciante")],
        ),
    ],
)
def test_each_persons_facts_are_read_around_their_name(
    text: str, names: tuple[str, ...], facts: list[tuple[int | None, str | None]]
) -> None:
    assert [member_facts(text, name, names) for name in names] == facts


def test_after_the_last_of_the_group_the_writer_asks_about_their_own_class() -> None:
    chat = _first_booked()
    out = chat.say(
        "pode sim, marca ela junto, confirmado",
        result=ToolResult(status="created", booking=view("AE-2222BB", "2026-02-10", "19:00")),
    )
    assert (out.state.party_size, out.state.next_person) == (None, None)
    assert [b.nome for b in out.state.booked] == ["Lúcia", "Vera"]
    plan = chat.plan_for("e a minha, que horas ficou mesmo?")
    assert plan.tool_call is not None
    assert (plan.tool_call.tool, plan.tool_call.args) == (
        "get_booking",
        {"booking_id": "AE-1111AA"},
    )


def test_someone_else_named_after_a_booking_gets_a_booking_of_their_own() -> None:
    chat = booked_chat()
    out = chat.say(
        "marca também pro meu primo Caetano, 24, avançado, na mesma aula", intents=["trial"]
    )
    said = normalize(out.text)
    assert out.state.stage == "awaiting_confirmation"
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("Caetano", 24, "avancado")
    assert (out.state.desired_date, out.state.desired_time) == ("2026-02-10", "19:00")
    assert "caetano" in said and "sua aula" not in said


def test_bringing_someone_along_after_a_booking_asks_who() -> None:
    out = booked_chat().say("dá pra eu trazer minha namorada?", intents=["trial"])
    assert out.state.stage != "booked"
    assert out.state.nome is None and out.state.for_someone_else
    assert "nome" in normalize(out.text)


def test_the_booked_persons_own_name_is_no_one_else() -> None:
    chat = booked_chat()
    assert chat.state is not None
    chat.state = chat.state.model_copy(update={"nome": "Renata"})
    plan = chat.plan_for("a Renata, 29, tá marcada né?", intents=["trial"])
    assert plan.tool_call is not None and plan.tool_call.tool == "get_booking"


@pytest.mark.parametrize(
    ("text", "for_others"),
    [
        ("quero marcar pras minhas duas netas, a Íris de 10 e a Lis de 12", True),
        ("eu e meu marido queremos fazer a experimental", False),
    ],
)
def test_a_group_without_the_writer_is_booked_for_others(text: str, for_others: bool) -> None:
    assert Chat().say(text).state.for_someone_else is for_others


@pytest.mark.parametrize(
    ("text", "party"),
    [
        ("aula pros meus netos, o Caíque de 9 e o Levi de 13", Party(2, ("Caíque", "Levi"))),
        ("minhas sobrinhas querem conhecer o beach tennis", Party(None, ())),
        ("aula pros meus gêmeos, Davi e Lucas, 10 anos", Party(2, ("Davi", "Lucas"))),
        ("Téo 10, Iara 12 e Gil 15", Party(3, ("Téo", "Iara", "Gil"))),
        ("minhas amigas me indicaram vocês, quero marcar pra mim", None),
    ],
)
def test_relatives_in_the_plural_or_people_listed_with_ages_are_a_group(
    text: str, party: Party | None
) -> None:
    assert party_in(text) == party


def test_a_writer_giving_an_age_of_their_own_is_booked_first_with_it() -> None:
    out = Chat().say("aqui é o Saulo, 52, e a outra é a Irene, 49. os dois iniciantes")
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("Saulo", 52, "iniciante")
    assert not out.state.for_someone_else


def test_a_group_heard_without_names_keeps_the_names_and_ages_said_later() -> None:
    chat = Chat()
    first = chat.say("eu e meu namorado queremos fazer a aula experimental")
    assert first.state.party_size == 2 and first.state.party_names == []
    named = chat.say("sou a Joice, 26, e ele é o Breno, 29. os dois iniciantes")
    assert (named.state.nome, named.state.idade) == ("Joice", 26)
    assert named.state.party_names == ["Joice", "Breno"]
    chat.say("terça dia 10 às 18h")
    booked = view("AE-1111AA", "2026-02-10", "18:00")
    chat.say("sim", result=ToolResult(status="created", booking=booked))
    assert chat.state is not None
    assert chat.state.next_person == PartyMember(nome="Breno", idade=29, nivel="iniciante")


def test_what_a_later_message_says_of_the_whole_group_is_kept_for_the_next() -> None:
    chat = Chat()
    chat.say("quero marcar pros meus filhos, a Nara de 10 e o Ravi de 12")
    chat.say("os dois nunca jogaram, terça dia 10 às 18h")
    booked = view("AE-1111AA", "2026-02-10", "18:00")
    out = chat.say("sim", result=ToolResult(status="created", booking=booked))
    assert out.state.next_person == PartyMember(nome="Ravi", idade=12, nivel="iniciante")


def test_the_first_of_a_group_booked_for_others_gets_their_own_age() -> None:
    out = Chat().say("é pra minha mãe, a Dirce, 61, e pro meu pai, o Ivo, 64. os dois iniciantes")
    assert (out.state.nome, out.state.idade, out.state.nivel) == ("Dirce", 61, "iniciante")
    assert out.state.for_someone_else


@pytest.mark.parametrize(
    ("text", "student"),
    [
        # The writer's own age beside a child's is no group: the child is booked.
        ("Oi! Sou a Clara, 36. Minha filha Nina tem 10 e quer fazer a aula", ("Nina", 10)),
        ("sou o Tales, 44, quero marcar pro meu filho Davi, 9", ("Davi", 9)),
        # Without a group, someone else's own age, not the writer's said first.
        ("sou o Iago, 31, e ela é a Mara, 29", ("Mara", 29)),
    ],
)
def test_the_writers_own_age_beside_someone_elses_books_the_other(
    text: str, student: tuple[str, int]
) -> None:
    out = Chat().say(text)
    assert (out.state.nome, out.state.idade) == student
    assert out.state.for_someone_else and out.state.party_size is None


def test_the_writers_own_name_and_age_while_booking_for_a_child_are_not_the_students() -> None:
    """Booking for a son, "sou a Solange, mãe dele" made Solange the student (asked about
    as the one taking the class) and "tenho 41" her age."""
    chat = Chat()
    chat.say("queria agendar pro meu menino", intents=["trial"])
    out = chat.say("sou a Solange, mãe dele")
    assert (out.state.nome, out.state.contact_name) == (None, "Solange")
    assert "Prazer, Solange" in out.text
    assert out.state.asked == "nome"
    out = chat.say("me chamo Solange e tenho 41")
    assert (out.state.nome, out.state.idade) == (None, None)
    out = chat.say("ele é o Theodoro, tem 11")
    assert (out.state.nome, out.state.idade, out.state.contact_name) == ("Theodoro", 11, "Solange")
    # Once the child is named, the parent's name does not replace theirs.
    out = chat.say("sou o Hélio, pai dele")
    assert (out.state.nome, out.state.contact_name) == ("Theodoro", "Hélio")
    assert out.state.stage == "collect_client_info"


def test_the_booking_turned_to_the_writer_keeps_their_name_as_the_students() -> None:
    chat = Chat()
    chat.say("queria agendar pro meu menino", intents=["trial"])
    out = chat.say("mudei de ideia, é pra mim mesma, sou a Solange")
    assert out.state.nome == "Solange"
