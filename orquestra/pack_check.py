"""What ``orquestra pack check`` finds wrong in a domain pack, as a list of problems. No output.

A pack is read by several services, each validating only its own section when it starts, so a
broken pack used to show up as one service failing at startup, or worse, as a text said wrong
to a customer. The check loads the pack once and reports, per kind:

- ``load``: the YAML, a duplicated section or a ``{section.key}`` reference naming nothing;
- ``section``: a section its service would refuse (a typo, a value out of range);
- ``missing_text``: a text a service may say that the pack lacks;
- ``placeholder``: a ``{name}`` no service fills, or a malformed template;
- ``contradiction``: a text that states a rule's fact differently from the rule (a time of the
  class weekday that is not a class time).
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from services.registry import SPECS
from services.trial.flow import text_keys as trial_text_keys
from services.trial.models import TrialState
from services.trial.replies import base_values
from shared.pack import Pack, PackError, load_pack
from shared.trial.config import TrialConfig, load_trial_config

_HH_MM = re.compile(r"\b(?:[01]\d|2[0-3]):[0-5]\d\b")
# Placeholders the trial fills besides base_values (one day's times in a list of options; a
# limit on the time as said back, and the first or last class beyond which there is none; a
# day refused).
_TRIAL_EXTRA_PLACEHOLDERS = frozenset({"horas", "limite", "borda", "recusada"})


@dataclass(frozen=True)
class Problem:
    kind: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.message}"


def _validators() -> dict[str, Callable[[Pack], object]]:
    """Section → how its service validates it (the same call the service makes at start-up),
    as the services' specs declare it."""
    return {section: check for spec in SPECS for section, check in spec.pack_validators().items()}


def _variants(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


def _placeholders(template: str) -> set[str]:
    """The ``{name}`` fields of a template (ValueError when it is malformed)."""
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


def _check_sections(pack: Pack) -> list[Problem]:
    problems: list[Problem] = []
    for name, validate in _validators().items():
        if not pack.has(name):
            continue
        try:
            validate(pack)
        except (ValidationError, PackError, ValueError) as exc:
            problems.append(Problem("section", name, str(exc).splitlines()[0]))
    return problems


def _check_trial(pack: Pack, config: TrialConfig) -> list[Problem]:
    texts: dict[str, Any] = pack.sections.get("texts", {})
    problems = [
        Problem("missing_text", key, "the trial may say it; the pack has no such text")
        for key in sorted(trial_text_keys(config) - texts.keys())
    ]
    now = datetime(2000, 1, 1, tzinfo=UTC)
    filled = set(base_values(TrialState(), now_local=now, config=config))
    filled |= _TRIAL_EXTRA_PLACEHOLDERS
    for key, value in sorted(texts.items()):
        if not key.startswith("trial_"):
            continue
        for template in _variants(value):
            try:
                unknown = _placeholders(template) - filled
            except ValueError as exc:
                problems.append(Problem("placeholder", key, f"malformed template: {exc}"))
                continue
            if unknown:
                problems.append(
                    Problem("placeholder", key, f"nothing fills {sorted(unknown)} in {template!r}")
                )
    return problems


def _said_as_written(pack: Pack) -> list[tuple[str, str]]:
    """(where, text) of every text a person may read: pack texts and FAQ answers."""
    said = [
        (f"texts.{key}", template)
        for key, value in pack.sections.get("texts", {}).items()
        for template in _variants(value)
    ]
    for entry in pack.sections.get("faq", {}).get("entries", []) or []:
        if isinstance(entry, dict) and isinstance(entry.get("answer"), str):
            said.append((f"faq.{entry.get('id', '?')}", entry["answer"]))
    return said


def _check_faq_answers(pack: Pack) -> list[Problem]:
    problems: list[Problem] = []
    for entry in pack.sections.get("faq", {}).get("entries", []) or []:
        answer = entry.get("answer") if isinstance(entry, dict) else None
        if isinstance(answer, str) and re.search(r"\{[^}]*\}", answer):
            where = f"faq.{entry.get('id', '?')}"
            problems.append(Problem("placeholder", where, "an answer is said as written"))
    return problems


def _check_class_times(pack: Pack, config: TrialConfig) -> list[Problem]:
    """A text naming the class weekday may only give class times for it."""
    weekday = config.weekday_name.lower()
    problems: list[Problem] = []
    for where, text in _said_as_written(pack):
        if weekday not in text.lower():
            continue
        wrong = sorted(set(_HH_MM.findall(text)) - set(config.times))
        if wrong:
            message = (
                f"says {wrong} for a {weekday} class; the class times are {config.times} "
                "(write {trial.times} instead)"
            )
            problems.append(Problem("contradiction", where, message))
    return problems


def check_pack(name_or_path: str) -> list[Problem]:
    """Every problem found in the pack (empty: the pack is consistent)."""
    try:
        pack = load_pack(name_or_path)
    except PackError as exc:
        return [Problem("load", name_or_path, str(exc))]
    problems = _check_sections(pack) + _check_faq_answers(pack)
    if pack.has("trial") and not any(p.where == "trial" for p in problems):
        config = load_trial_config(pack)
        problems += _check_trial(pack, config) + _check_class_times(pack, config)
    return problems


def models_checked() -> list[str]:
    """The sections the check validates (for the command's help)."""
    return sorted(_validators())
