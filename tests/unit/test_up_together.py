"""``orquestra up --together``: which services share a process, and how that process runs."""

from __future__ import annotations

import pytest

from orquestra.up import parse_together, together_child


def test_groups_come_in_the_registrys_order_and_refuse_what_cannot_run_together() -> None:
    assert parse_together(["trial,triage", "scheduler, merger"]) == [
        ("triage", "trial"),
        ("merger", "scheduler"),
    ]
    with pytest.raises(ValueError, match="two or more"):
        parse_together(["trial"])
    with pytest.raises(ValueError, match="two or more"):
        parse_together(["trial,nope"])
    with pytest.raises(ValueError, match="trial named in two groups"):
        parse_together(["triage,trial", "trial,faq"])


def test_workers_run_as_python_m_services_and_with_the_gateway_as_the_gateway() -> None:
    workers = together_child(("triage", "trial"), 1, 8000)
    assert (workers.label, workers.module, workers.argv) == (
        "triage+trial#1", "services", ["triage", "trial"],
    )  # fmt: skip
    served = together_child(("gateway", "triage", "trial"), 2, 8000)
    assert served.label == "gateway+triage+trial#2"
    assert served.module == "services.gateway"
    assert served.argv == ["--port", "8000", "--with", "triage,trial", "--reuse-port"]
