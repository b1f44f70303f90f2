"""Which questions the base keeps failing, so the business knows what to add to it."""

from __future__ import annotations

from collections import Counter, defaultdict

from shared.nlu.normalize import normalize


def top_unanswered(questions: list[str], n: int) -> list[tuple[str, int]]:
    """The ``n`` most frequent unanswered questions, grouped by normalized text.

    "Vcs vendem raquete?" and "vcs vendem raquete" are one question. Each group is shown as
    its most frequent spelling (the first seen on a tie), which reads better to an operator
    than the normalized form. Ties in count keep first-seen order.
    """
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    for question in questions:
        key = normalize(question)
        if key:
            spellings[key][question.strip()] += 1
    groups = [(c.most_common(1)[0][0], c.total()) for c in spellings.values()]
    groups.sort(key=lambda group: -group[1])
    return groups[: max(n, 0)]
