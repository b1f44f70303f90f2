"""The conversation's memory (``services/triage/memory.py``): facts from every message, where
each came from, corrections, and who the student is."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from services.triage.memory import MemoryState, expecting_from, remember
from shared.contracts import MemoryView
from shared.pack import load_pack
from shared.state import Snapshot
from shared.trial.config import load_trial_config

TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 3, 2, 15, 0, tzinfo=TZ)
# The rule the triage service reads from the pack for the level of a time played.
LEVELS = load_trial_config(load_pack("ctsmash")).levels_by_time


def _turns(*turns: list[str], expecting: str | None = None) -> MemoryState:
    state: MemoryState | None = None
    for index, messages in enumerate(turns):
        state, _ = remember(
            state,
            [(f"m{index}-{n}", text) for n, text in enumerate(messages)],
            turn_id=f"t{index}",
            now=NOW + timedelta(minutes=index),
            tz=TZ,
            expecting=expecting_from(expecting),
            levels_by_time=LEVELS,
        )
    assert state is not None
    return state


def _values(state: MemoryState) -> dict[str, object]:
    return {name: fact.value for name, fact in state.facts.items()}


def test_a_burst_before_any_flow_gives_every_fact_with_its_source() -> None:
    state = _turns(["tenho 31 anos", "jogo faz 6 meses", "ah, me chamo Yara", "bora marcar"])
    assert _values(state) == {"idade": 31, "nivel": "iniciante", "nome": "Yara"}
    nome = state.facts["nome"]
    assert (nome.turn_id, nome.message_id, nome.said) == ("t0", "m0-2", "ah, me chamo Yara")
    assert nome.at == NOW and nome.previous is None


def test_a_bare_number_after_an_age_corrects_it() -> None:
    state = _turns(["sou o Ivo, tenho 440 anos"], ["44* rsrs"])
    assert state.facts["idade"].value == 44
    assert state.facts["idade"].previous == 440
    assert state.facts["idade"].turn_id == "t1"
    # Whatever else the message with the age said.
    state = _turns(["Ivo, 4 anos, iniciante", "rs 40"])
    assert state.facts["idade"].value == 40
    # A bare number after something else than the student's data is no age.
    assert "idade" not in _turns(["tem aula terça às 19h?"], ["2"]).facts


def test_a_bare_number_among_the_students_data_is_the_age() -> None:
    state = _turns(["Rosana", "Rosana Prado", "52", "intermediária"], expecting="nome")
    assert _values(state) == {"nome": "Rosana Prado", "idade": 52, "nivel": "intermediario"}
    # Not while a day is asked, and not a number too big for an age.
    assert "idade" not in _turns(["16"], expecting="date").facts
    assert "idade" not in _turns(["Rosana", "300"], expecting="nome").facts


def test_an_asterisk_corrects_the_name_just_given() -> None:
    state = _turns(["quero marcar", "é pro Marcelo", "Marcela*", "minha filha, 14 anos"])
    assert _values(state) == {"nome": "Marcela", "idade": 14, "for_someone_else": True}


def test_a_later_name_replaces_the_earlier_one() -> None:
    state = _turns(["pro meu filho Mateus, 12 anos"], ["ops, é Matheus com H"])
    assert state.facts["nome"].value == "Matheus"
    assert state.facts["nome"].previous == "Mateus"
    assert state.facts["idade"].value == 12


def test_a_new_student_drops_the_other_persons_facts() -> None:
    state = _turns(["Gustavo, 45, intermediário"], ["melhor marcar pra minha filha, a Nina, 10"])
    assert _values(state) == {"nome": "Nina", "idade": 10, "for_someone_else": True}
    # Another person, not a correction: nothing of Gustavo is kept.
    assert state.facts["nome"].previous is None


def test_pra_mim_after_someone_else_comes_back_to_the_writer() -> None:
    state = _turns(["meu sobrinho de 5 anos pode?"], ["ah ok, então quero marcar pra mim"])
    assert state.facts["for_someone_else"].value is False
    assert "idade" not in state.facts


def test_the_pending_question_reads_a_bare_answer() -> None:
    assert _turns(["Odete"], expecting="nome").facts["nome"].value == "Odete"
    assert _turns(["quarenta"], expecting="idade").facts["idade"].value == 40
    assert expecting_from("confirmation") is None


def test_what_a_turn_noted_is_journaled() -> None:
    first, _ = remember(
        None, [("m1", "tenho 30 anos")], turn_id="t1", now=NOW, tz=TZ, expecting=None
    )
    _, noted = remember(
        first, [("m2", "29, na verdade")], turn_id="t2", now=NOW, tz=TZ, expecting=None
    )
    assert noted == {"noted": {"idade": 29}, "corrected": ["idade"]}
    _, nothing = remember(first, [("m2", "ok")], turn_id="t2", now=NOW, tz=TZ, expecting=None)
    assert nothing == {}


def test_other_services_read_it_through_its_view() -> None:
    state = _turns(["me chamo Léo, 27 anos"], ["27 não, 28"])
    view = Snapshot({"memory": {**state.model_dump(mode="json"), "_v": 2}}).memory()
    assert isinstance(view, MemoryView)
    assert (view.value("nome"), view.value("idade"), view.value("nivel")) == ("Léo", 28, None)
    assert set(MemoryView.model_fields) <= set(MemoryState.model_fields)
    assert Snapshot({}).memory() is None


def test_the_last_messages_are_kept_for_flows_that_read_their_own_slots() -> None:
    state = _turns(*[[f"mensagem {n}"] for n in range(15)], ["esta é a do turno"])
    view = MemoryView.model_validate(state.model_dump(mode="json"))
    assert len(view.heard) == 12
    assert view.heard_before("t15")[-1] == "mensagem 14"
    assert "esta é a do turno" not in view.heard_before("t15")
