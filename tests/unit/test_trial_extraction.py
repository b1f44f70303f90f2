"""Reading trial fields from a message, the safe merge, actions and booking codes, and the
optional LLM phrasing guard."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from services.triage.config import load_config as load_triage
from services.triage.memory import MemoryState, remember
from services.triage.rules import classify
from services.trial.extraction import (
    detect_action,
    ensure_trial_defaults,
    extract_trial_fields,
    find_booking_code,
    merge_trial,
    points_back,
    with_memory,
)
from services.trial.models import NlgRequest, Stage, TrialExtraction, TrialState
from services.trial.nlg import build_nlg_request, fallback_or_nlg
from shared.contracts import MemoryView
from shared.pack import load_pack
from shared.trial.config import load_trial_config

TZ = ZoneInfo("America/Sao_Paulo")
NOW = datetime(2026, 2, 5, 10, 0, tzinfo=TZ)
CONFIG = load_trial_config(load_pack("ctsmash"))


def test_defaults_are_the_seeds() -> None:
    state = ensure_trial_defaults(None)
    assert state.stage == "collect_client_info"
    assert (state.booking_created, state.handoff_requested, state.output) == (False, False, None)
    existing = TrialState(stage="ask_date", nome="Ana")
    assert ensure_trial_defaults(existing) is existing


def test_slice_ignores_unknown_fields_from_a_newer_writer() -> None:
    state = TrialState.model_validate({"stage": "ask_date", "_v": 3, "future_field": 1})
    assert state.stage == "ask_date"


def test_rules_extraction_normalizes_date_and_time() -> None:
    ext = extract_trial_fields(
        "Quero na terça dia 10 de fevereiro às 7 da noite", now=NOW, tz=TZ, asked="date"
    )
    assert (ext.desired_date, ext.desired_time) == ("2026-02-10", "19:00")


@pytest.mark.parametrize(
    ("text", "asked", "field", "value"),
    [
        ("João", "nome", "nome", "João"),
        ("27", "idade", "idade", 27),
        ("sou intermediário", "nivel", "nivel", "intermediario"),
        ("19", "time", "desired_time", "19:00"),
        ("sim", "confirmation", "confirmed", True),
        ("não", "confirmation", "confirmed", False),
    ],
)
def test_the_asked_field_makes_bare_answers_count(
    text: str, asked: str, field: str, value: object
) -> None:
    ext = extract_trial_fields(text, now=NOW, tz=TZ, asked=asked)  # type: ignore[arg-type]
    assert getattr(ext, field) == value


def test_a_bare_number_is_not_an_age_when_not_asked() -> None:
    assert extract_trial_fields("27", now=NOW, tz=TZ, asked=None).idade is None


def test_merge_keeps_collected_fields_and_takes_new_values() -> None:
    state = TrialState(nome="João", idade=27, desired_date="2026-02-10")
    merged = merge_trial(state, TrialExtraction(desired_time="19:00", confirmed=True))
    assert merged.model_dump(include={"nome", "idade", "desired_date", "desired_time"}) == {
        "nome": "João",
        "idade": 27,
        "desired_date": "2026-02-10",
        "desired_time": "19:00",
    }
    corrected = merge_trial(merged, TrialExtraction(desired_date="2026-02-17"))
    assert corrected.desired_date == "2026-02-17"
    assert merge_trial(state, TrialExtraction()) is state


def test_merge_touches_only_the_slice_fields() -> None:
    state = TrialState(stage="ask_date", booking_id=None)
    merged = merge_trial(state, TrialExtraction(nome="Ana", confirmed=True))
    assert merged.stage == "ask_date"
    assert merged.nome == "Ana"


@pytest.mark.parametrize(
    ("text", "intents", "action"),
    [
        ("quero falar com alguém", [], "handoff"),
        ("ATENDENTE!!", [], "handoff"),
        ("quero cancelar", [], "cancel"),
        ("não vou poder ir", [], "cancel"),
        ("dá pra remarcar minha aula?", [], "reschedule"),
        ("tá confirmado meu agendamento?", [], "status"),
        ("quero remarcar, ou melhor, cancelar", [], "cancel"),
        ("oi", ["trial", "trial_status"], "status"),
        ("19:00", ["trial"], None),
        ("quero cancelar e falar com uma pessoa", [], "handoff"),
        # Not going after all, or one's name off the class, in words the phrases do not list.
        ("acho que não vou conseguir comparecer", [], "cancel"),
        ("por favor tira o meu nome da aula", [], "cancel"),
        ("não posso mais ir, desculpa", [], "cancel"),
        # The class's hour or day forgotten asks how it stands.
        ("putz, esqueci o horário", [], "status"),
        ("não lembro qual era a data", [], "status"),
        # Whether the class still holds, asked with its day: how it stands, not small talk.
        ("tá tudo certinho pra amanhã, né?", [], "status"),
        ("segue confirmado pro dia 15?", [], "status"),
        ("tudo ok pra terça?", [], "status"),
        ("tudo certo por aí?", [], None),
        # What the change costs, asked: the FAQ answers it, the booking stays.
        ("se eu desmarcar vocês cobram?", [], None),
        ("tem multa pra cancelar?", ["trial_cancel"], None),
        ("mudar a aula de dia é pago?", [], None),
        ("tem multa? quero falar com alguém", [], "handoff"),
    ],
)
def test_actions(text: str, intents: list[str], action: str | None) -> None:
    assert detect_action(text, intents, CONFIG) == action


@pytest.mark.parametrize("stage", ["booked", None])
def test_whether_the_class_still_holds_goes_to_the_booking_not_small_talk(
    stage: str | None,
) -> None:
    """ "Tá tudo certo pra amanhã?" after a booking asks how it stands (the booking answers
    with the class, or that there is none); "tudo certo" alone stays small talk."""
    pack = load_pack("ctsmash")
    triage = load_triage(pack)
    asked = classify("tá tudo certo pra amanhã, né?", trial_stage=stage, config=triage, pack=pack)
    assert asked.intents == ["trial"]
    greeting = classify("tudo certo?", trial_stage=stage, config=triage, pack=pack)
    assert greeting.intents == ["general"]


def test_booking_codes_are_found_case_insensitively() -> None:
    assert find_booking_code("meu código: ae-7k3q9p", CONFIG) == "AE-7K3Q9P"
    assert find_booking_code("AE-7K3Q9", CONFIG) is None
    assert find_booking_code("sem código", CONFIG) is None


def nlg_request(fallback: str, stage: Stage = "awaiting_confirmation") -> NlgRequest:
    return build_nlg_request(
        stage=stage,
        action="ask_confirmation",
        error_code=None,
        fallback=fallback,
        snapshot={"desired_date": "2026-02-10", "desired_time": "19:00"},
        config=CONFIG.nlg,
    )


def test_nlg_prompt_is_built_from_the_decision() -> None:
    request = nlg_request("Confirma sua aula na terça, 10/02 às 19:00? Código AE-7K3Q9P")
    assert request.facts == ["10/02", "19:00", "AE-7K3Q9P"]
    assert request.messages[0] == {"role": "system", "content": CONFIG.nlg.system_prompt}
    assert "mensagem_de_referencia" in request.messages[1]["content"]


@pytest.mark.parametrize(
    ("candidate", "accepted"),
    [
        ("Show! Posso confirmar sua aula na terça, 10/02 às 19:00?", True),
        ("Posso confirmar sua aula na terça às 19:00?", False),  # lost the date
        ("Sua aula está confirmada na terça, 10/02 às 19:00.", False),  # no longer asks
        ("", False),
        (None, False),
        ("Posso confirmar 10/02 às 19:00? " + "x" * 700, False),
    ],
)
def test_phrasing_is_used_only_when_it_keeps_the_facts(
    candidate: str | None, accepted: bool
) -> None:
    request = nlg_request("Confirma sua aula experimental na terça, 10/02 às 19:00? (sim/não)")
    chosen = fallback_or_nlg(candidate, request, CONFIG.nlg)
    assert chosen == (candidate if accepted else request.fallback)


@pytest.mark.parametrize(
    ("text", "asked", "expected"),
    [
        (
            "quero agendar experimental. Paulo, 50 anos, iniciante",
            None,
            {"nome": "Paulo", "idade": 50, "nivel": "iniciante"},
        ),
        (
            "terca q vem as 8 da noite",
            "date",
            {"desired_date": "2026-02-10", "desired_time": "20:00"},
        ),
        ("nao, prefiro as 18hrs", "confirmation", {"desired_time": "18:00", "confirmed": False}),
        ("paulo", "nome", {"nome": "Paulo"}),
        ("vinte e nove", "idade", {"idade": 29}),
        ("28, quanto é o plano 2x?", "idade", {"idade": 28}),
        ("nunca", "nivel", {"nivel": "iniciante"}),
        ("qui", "date", {"desired_date": "2026-02-05"}),
        ("as 8", "time", {"desired_time": "20:00"}),
        ("às 7", "time", {"desired_time": "07:00"}),
        (
            "dia 17, 19h, me chamo Lia",
            "date",
            {"nome": "Lia", "desired_date": "2026-02-17", "desired_time": "19:00"},
        ),
        ("ele é iniciante. vcs emprestam raquete?", "nivel", {"nivel": "iniciante"}),
    ],
)
def test_every_field_in_any_order_with_the_asked_field_first(
    text: str, asked: str | None, expected: dict[str, object]
) -> None:
    ext = extract_trial_fields(text, now=NOW, tz=TZ, asked=asked, valid_times=CONFIG.times)
    assert ext.model_dump(exclude_none=True) == expected


def test_someone_else_booking_is_exposed() -> None:
    ext = extract_trial_fields(
        "sou a Ana, queria marcar pra minha filha Sofia, 6 anos, iniciante, terça 10/02 18h",
        now=NOW,
        tz=TZ,
        asked=None,
        valid_times=CONFIG.times,
    )
    who = (ext.nome, ext.idade, ext.contact_name, ext.for_someone_else)
    assert who == ("Sofia", 6, "Ana", True)
    assert (ext.desired_date, ext.desired_time) == ("2026-02-10", "18:00")


def test_the_writer_fields_merge_only_into_a_slice_that_has_them() -> None:
    class SliceWithWriter(TrialState):
        contact_name: str | None = None
        for_someone_else: bool | None = None

    extraction = TrialExtraction(nome="Sofia", contact_name="Ana", for_someone_else=True)
    merged = merge_trial(SliceWithWriter(), extraction)
    assert (merged.nome, merged.contact_name, merged.for_someone_else) == ("Sofia", "Ana", True)
    assert merge_trial(TrialState(), extraction).nome == "Sofia"


def test_the_following_tuesday_is_after_the_slice_date() -> None:
    ext = extract_trial_fields(
        "da pra remarcar pra terca seguinte no mesmo horario?",
        now=NOW,
        tz=TZ,
        asked=None,
        reference_date="2026-02-10",
    )
    assert (ext.desired_date, ext.desired_time) == ("2026-02-17", None)


# What the person said about themselves before the booking started


def _memory(*turns: tuple[str, str, datetime]) -> MemoryView:
    """The memory triage keeps after ``turns`` of (turn id, message, when), as the trial reads
    it."""
    state: MemoryState | None = None
    for turn_id, text, at in turns:
        state, _ = remember(
            state, [(f"m-{turn_id}", text)], turn_id=turn_id, now=at, tz=TZ, expecting=None
        )
    assert state is not None
    return MemoryView.model_validate(state.model_dump(mode="json"))


def _starting(text: str, memory: MemoryView, turn_id: str = "t9") -> TrialExtraction:
    current = extract_trial_fields(text, now=NOW, tz=TZ, asked=None)
    return with_memory(
        current, memory, turn_id=turn_id, now=NOW, window=timedelta(hours=2), starting=True
    )


def test_age_and_level_said_before_the_booking_are_kept() -> None:
    # Asked the FAQ first ("sou iniciante total, 52 anos, pode?"), then asked to book: the
    # booking starts with what they already told.
    earlier = "boa tarde! tenho 52 anos e sou iniciante total, tem turma terça às 19h?"
    ext = _starting("beleza, quero marcar. Sou o Marcos", _memory(("t1", earlier, NOW)))
    assert (ext.nome, ext.idade, ext.nivel) == ("Marcos", 52, "iniciante")
    assert (ext.desired_date, ext.desired_time) == (None, None)


def test_the_booking_message_wins_over_what_was_said_before() -> None:
    memory = _memory(("t1", "jogo faz 3 anos, tem turma intermediaria?", NOW))
    assert _starting("quero agendar, sou avançado", memory).nivel == "avancado"


def test_facts_about_someone_else_do_not_become_the_writers() -> None:
    # The age of a grandson asked about first is not the age of the grandfather who books.
    memory = _memory(
        ("t1", "meu neto de 6 anos pode jogar?", NOW),
        ("t2", "entendi. entao quero marcar pra mim, me chamo Otto", NOW),
    )
    ext = _starting("entendi. entao quero marcar pra mim, me chamo Otto", memory, "t2")
    assert (ext.nome, ext.idade, ext.for_someone_else) == ("Otto", None, False)


def test_only_recent_facts_fill_a_booking_that_starts() -> None:
    memory = _memory(("t1", "tenho 70 anos", NOW - timedelta(hours=10)))
    assert _starting("quero marcar", memory).idade is None
    memory = _memory(("t1", "tenho 45 anos", NOW - timedelta(minutes=30)))
    assert _starting("quero marcar", memory).idade == 45
    current = extract_trial_fields("quero marcar", now=NOW, tz=TZ, asked=None)
    later = with_memory(
        current, memory, turn_id="t9", now=NOW, window=timedelta(hours=2), starting=False
    )
    assert later.idade is None


def test_what_the_memory_noted_this_turn_corrects_the_joined_reading() -> None:
    # A burst read as one text gives the first age; the memory read the correction after it.
    state, noted = remember(
        None,
        [("m1", "oi! me chamo Iara, tenho 355 anos"), ("m2", "35* kkk"), ("m3", "foi mal")],
        turn_id="t1",
        now=NOW,
        tz=TZ,
        expecting=None,
    )
    assert noted["corrected"] == ["idade"]
    memory = MemoryView.model_validate(state.model_dump(mode="json"))
    current = extract_trial_fields(
        "oi! me chamo Iara, tenho 355 anos\n35* kkk\nfoi mal", now=NOW, tz=TZ, asked=None
    )
    assert current.idade == 355
    ext = with_memory(
        current, memory, turn_id="t1", now=NOW, window=timedelta(hours=2), starting=False
    )
    assert (ext.nome, ext.idade) == ("Iara", 35)


@pytest.mark.parametrize(
    ("text", "day"),
    [
        # A span alone is a rough time: the class day nearest to where it ends.
        ("pode ser daqui a três semanas?", "2026-02-24"),
        ("em 12 dias", "2026-02-17"),
        # A weekday or a date said with it is taken as said.
        ("daqui a duas semanas, na sexta", "2026-02-20"),
        ("dia 20", "2026-02-20"),
    ],
)
def test_a_span_alone_lands_on_the_class_day(text: str, day: str) -> None:
    found = extract_trial_fields(text, now=NOW, tz=TZ, asked=None, class_weekday=CONFIG.weekday)
    assert found.desired_date == day


@pytest.mark.parametrize(
    ("text", "day"),
    [
        # A week named alone: the class day of that week.
        ("dá pra ser semana que vem de manhã?", "2026-02-10"),
        ("pode ser na próxima semana", "2026-02-10"),
        # This week's class day has passed: no day.
        ("ainda essa semana, se der", None),
        # A weekday said with the week is taken as said.
        ("na quinta da semana que vem", "2026-02-12"),
    ],
)
def test_a_week_alone_lands_on_its_class_day(text: str, day: str | None) -> None:
    found = extract_trial_fields(text, now=NOW, tz=TZ, asked=None, class_weekday=CONFIG.weekday)
    assert found.desired_date == day


def test_a_time_pointed_back_to_is_the_one_said_before() -> None:
    # The hour was asked about as a question; "nesse horário" books it.
    memory = _memory(("t1", "vocês têm turma às 7 da manhã?", NOW - timedelta(minutes=5)))
    text = "ótimo, quero a experimental nesse horário, dia 10"
    assert points_back(text, None, CONFIG)
    current = extract_trial_fields(text, now=NOW, tz=TZ, asked=None)
    ext = with_memory(
        current,
        memory,
        turn_id="t2",
        now=NOW,
        window=timedelta(hours=2),
        starting=True,
        points_back=True,
    )
    assert (ext.desired_date, ext.desired_time) == ("2026-02-10", "07:00")
    # Not pointed back to, the hour asked about is no request.
    assert _starting("ótimo, quero a experimental dia 10", memory, "t2").desired_time is None
    # A booked class's "mesmo horário" is its own (the reschedule keeps it), not the memory's.
    booked = TrialState(stage="booked", desired_date="2026-02-10", desired_time="19:00")
    assert not points_back("passa pra semana seguinte, mesmo horário", booked, CONFIG)
