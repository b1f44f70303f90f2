"""The Evolution API channel's settings (``EVOLUTION_*``) and a tenant's ``evolution:`` section.

An empty value counts as unset (a blank line in ``.env`` must not become an empty secret). With
no ``EVOLUTION_WEBHOOK_SECRET`` every webhook is refused: Evolution signs nothing, and its body
names the instance and carries its API key, so an open webhook would let anyone who knows an
instance's name speak as any of its customers.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic_settings import NoDecode, SettingsConfigDict

from services.gateway.channels.rest import RestSending
from shared.tenants import Tenant

NAME = "evolution"


def _names(value: object) -> object:
    """``EVOLUTION_INSTANCE=a,b`` (the environment) or a list (the tenants file)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class EvolutionSettings(RestSending):
    model_config = SettingsConfigDict(env_prefix="EVOLUTION_", env_file=".env", extra="ignore")

    url: str | None = Field(default=None, description="Evolution API base URL (sendText).")
    api_key: str | None = Field(default=None, description="Sent as the `apikey` header.")
    # NoDecode: the environment gives "a,b", not JSON.
    instance: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="The instance names served (comma-separated); a webhook of another is dropped.",
    )
    webhook_secret: str | None = Field(
        default=None,
        description="The webhook's jwt_key (HS256 bearer) or its X-Webhook-Token header; unset: "
        "every webhook is refused.",
    )
    max_body_bytes: int = Field(
        default=8 * 1024 * 1024, description="Larger webhooks get 413 (base64 media)."
    )

    @field_validator("url", "api_key", "webhook_secret", mode="before")
    @classmethod
    def blank_is_unset(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("instance", mode="before")
    @classmethod
    def comma_separated(cls, value: object) -> object:
        return _names(value)


class EvolutionTenant(BaseModel):
    """A tenant's ``evolution:`` section in ``tenants.yaml``: its instances (which route a
    webhook to it), API key, webhook secret and, when it has its own server, the URL."""

    model_config = ConfigDict(extra="forbid")

    instances: list[Annotated[str, StringConstraints(min_length=1)]] = Field(min_length=1)
    api_key: str | None = None
    webhook_secret: str | None = None
    url: str | None = None


def instances_of(section: EvolutionTenant) -> list[str]:
    return section.instances


def evolution_for(tenant: Tenant) -> EvolutionSettings:
    """A tenant's settings: the environment for a deployment of one; with several, its own
    instances, key and secret from the tenants file (the environment's URL unless it has its
    own; a tenant without the section has none of the rest: the environment's are no one
    tenant's)."""
    settings = EvolutionSettings()
    if not tenant.id:
        return settings
    own = tenant.channels.get(NAME)
    if not isinstance(own, EvolutionTenant):
        return settings.model_copy(update={"instance": [], "api_key": None, "webhook_secret": None})
    return settings.model_copy(
        update={
            "instance": own.instances,
            "api_key": own.api_key,
            "webhook_secret": own.webhook_secret,
            "url": own.url or settings.url,
        }
    )
