"""Domain packs: everything business-specific (texts, keywords, rules) as YAML.

A pack is a folder of YAML files, one per concern (``business.yaml``, ``texts.yaml``,
``triage.yaml``, ``faq.yaml``, ``modes.yaml``...). Each top-level key of each file is a
*section*. The loader only merges files into a dict of sections; each service validates the
section it owns with its own pydantic model (``pack.section("faq", FaqConfig)``), so adding a
field to one service's section never touches another service.

A text may state a fact another section holds by reference: ``{trial.min_age}`` in an FAQ
answer is replaced at load time by the value of ``min_age`` in the ``trial`` section (a list
reads "07:00, 18:00 e 20:00", with ``business.list_last_separator``). So the FAQ cannot say
one minimum age while the booking rules apply another. A dotted reference that names nothing
fails the load; plain ``{nome}`` placeholders are left for the service that says the text.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel

PACKS_DIR = Path(__file__).resolve().parent.parent / "packs"

M = TypeVar("M", bound=BaseModel)

# Sections that several files may contribute keys to (each service keeps its texts beside
# its own section); every other section belongs to exactly one file.
MERGED_SECTIONS = frozenset({"texts"})

# ``{section.key}`` or deeper (``{trial.gate.context_ttl_minutes}``): a fact of the pack.
REFERENCE = re.compile(r"\{([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+)\}")


class PackError(ValueError):
    """A pack is missing, malformed, or lacks a section a service needs."""


class Pack:
    """A loaded domain pack: named sections of plain data plus text lookup."""

    def __init__(self, name: str, sections: dict[str, Any]) -> None:
        self.name = name
        self.sections = sections
        self._models: dict[tuple[str, type], BaseModel] = {}

    def section(self, name: str, model: type[M]) -> M:
        """The section ``name`` validated as ``model`` (cached)."""
        key = (name, model)
        if key not in self._models:
            if name not in self.sections:
                raise PackError(f"pack {self.name!r} has no section {name!r}")
            self._models[key] = model.model_validate(self.sections[name])
        return self._models[key]  # type: ignore[return-value]

    def has(self, name: str) -> bool:
        return name in self.sections

    def has_text(self, key: str) -> bool:
        return key in self.sections.get("texts", {})

    def text(self, key: str, seed: str = "", **values: Any) -> str:
        """A user-facing text by key, one of its variants, placeholders filled.

        Variants are picked by a hash of ``seed`` (usually the turn id): deterministic for a
        given turn, so replays and tests see the same text, yet varied across turns.
        """
        texts = self.sections.get("texts", {})
        if key not in texts:
            raise PackError(f"pack {self.name!r} has no text {key!r}")
        variants = texts[key]
        if isinstance(variants, str):
            variants = [variants]
        index = int(hashlib.blake2s(f"{key}|{seed}".encode(), digest_size=4).hexdigest(), 16)
        template = str(variants[index % len(variants)])
        return template.format(**values) if values else template


def _read_folder(folder: Path) -> dict[str, Any]:
    sections: dict[str, Any] = {}
    files = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml"))
    if not files:
        raise PackError(f"no YAML files in pack folder {folder}")
    for path in files:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise PackError(f"{path}: invalid YAML: {exc}") from exc
        if not isinstance(data, dict):
            raise PackError(f"{path}: top level must be a mapping of sections")
        for key, value in data.items():
            if key in MERGED_SECTIONS and isinstance(value, dict):
                merged = sections.setdefault(key, {})
                clash = merged.keys() & value.keys()
                if clash:
                    raise PackError(f"{path}: {key} {sorted(clash)} defined twice in the pack")
                merged.update(value)
                continue
            if key in sections:
                raise PackError(f"{path}: section {key!r} is defined twice in the pack")
            sections[key] = value
    return sections


def _show(value: Any, last_separator: str) -> str:
    if isinstance(value, list):
        items = [str(item) for item in value]
        if len(items) <= 1:
            return "".join(items)
        return ", ".join(items[:-1]) + last_separator + items[-1]
    return str(value)


def _lookup(sections: dict[str, Any], path: str) -> Any:
    node: Any = sections
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise PackError(f"reference {{{path}}} names nothing in the pack")
        node = node[part]
    if isinstance(node, dict):
        raise PackError(f"reference {{{path}}} names a section, not a value")
    return node


def resolve_references(sections: dict[str, Any]) -> dict[str, Any]:
    """Every ``{section.key}`` in every string replaced by that value of the pack."""
    last = str(sections.get("business", {}).get("list_last_separator", ", "))

    def fill(node: Any) -> Any:
        if isinstance(node, str):
            return REFERENCE.sub(lambda m: _show(_lookup(sections, m[1]), last), node)
        if isinstance(node, list):
            return [fill(item) for item in node]
        if isinstance(node, dict):
            return {key: fill(value) for key, value in node.items()}
        return node

    return {name: fill(section) for name, section in sections.items()}


@cache
def load_pack(name_or_path: str) -> Pack:
    """Load a pack by name (a folder under ``packs/``) or by path to a folder."""
    candidate = Path(name_or_path)
    folder = candidate if candidate.is_dir() else PACKS_DIR / name_or_path
    if not folder.is_dir():
        known = sorted(p.name for p in PACKS_DIR.iterdir() if p.is_dir())
        raise PackError(f"unknown pack {name_or_path!r}; known packs: {', '.join(known)}")
    return Pack(folder.name, resolve_references(_read_folder(folder)))
