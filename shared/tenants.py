"""The businesses one deployment serves: ``ORQ_TENANTS=tenants.yaml``, or one from the settings.

Without ``ORQ_TENANTS`` a deployment serves one business from today's settings, and its tenant
id is empty: every key keeps its name (no migration). With it, each tenant has its own pack,
tokens and WhatsApp numbers; conversations live under ``{tenant~conversation}`` keys (``~`` is
not allowed in conversation ids, so no two tenants' keys can meet), and ``ORQ_ADMIN_TOKEN``
becomes the operator's token, valid for every tenant that a request names.

A bad file is refused at start with every problem it has, each naming the tenant and the field
(``orquestra tenants check`` prints the same). A tenant whose *pack* does not load is not a
configuration error of the deployment: that tenant is disabled, said at start and in
``/healthz``, and the others serve.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from shared.pack import Pack, PackError, load_pack
from shared.settings import Settings

TENANT_ID = r"^[a-z0-9-]{1,32}$"
# Joins a tenant id and a conversation id inside a key's hash tag; never part of either.
SEPARATOR = "~"
# The header an operator (``ORQ_ADMIN_TOKEN``) names the tenant of a request with.
TENANT_HEADER = "x-orq-tenant"


class TenantsError(ValueError):
    """``ORQ_TENANTS`` names a file that is missing or does not describe valid tenants."""


class TenantWhatsApp(BaseModel):
    model_config = ConfigDict(extra="forbid")

    phone_number_ids: list[Annotated[str, StringConstraints(min_length=1)]] = Field(min_length=1)
    app_secret: str | None = None
    access_token: str | None = None


class TenantConfig(BaseModel):
    """One business of the deployment, as ``tenants.yaml`` lists it."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, StringConstraints(pattern=TENANT_ID)]
    pack: Annotated[str, StringConstraints(min_length=1)]
    admin_token: Annotated[str, StringConstraints(min_length=16)]
    api_token: Annotated[str, StringConstraints(min_length=16)] | None = None
    whatsapp: TenantWhatsApp | None = None


class TenantsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenants: list[TenantConfig] = Field(min_length=1)


def _clashes(tenants: list[TenantConfig], operator_token: str | None) -> list[str]:
    """Ids, tokens and WhatsApp numbers must each name one tenant only."""
    problems: list[str] = []
    seen_ids: set[str] = set()
    tokens: dict[str, str] = {}
    numbers: dict[str, str] = {}
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
        for number in tenant.whatsapp.phone_number_ids if tenant.whatsapp else []:
            if number in numbers:
                problems.append(
                    f"tenant {tenant.id!r}: WhatsApp number {number} is also tenant "
                    f"{numbers[number]!r}'s"
                )
            numbers.setdefault(number, tenant.id)
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


def parse_tenants(text: str, source: str, operator_token: str | None) -> list[TenantConfig]:
    """The tenants ``text`` describes, or a ``TenantsError`` listing every problem."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TenantsError(f"{source}: invalid YAML: {exc}") from exc
    try:
        parsed = TenantsFile.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_where(e['loc'], data)}: {e['msg']}" for e in exc.errors()]
        raise TenantsError(f"{source}: " + "; ".join(problems)) from exc
    if problems := _clashes(parsed.tenants, operator_token):
        raise TenantsError(f"{source}: " + "; ".join(problems))
    return parsed.tenants


def read_tenants(settings: Settings) -> list[TenantConfig] | None:
    """The tenants of ``ORQ_TENANTS``; None without it (one business, today's settings)."""
    if not settings.tenants:
        return None
    path = Path(settings.tenants)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TenantsError(f"ORQ_TENANTS={settings.tenants}: cannot read it: {exc}") from exc
    return parse_tenants(text, str(path), settings.admin_token)


class Tenant(BaseModel):
    """A tenant as a process runs it: its id, settings and pack (None: disabled, with why)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    id: str
    settings: Settings
    pack: Pack | None
    problem: str | None = None
    whatsapp: TenantWhatsApp | None = None


def tenants_of(settings: Settings) -> list[Tenant]:
    """Every tenant a process serves, each with its own settings (pack and tokens).

    Raises ``TenantsError`` for a bad ``ORQ_TENANTS`` file (the deployment cannot start), and
    ``PackError`` for the single tenant's bad pack (as before); a bad pack of one of several
    tenants disables that tenant only.
    """
    configs = read_tenants(settings)
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
            Tenant(id=config.id, settings=own, pack=pack, problem=problem, whatsapp=config.whatsapp)
        )
    return tenants


def qualified(tenant: str, conversation_id: str) -> str:
    """A conversation id as keys carry it: the tenant's, or itself for the single tenant."""
    return f"{tenant}{SEPARATOR}{conversation_id}" if tenant else conversation_id
