"""The generated blocks of the reference pages (``orquestra docs reference``), each read from
the thing it documents rather than written beside it:

- configuration: every field of every pydantic-settings model under ``shared/`` and
  ``services/`` (a channel that adds its own ``settings.py`` shows up without a list to edit),
  and the tenants file's models;
- CLI: the ``orquestra`` argparse tree, every command and option;
- HTTP API: the gateway app's OpenAPI schema, every route and body model;
- bus: the AsyncAPI document ``orquestra asyncapi`` writes, every stream and payload.

Output is deterministic (no terminal width, no environment, no wall clock) so a test can
compare it with the committed pages.
"""

from __future__ import annotations

import argparse
import importlib
import json
import types
import typing
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

ROOT = Path(__file__).resolve().parent.parent


def _cell(text: object) -> str:
    """A Markdown table cell: a newline would end the row and a pipe the cell, except inside a
    code span, where Python-Markdown (MkDocs) reads a pipe as text and would show an escape."""
    parts = str(text).replace("\n", " ").split("`")
    return "`".join(part if odd else part.replace("|", "\\|") for odd, part in _alternate(parts))


def _alternate(parts: list[str]) -> list[tuple[bool, str]]:
    return [(index % 2 == 1, part) for index, part in enumerate(parts)]


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def _codes(union: str) -> str:
    """``a | b`` as two code spans: a pipe inside a code span would show its escape."""
    return " | ".join(f"`{part}`" for part in union.split(" | "))


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = [_row(header), "|" + "---|" * len(header)]
    lines.extend(_row(row) for row in rows)
    return "\n".join(lines)


# --- configuration ---------------------------------------------------------------------------


def settings_models() -> list[type[BaseSettings]]:
    """Every settings model of the code: each module under ``shared/`` and then ``services/``
    (in path order) that defines a ``BaseSettings`` subclass, wherever it is (a channel's
    settings show up without a list to edit)."""
    files = [
        path
        for folder in ("shared", "services")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "BaseSettings)" in path.read_text(encoding="utf-8")
    ]
    models: list[type[BaseSettings]] = []
    for path in files:
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseSettings)
                and value is not BaseSettings
                and value.__module__ == module.__name__
            ):
                models.append(value)
    return models


def type_name(annotation: Any) -> str:
    """A field's type as a reader writes it: ``int``, ``str | None``, ``"a" | "b"``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " | ".join(json.dumps(value) for value in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(arg) for arg in typing.get_args(annotation))
    if origin is typing.Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin is not None:
        args = ", ".join(type_name(arg) for arg in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def env_names(model: type[BaseSettings], name: str, field: FieldInfo) -> list[str]:
    """The environment variables that set ``name``: its aliases, else prefix + name."""
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return [str(choice) for choice in choices]
    if isinstance(alias, str):
        return [alias]
    prefix = model.model_config.get("env_prefix", "")
    return [f"{prefix}{name}".upper()]


def default_text(field: FieldInfo) -> str:
    if field.default_factory is not None:
        return "`" + json.dumps(field.default_factory(), ensure_ascii=False) + "`"  # type: ignore[call-arg]
    if field.default is PydanticUndefined:
        return "required"
    if field.default is None:
        return "unset"
    if isinstance(field.default, str):
        return f"`{field.default}`"
    return "`" + json.dumps(field.default, ensure_ascii=False) + "`"


def settings_rows(model: type[BaseSettings]) -> list[tuple[str, str, str, str]]:
    rows = []
    for name, field in model.model_fields.items():
        env = env_names(model, name, field)
        shown = f"`{env[0]}`" + (f" (or `{'`, `'.join(env[1:])}`)" if env[1:] else "")
        description = field.description or ""
        rows.append((shown, _codes(type_name(field.annotation)), default_text(field), description))
    return rows


def settings_tables() -> str:
    parts = []
    for model in settings_models():
        title = (model.__doc__ or "").strip().splitlines()[0] if model.__doc__ else ""
        where = f"`{model.__module__}.{model.__name__}`"
        parts.append(f"### {where}\n")
        if title:
            parts.append(f"{title}\n")
        rows = settings_rows(model)
        parts.append(_table(("variable", "type", "default", "meaning"), rows) + "\n")
    return "\n".join(parts).rstrip("\n")


def _model_rows(model: type[BaseModel]) -> list[tuple[str, str, str, str]]:
    rows = []
    for name, field in model.model_fields.items():
        rows.append(
            (
                f"`{name}`",
                _codes(type_name(field.annotation)),
                default_text(field),
                field.description or "",
            )
        )
    return rows


def tenants_file_table() -> str:
    """The tenants file's models, then each channel's section of a tenant's entry (its key in
    the entry is the channel's name)."""
    from services.gateway.channels.registry import SECTIONS
    from shared import tenants

    models: list[tuple[str, type[BaseModel]]] = [
        (f"`{tenants.TenantsFile.__name__}`", tenants.TenantsFile),
        (f"`{tenants.TenantConfig.__name__}`", tenants.TenantConfig),
    ]
    models += [(f"`{name}:` (`{s.model.__name__}`)", s.model) for name, s in SECTIONS.items()]
    parts = []
    for title, model in models:
        parts.append(f"**{title}**\n")
        parts.append(_table(("field", "type", "default", "meaning"), _model_rows(model)) + "\n")
    return "\n".join(parts).rstrip("\n")


# --- CLI ---------------------------------------------------------------------------------------


class _Formatter(argparse.HelpFormatter):
    """A fixed width, whatever the terminal: the page must not depend on who generated it."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=96, max_help_position=40)


def _commands(
    parser: argparse.ArgumentParser, path: str
) -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """(command path, its help line, its parser) for every command under ``parser``, depth
    first, in the order they were registered."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, child in action.choices.items():
            full = f"{path} {name}"
            yield full, helps.get(name, ""), child
            yield from _commands(child, full)


def _options(parser: argparse.ArgumentParser) -> list[tuple[str, str, str]]:
    formatter = _Formatter(parser.prog)
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        flags = ", ".join(f"`{flag}`" for flag in action.option_strings)
        if not flags:
            flags = f"`{action.metavar or action.dest}` (positional)"
        elif action.nargs != 0:
            metavar = formatter._format_args(
                action, formatter._get_default_metavar_for_optional(action)
            )
            flags += f" `{metavar}`"
        helped = formatter._expand_help(action) if action.help else ""
        default = action.default
        shown = "" if default in (None, False, argparse.SUPPRESS) else f"`{default}`"
        rows.append((flags, helped, shown))
    return rows


def cli_reference() -> str:
    from orquestra.cli import build_parser

    root = build_parser()
    parts = []
    for path, help_line, parser in _commands(root, "orquestra"):
        parser.formatter_class = _Formatter
        usage = parser.format_usage().removeprefix("usage: ").strip()
        parts.append(f"### `{path}`\n")
        if help_line:
            parts.append(f"{help_line[0].upper()}{help_line[1:]}.\n")
        if parser.description and parser.description != help_line:
            parts.append(f"{parser.description}\n")
        parts.append(f"```\n{usage}\n```\n")
        options = _options(parser)
        if options:
            parts.append(_table(("option", "what", "default"), options) + "\n")
    return "\n".join(parts).rstrip("\n")


# --- HTTP API --------------------------------------------------------------------------------


def openapi_document() -> dict[str, Any]:
    from services.gateway.app import create_app
    from shared.settings import Settings

    app = create_app(Settings(_env_file=None))  # type: ignore[call-arg]
    return app.openapi()


def _ref_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_ref_name(option) for option in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list[{_ref_name(schema.get('items', {}))}]"
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    return str(schema.get("type", "any"))


def _schema_rows(schema: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    required = set(schema.get("required", []))
    rows = []
    for name, prop in schema.get("properties", {}).items():
        default = (
            f"`{json.dumps(prop['default'], ensure_ascii=False)}`" if "default" in prop else ""
        )
        rows.append(
            (
                f"`{name}`",
                _codes(_ref_name(prop)),
                "yes" if name in required else default or "no",
                prop.get("description", ""),
            )
        )
    return rows


def http_reference() -> str:
    document = openapi_document()
    rows = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            params = ", ".join(
                f"`{p['name']}` ({p['in']})"
                for p in operation.get("parameters", [])
                if p["in"] != "header"
            )
            body = ""
            content = operation.get("requestBody", {}).get("content", {})
            for media in content.values():
                body = _codes(_ref_name(media.get("schema", {})))
            responses = ", ".join(sorted(operation.get("responses", {})))
            summary = operation.get("summary", "")
            description = (operation.get("description") or "").strip().split("\n\n")[0]
            # FastAPI names an operation after its function ("Post Message"): the docstring,
            # when there is one, says more.
            what = description or summary
            rows.append((f"`{method.upper()}`", f"`{path}`", what, params, body, responses))
    parts = [
        f"OpenAPI {document['openapi']}, `{document['info']['title']}` version "
        f"{document['info']['version']}: {len(rows)} operations.\n",
        _table(("method", "path", "what", "parameters", "body", "responses"), rows) + "\n",
        "### Schemas\n",
    ]
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        parts += _schema_section(name, schema)
    return "\n".join(parts).rstrip("\n")


def _schema_section(name: str, schema: dict[str, Any]) -> list[str]:
    """One JSON schema as a page section: its name, the first paragraph of its description,
    and its fields (or its values, for an enum)."""
    parts = [f"#### `{name}`\n"]
    if schema.get("description"):
        parts.append(schema["description"].strip().split("\n\n")[0] + "\n")
    rows = _schema_rows(schema)
    if rows:
        parts.append(_table(("field", "type", "required", "description"), rows) + "\n")
    elif "enum" in schema:
        parts.append("One of " + ", ".join(f"`{v}`" for v in schema["enum"]) + ".\n")
    return parts


# --- bus ---------------------------------------------------------------------------------------


def _resolve(document: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = document
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return dict(node)


def _payload_name(document: dict[str, Any], channel: dict[str, Any]) -> str:
    names = []
    for message in channel.get("messages", {}).values():
        resolved = _resolve(document, message["$ref"]) if "$ref" in message else message
        payload = resolved.get("payload", {})
        if "$ref" in payload:
            payload = _resolve(document, payload["$ref"]) | {
                "$name": payload["$ref"].rsplit("/", 1)[-1]
            }
        if "oneOf" in payload or "anyOf" in payload:
            names.extend(
                _ref_name(option) for option in payload.get("oneOf", payload.get("anyOf", []))
            )
        else:
            names.append(payload.get("$name") or payload.get("title") or _ref_name(payload))
    return ", ".join(f"`{name}`" for name in sorted(set(names)))


def bus_reference() -> str:
    from orquestra.asyncapi import build_document

    document = build_document()
    streams: dict[str, dict[str, Any]] = {}
    for channel in document["channels"].values():
        binding = channel.get("bindings", {}).get("redis", {})
        address = channel["address"]
        entry = streams.setdefault(address, {"groups": [], "payload": "", "description": ""})
        if binding.get("groupName"):
            entry["groups"].append(binding["groupName"])
        else:
            entry["description"] = channel.get("description", "")
        entry["payload"] = entry["payload"] or _payload_name(document, channel)
    rows = [
        (
            f"`{address}`",
            entry["payload"],
            entry["description"],
            ", ".join(f"`{g}`" for g in sorted(entry["groups"])) or "—",
        )
        for address, entry in sorted(streams.items())
    ]
    parts = [
        f"AsyncAPI {document['asyncapi']}, `{document['info']['title']}` version "
        f"{document['info']['version']}: {len(rows)} streams.\n",
        _table(("stream", "payload", "what, and who publishes it", "consumer groups"), rows) + "\n",
        "### Payloads\n",
    ]
    for name, schema in sorted(document["components"]["schemas"].items()):
        if ":" in name:  # a stream's union of payloads, listed in the table above
            continue
        parts += _schema_section(name, schema)
    return "\n".join(parts).rstrip("\n")
