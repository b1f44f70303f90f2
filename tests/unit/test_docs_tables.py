"""The docs' tables of services and streams are generated from the specs and kept current."""

from __future__ import annotations

from dataclasses import replace

from orquestra import docs
from orquestra.cli import main
from services.registry import SPECS


def test_the_architecture_tables_are_current() -> None:
    """Fails when a spec changed without `orquestra docs tables` being run."""
    current = docs.DOC.read_text(encoding="utf-8")
    assert docs.render(current, SPECS) == current, "run `uv run orquestra docs tables`"
    assert main(["docs", "tables", "--check"]) == 0


def test_a_changed_spec_makes_the_tables_drift() -> None:
    current = docs.DOC.read_text(encoding="utf-8")
    renamed = [replace(spec, publishes=(*spec.publishes, "enrollments")) for spec in SPECS]
    drifted = docs.render(current, renamed)
    assert drifted != current
    assert "`enrollments`" in drifted
    assert docs.render(drifted, SPECS) == current
