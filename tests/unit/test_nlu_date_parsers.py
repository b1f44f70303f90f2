"""The labelled date/time expressions: the rules keep their accuracy, and the comparison with
dateparser (kept as a dev dependency for this measurement) runs."""

from __future__ import annotations

from tests.support.date_parsers import accuracy, dateparser_reading, load, rules


def test_the_rules_read_the_labelled_expressions() -> None:
    now, items = load()
    assert len(items) >= 60
    result = accuracy(rules, items, now)
    assert result["both"] >= 0.95, result["misses"]


def test_dateparser_is_read_in_the_labels_terms() -> None:
    now, _ = load()
    assert dateparser_reading("amanhã", now) == ("2026-02-06", None)
    assert dateparser_reading("18:30", now) == (None, "18:30")
    assert dateparser_reading("quanto custa?", now) == (None, None)
