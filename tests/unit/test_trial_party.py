"""Several people in one booking message: the trial books one at a time, says so naming the
others, and offers the next booking after the first (sentences written for these tests)."""

from __future__ import annotations

import pytest

from services.trial.models import ToolResult
from shared.nlu.normalize import normalize
from shared.nlu.party import Party, party_in
from tests.unit.test_trial_flow import Chat, confirming_chat, view


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
    # Offered once: the group is done with.
    assert (out.state.party_size, out.state.party_names) == (None, [])


def test_a_booking_message_asking_for_the_times_gets_them() -> None:
    out = Chat().say(
        "Bom dia, sou a Tereza Lins, 40 anos. Poderiam me informar os horários disponíveis?"
    )
    assert "07:00" in out.text and out.asks_question


def test_a_booking_message_without_a_times_request_gets_no_times_added() -> None:
    out = Chat().say("Bom dia, sou a Tereza Lins, 40 anos")
    assert "07:00" not in out.text
