"""The businesses one deployment serves: ``ORQ_TENANTS=tenants.yaml``, or one from the settings.

Without ``ORQ_TENANTS`` a deployment serves one business from today's settings, and its tenant
id is empty: every key keeps its name (no migration). With it, each tenant has its own pack,
tokens and channels; conversations live under ``{tenant~conversation}`` keys (``~`` is
not allowed in conversation ids, so no two tenants' keys can meet), and ``ORQ_ADMIN_TOKEN``
becomes the operator's token, valid for every tenant that a request names.

A tenant's entry also holds one section per channel it uses (``whatsapp:``, and whatever other
channels the gateway registers), each named after its channel. ``shared/`` knows no channel:
the gateway passes its channels' sections (``TenantSection``: the section's model and the ids in
it that route an inbound webhook to its tenant) to ``tenants_of``, which validates each and
refuses an id two tenants claim. A process that passes none (a worker, which never reads a
channel's settings) keeps the sections as they are, unread.

A bad file is refused at start with every problem it has, each naming the tenant and the field
(``orquestra tenants check`` prints the same). A tenant whose *pack* does not load is not a
configuration error of the deployment: that tenant is disabled, said at start and in
``/healthz``, and the others serve.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from shared.pack import Pack, PackError, load_pack
from shared.settings import Settings

TENANT_ID = r"^[a-z0-9-]{1,32}$"
# Joins a tenant id and a conversation id inside a key's hash tag; never part of either.
SEPARATOR = "~"
# The header an operator (``ORQ_ADMIN_TOKEN``) names the tenant of a request with.
TENANT_HEADER = "x-orq-tenant"


class TenantsError(ValueError):
    """``ORQ_TENANTS`` names a file that is missing or does not describe valid tenants."""


@dataclass(frozen=True)
class TenantSection:
    """A channel's part of a tenant's entry: its model, and the ids in it that route an
    inbound webhook to its tenant (business numbers, instance names...), which must each be
    one tenant's."""

    model: type[BaseModel]
    routes: Callable[[Any], Iterable[str]]
    # What one route id is, for messages ("WhatsApp number").
    label: str


# A channel's name → its section (the gateway's channel registry gives these).
Sections = Mapping[str, TenantSection]


class TenantConfig(BaseModel):
    """One business of the deployment, as ``tenants.yaml`` lists it. Any other key is a
    channel's section (a mapping), kept in ``channels``."""

    model_config = ConfigDict(extra="allow")

    id: Annotated[str, StringConstraints(pattern=TENANT_ID)]
    pack: Annotated[str, StringConstraints(min_length=1)]
    admin_token: Annotated[str, StringConstraints(min_length=16)]
    api_token: Annotated[str, StringConstraints(min_length=16)] | None = None

    @property
    def channels(self) -> dict[str, Any]:
        """The channel sections, by channel name (raw mappings until ``with_sections``)."""
        return dict(self.model_extra or {})


class TenantsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenants: list[TenantConfig] = Field(min_length=1)


def with_sections(
    configs: list[TenantConfig], sections: Sections | None, data: object
) -> tuple[list[TenantConfig], list[str]]:
    """Each tenant's channel sections validated by their channel's model; the configs with
    the models in place, and the problems. A key that is no channel's section (a mapping, and
    with ``sections`` a known channel's) is an unknown field: a misspelt ``api_tokn`` silently
    ignored would leave the tenant without its token."""
    problems: list[str] = []
    for index, config in enumerate(configs):
        for name, raw in config.channels.items():
            section = sections.get(name) if sections is not None else None
            if not isinstance(raw, dict) or (sections is not None and section is None):
                problems.append(f"tenant {config.id!r} {name}: unknown field")
                continue
            if section is None:
                continue
            try:
                setattr(config, name, section.model.model_validate(raw))
            except ValidationError as exc:
                problems += [
                    f"{_where(('tenants', index, name, *e['loc']), data)}: {e['msg']}"
                    for e in exc.errors()
                ]
    return configs, problems


def _clashes(
    tenants: list[TenantConfig], operator_token: str | None, sections: Sections
) -> list[str]:
    """Ids, tokens and each channel's route ids must each name one tenant only."""
    problems: list[str] = []
    seen_ids: set[str] = set()
    tokens: dict[str, str] = {}
    routes: dict[tuple[str, str], str] = {}
    if operator_token:
        tokens[operator_token] = "the operator (ORQ_ADMIN_TOKEN)"
    for tenant in tenants:
        if tenant.id in seen_ids:
            problems.append(f"tenant {tenant.id!r} is listed twice")
        seen_ids.add(tenant.id)
        for field, token in (("admin_token", tenant.admin_token), ("api_token", tenant.api_token)):
            if token is None:
                continue
            if token in tokens:
                problems.append(
                    f"tenant {tenant.id!r}: {field} is also the token of {tokens[token]}"
                )
            tokens.setdefault(token, f"tenant {tenant.id!r}")
        for name, value in tenant.channels.items():
            section = sections.get(name)
            if section is None or not isinstance(value, section.model):  # not read, or invalid
                continue
            for route in section.routes(value):
                owner = routes.setdefault((name, route), tenant.id)
                if owner != tenant.id:
                    problems.append(
                        f"tenant {tenant.id!r}: {section.label} {route} is also tenant {owner!r}'s"
                    )
    return problems


def _where(location: tuple[int | str, ...], data: object) -> str:
    """``tenants[1].admin_token`` as ``tenant 'beach' admin_token`` when the id is known."""
    if len(location) >= 2 and location[0] == "tenants" and isinstance(location[1], int):
        index = location[1]
        rows = data.get("tenants") if isinstance(data, dict) else None
        row = rows[index] if isinstance(rows, list) and index < len(rows) else None
        name = row.get("id") if isinstance(row, dict) else None
        who = f"tenant {name!r}" if isinstance(name, str) else f"tenant #{index + 1}"
        rest = ".".join(str(part) for part in location[2:])
        return f"{who} {rest}".strip()
    return ".".join(str(part) for part in location) or "the file"


def parse_tenants(
    text: str, source: str, operator_token: str | None, sections: Sections | None = None
) -> list[TenantConfig]:
    """The tenants ``text`` describes, or a ``TenantsError`` listing every problem. With
    ``sections``, each tenant's channel sections are validated (see the module's doc)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TenantsError(f"{source}: invalid YAML: {exc}") from exc
    try:
        parsed = TenantsFile.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_where(e['loc'], data)}: {e['msg']}" for e in exc.errors()]
        raise TenantsError(f"{source}: " + "; ".join(problems)) from exc
    configs, problems = with_sections(parsed.tenants, sections, data)
    problems += _clashes(configs, operator_token, sections or {})
    if problems:
        raise TenantsError(f"{source}: " + "; ".join(problems))
    return configs


def read_tenants(settings: Settings, sections: Sections | None = None) -> list[TenantConfig] | None:
    """The tenants of ``ORQ_TENANTS``; None without it (one business, today's settings)."""
    if not settings.tenants:
        return None
    path = Path(settings.tenants)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TenantsError(f"ORQ_TENANTS={settings.tenants}: cannot read it: {exc}") from exc
    return parse_tenants(text, str(path), settings.admin_token, sections)


class Tenant(BaseModel):
    """A tenant as a process runs it: its id, settings and pack (None: disabled, with why)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    id: str
    settings: Settings
    pack: Pack | None
    problem: str | None = None
    # Its channel sections by channel name (each channel's model, when ``tenants_of`` was
    # given the sections); empty for the single business, whose channels read the environment.
    channels: dict[str, Any] = Field(default_factory=dict)


def tenants_of(settings: Settings, sections: Sections | None = None) -> list[Tenant]:
    """Every tenant a process serves, each with its own settings (pack and tokens).

    Raises ``TenantsError`` for a bad ``ORQ_TENANTS`` file (the deployment cannot start), and
    ``PackError`` for the single tenant's bad pack (as before); a bad pack of one of several
    tenants disables that tenant only.
    """
    configs = read_tenants(settings, sections)
    if configs is None:
        return [Tenant(id="", settings=settings, pack=load_pack(settings.pack))]
    tenants = []
    for config in configs:
        own = settings.model_copy(
            update={
                "pack": config.pack,
                "admin_token": config.admin_token,
                "api_token": config.api_token,
            }
        )
        try:
            pack: Pack | None = load_pack(config.pack)
            problem = None
        except PackError as exc:
            pack, problem = None, f"tenant {config.id!r} is disabled: its pack does not load: {exc}"
        tenants.append(
            Tenant(
                id=config.id,
                settings=own,
                pack=pack,
                problem=problem,
                channels={name: getattr(config, name) for name in config.channels},
            )
        )
    return tenants


def qualified(tenant: str, conversation_id: str) -> str:
    """A conversation id as keys carry it: the tenant's, or itself for the single tenant."""
    return f"{tenant}{SEPARATOR}{conversation_id}" if tenant else conversation_id
