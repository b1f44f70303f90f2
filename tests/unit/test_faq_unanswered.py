"""The operator's list of questions the base keeps failing."""

from __future__ import annotations

from services.faq.unanswered import top_unanswered


def test_groups_by_normalized_text_and_counts() -> None:
    questions = [
        "Vcs vendem raquete?",
        "tem wifi",
        "vcs vendem raquete",
        "VCS VENDEM RAQUETE???",
        "tem wi-fi?",
        "Tem wifi?",
        "vcs vendem raquete",
    ]
    assert top_unanswered(questions, 5) == [
        ("vcs vendem raquete", 4),
        ("tem wifi", 2),
        ("tem wi-fi?", 1),
    ]


def test_ties_keep_first_seen_order_and_n_limits() -> None:
    questions = ["b?", "a?", "c?", "a", "b"]
    assert top_unanswered(questions, 2) == [("b?", 2), ("a?", 2)]


def test_empty_questions_and_non_positive_n() -> None:
    assert top_unanswered(["", "  ", "?!"], 3) == []
    assert top_unanswered(["tem wifi"], 0) == []
    assert top_unanswered([], 3) == []
