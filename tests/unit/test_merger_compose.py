"""The merger's composition policy, as a pure function."""

from __future__ import annotations

from shared.compose import MergerConfig, compose, split_bubbles
from shared.contracts import Part, TurnPlan

CONFIG = MergerConfig()


def part(source: str, text: str | None, asks: bool = False) -> Part:
    return Part(turn_id="t", conversation_id="c", source=source, text=text, asks_question=asks)


def plan(expected: list[str], inline: list[Part] | None = None) -> TurnPlan:
    return TurnPlan(turn_id="t", conversation_id="c", expected=expected, parts=inline or [])


def fallback(source: str) -> str:
    return f"[sem resposta de {source}]"


def test_inline_first_then_configured_order_then_router() -> None:
    parts = {
        "faq": part("faq", "Ficamos na Rua das Palmeiras, 250."),
        "trial": part("trial", "Anotei seu nome, Ana."),
        "mode_router": part("mode_router", None),
    }
    result = compose(
        plan(["faq", "trial", "mode_router"], [part("triage", "Oi!")]), parts, CONFIG, fallback
    )
    assert result.text.split("\n\n") == [
        "Oi!",
        "Anotei seu nome, Ana.",
        "Ficamos na Rua das Palmeiras, 250.",
    ]
    assert result.sources == ["triage", "trial", "faq"]


def test_answers_come_before_the_next_step_question() -> None:
    """The booking's re-ask closes the reply, after the answers to the person's questions."""
    parts = {
        "faq": part("faq", "Ficamos na Rua das Palmeiras, 250."),
        "trial": part("trial", "Qual é o seu nome?", asks=True),
        "mode_router": part("mode_router", "Quer ver os horários?", asks=True),
    }
    result = compose(
        plan(["trial", "faq", "mode_router"], [part("triage", "Oi!")]), parts, CONFIG, fallback
    )
    assert result.text.split("\n\n") == [
        "Oi!",
        "Ficamos na Rua das Palmeiras, 250.",
        "Qual é o seu nome?",
    ]
    assert result.sources == ["triage", "faq", "trial"]


def unknown(text: str) -> Part:
    return Part(
        turn_id="t", conversation_id="c", source="faq", text=text, data={"unknown_only": True}
    )


def test_unknown_about_a_statement_is_left_out_next_to_an_answer() -> None:
    parts = {
        "trial": part("trial", "Bora marcar! Qual é o seu nome?", asks=True),
        "faq": unknown("Essa eu não sei te responder."),
    }
    result = compose(plan(["trial", "faq"]), parts, CONFIG, fallback)
    assert result.text == "Bora marcar! Qual é o seu nome?"
    assert result.dropped == ["faq"]


def test_unknown_alone_is_still_said() -> None:
    parts = {"faq": unknown("Essa eu não sei te responder.")}
    result = compose(plan(["faq"]), parts, CONFIG, fallback)
    assert result.text == "Essa eu não sei te responder."
    assert result.dropped == []


def test_unknown_about_a_real_question_is_kept_next_to_an_answer() -> None:
    parts = {
        "trial": part("trial", "Qual é o seu nome?", asks=True),
        "faq": part("faq", "Essa eu não sei te responder."),
    }
    result = compose(plan(["trial", "faq"]), parts, CONFIG, fallback)
    assert result.text.split("\n\n") == ["Essa eu não sei te responder.", "Qual é o seu nome?"]


def test_router_question_dropped_when_another_part_asks() -> None:
    parts = {
        "trial": part("trial", "Qual é o seu nome?", asks=True),
        "mode_router": part("mode_router", "Quer ver os horários?", asks=True),
    }
    result = compose(plan(["trial", "mode_router"]), parts, CONFIG, fallback)
    assert "Quer ver os horários?" not in result.text
    assert result.dropped == ["mode_router"]


def test_router_question_kept_when_nobody_else_asks() -> None:
    parts = {
        "faq": part("faq", "Custa R$ 280 por mês."),
        "mode_router": part("mode_router", "Quer ver os horários?", asks=True),
    }
    result = compose(plan(["faq", "mode_router"]), parts, CONFIG, fallback)
    assert result.text.endswith("Quer ver os horários?")


def test_missing_parts_get_fallback_lines_in_their_place() -> None:
    parts = {"faq": part("faq", "Abrimos às 6h.")}
    result = compose(plan(["trial", "faq", "mode_router"]), parts, CONFIG, fallback)
    assert result.text.split("\n\n") == ["[sem resposta de trial]", "Abrimos às 6h."]
    assert result.missing == ["trial"]


def test_no_plan_means_triage_missing() -> None:
    result = compose(None, {}, CONFIG, fallback)
    assert result.text == "[sem resposta de triage]" and result.missing == ["triage"]


def test_repeated_greeting_removed() -> None:
    inline = [part("triage", "Olá! Tudo bem?")]
    parts = {"faq": part("faq", "Olá! Ficamos na Vila Mariana.")}
    result = compose(plan(["faq"], inline), parts, CONFIG, fallback)
    assert result.text == "Olá! Tudo bem?\n\nFicamos na Vila Mariana."


def test_bubbles_respect_the_limit_and_keep_every_word() -> None:
    text = "\n\n".join(["Parágrafo um. " * 30, "Dois " * 200, "x" * 250])
    bubbles = split_bubbles(text, 100)
    assert all(0 < len(b) <= 100 for b in bubbles)
    assert "".join(bubbles).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(
        " ", ""
    )


def test_short_reply_is_one_bubble() -> None:
    assert split_bubbles("Oi!\n\nTudo bem?", 4096) == ["Oi!\n\nTudo bem?"]
