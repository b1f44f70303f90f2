"""Bursts as people really send them (issue 14, item 6), through the real gateway over HTTP.

A greeting or opener alone ("oi", "queria saber") makes the gateway wait longer for the rest, so
messages seconds apart that end in a question become one turn and one answer; a complete
message waits only the short window. Which wait applied is read from the journal's
``turn.started`` entries (``quiet_ms``, ``quiet_rule``), never from a clock. The gaps between
posts are the input itself: a person typing.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from shared.settings import Settings
from tests.system import System

DEFAULTS = Settings()
PLAN_3X_PRICE = "R$ 360"  # the pack's answer to the price of the 3x-a-week plan


def cid(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:8]}"


def started(system: System, conversation: str) -> list[dict]:
    return [e for e in system.journal(conversation) if e["event"] == "turn.started"]


@pytest.fixture(scope="module")
def system(redis_url: str, prefix: str) -> Iterator[System]:
    """The bot with the default windows (other tests shorten the longer one), its own prefix."""
    env = {"ORQ_BURST_FRAGMENT_MS": str(DEFAULTS.burst_fragment_ms)}
    with System.up(redis_url, f"{prefix}bursts:", **env) as running:
        yield running


def test_fragments_seconds_apart_ending_in_a_question_get_one_answer(system: System) -> None:
    conversation = cid("fragments")
    for text in ("oi", "queria saber", "quanto custa o plano de 3x?"):
        assert system.post(conversation, text).status_code == 202
        if text != "quanto custa o plano de 3x?":
            time.sleep(1.5)  # the input: a person typing the next message
    reply = system.next_reply(conversation)
    (turn,) = started(system, conversation)
    assert turn["messages"] == ["oi", "queria saber", "quanto custa o plano de 3x?"]
    assert (turn["quiet_ms"], turn["quiet_rule"]) == (DEFAULTS.burst_window_ms, "window")
    assert PLAN_3X_PRICE in reply["text"]
    assert system.replies(conversation, after=reply["cursor"])["replies"] == []


def test_a_booking_typed_in_pieces_is_one_turn_that_asks_for_nothing_given(
    system: System,
) -> None:
    """A request, then who, then the level, seconds apart: none of the pieces asks anything,
    so the gateway waits after each and the bot reads them together."""
    conversation = cid("pieces")
    pieces = (
        "boa tarde",
        "gostaria de agendar uma experimental",
        "aqui é o Heitor Campos, 38 anos",
        "jogo faz uns meses, intermediário",
    )
    for text in pieces:
        assert system.post(conversation, text).status_code == 202
        if text != pieces[-1]:
            time.sleep(1.5)  # the input: a person typing the next piece
    reply = system.next_reply(conversation)
    (turn,) = started(system, conversation)
    assert turn["messages"] == list(pieces)
    assert (turn["quiet_ms"], turn["quiet_rule"]) == (DEFAULTS.burst_fragment_ms, "fragment")
    trial = system.conversation(conversation)["trial"]
    assert (trial["nome"], trial["idade"], trial["nivel"]) == ("Heitor Campos", 38, "intermediario")
    assert "nome" not in reply["text"].lower() and "anos" not in reply["text"].lower()
    assert system.replies(conversation, after=reply["cursor"])["replies"] == []


def test_a_question_typed_before_its_subject_is_one_question(system: System) -> None:
    """ "quanto custa" / "a aula experimental": the price of the trial class, one answer."""
    conversation = cid("unfinished")
    for text in ("quanto custa", "a aula experimental"):
        assert system.post(conversation, text).status_code == 202
        if text == "quanto custa":
            time.sleep(1.5)  # the input: a person typing the subject
    reply = system.next_reply(conversation)
    (turn,) = started(system, conversation)
    assert turn["messages"] == ["quanto custa", "a aula experimental"]
    assert "gratuita" in reply["text"]
    assert PLAN_3X_PRICE not in reply["text"]
    assert system.replies(conversation, after=reply["cursor"])["replies"] == []


def test_a_follow_up_question_gets_the_part_it_asks_about(system: System) -> None:
    """ "e sábado?" after the opening hours: the Saturday hours, not the paragraph again."""
    conversation = cid("follow-up")
    whole = system.say(conversation, "que horas vcs abrem?")
    part = system.say(conversation, "e sábado?", after=whole["cursor"])["text"]
    whole = whole["text"]
    assert "segunda a sexta" in whole and "sábados" in whole
    assert "sábados" in part and "segunda a sexta" not in part


def test_a_complete_question_alone_waits_only_the_short_window(system: System) -> None:
    conversation = cid("complete")
    reply = system.say(conversation, "quanto custa o plano de 3x?")
    (turn,) = started(system, conversation)
    assert (turn["quiet_ms"], turn["quiet_rule"]) == (DEFAULTS.burst_window_ms, "window")
    assert PLAN_3X_PRICE in reply["text"]


def test_a_greeting_alone_waits_the_fragment_window_then_is_answered(system: System) -> None:
    conversation = cid("greeting")
    system.say(conversation, "olá, tudo bem?")
    (turn,) = started(system, conversation)
    assert (turn["quiet_ms"], turn["quiet_rule"]) == (DEFAULTS.burst_fragment_ms, "fragment")


def test_a_control_word_after_a_fragment_starts_at_once(system: System) -> None:
    conversation = cid("control")
    assert system.post(conversation, "oi").status_code == 202
    reply = system.say(conversation, "quero falar com um atendente")
    (turn,) = started(system, conversation)
    assert turn["messages"] == ["oi", "quero falar com um atendente"]
    assert (turn["quiet_ms"], turn["quiet_rule"]) == (0, "control")
    assert system.replies(conversation, after=reply["cursor"])["replies"] == []


@pytest.fixture(scope="module")
def uncoalesced(redis_url: str, prefix: str) -> Iterator[System]:
    """A system with both windows 0, as the benchmark runs it (its own key prefix)."""
    env = {"ORQ_BURST_WINDOW_MS": "0", "ORQ_BURST_FRAGMENT_MS": "0"}
    with System.up(redis_url, f"{prefix}nowin:", **env) as running:
        yield running


def test_both_windows_zero_make_each_message_its_own_turn(uncoalesced: System) -> None:
    conversation = cid("off")
    first = uncoalesced.say(conversation, "oi")
    uncoalesced.say(conversation, "queria saber", after=first["cursor"])
    turns = started(uncoalesced, conversation)
    assert [t["messages"] for t in turns] == [["oi"], ["queria saber"]]
    assert {(t["quiet_ms"], t["quiet_rule"]) for t in turns} == {(0, "window")}
