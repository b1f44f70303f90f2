"""The Chatwoot Agent Bot channel's settings (``CHATWOOT_*``) and a tenant's ``chatwoot:`` section.

An empty value counts as unset. Without ``CHATWOOT_URL`` and ``CHATWOOT_BOT_TOKEN`` the channel
is off (its webhook answers 404: a deployment that does not use Chatwoot takes no ``cw:``
conversation from anyone). ``CHATWOOT_WEBHOOK_SECRET`` is optional because older Chatwoot sends
no signature; when it is set, every webhook must be signed with it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic_settings import SettingsConfigDict

from services.gateway.channels.rest import RestSending
from shared.tenants import Tenant

NAME = "chatwoot"


class ChatwootSettings(RestSending):
    model_config = SettingsConfigDict(env_prefix="CHATWOOT_", env_file=".env", extra="ignore")

    url: str | None = Field(default=None, description="Chatwoot's base URL.")
    bot_token: str | None = Field(
        default=None, description="The agent bot's access token (sent as `api_access_token`)."
    )
    webhook_secret: str | None = Field(
        default=None, description="The agent bot's webhook secret; set: signatures are required."
    )
    signature_max_age_s: int = Field(
        default=300, ge=0, description="Oldest X-Chatwoot-Timestamp accepted (0: any)."
    )
    max_body_bytes: int = Field(default=1024 * 1024, description="Larger webhooks get 413.")

    @field_validator("url", "bot_token", "webhook_secret", mode="before")
    @classmethod
    def blank_is_unset(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @property
    def on(self) -> bool:
        return bool(self.url and self.bot_token)


class ChatwootTenant(BaseModel):
    """A tenant's ``chatwoot:`` section in ``tenants.yaml``: its Chatwoot accounts (which route
    a webhook to it), its agent bot's token and webhook secret, and its Chatwoot's URL when it
    is not the environment's."""

    model_config = ConfigDict(extra="forbid")

    accounts: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)
    bot_token: Annotated[str, StringConstraints(min_length=1)]
    webhook_secret: str | None = None
    url: str | None = None


def accounts_of(section: ChatwootTenant) -> list[str]:
    return [str(account) for account in section.accounts]


def chatwoot_for(tenant: Tenant) -> ChatwootSettings:
    """A tenant's settings: the environment for a deployment of one; with several, its own
    token and secret from the tenants file (the environment's URL unless it has its own; a
    tenant without the section has the channel off)."""
    settings = ChatwootSettings()
    if not tenant.id:
        return settings
    own = tenant.channels.get(NAME)
    if not isinstance(own, ChatwootTenant):
        return settings.model_copy(update={"bot_token": None, "webhook_secret": None})
    return settings.model_copy(
        update={
            "bot_token": own.bot_token,
            "webhook_secret": own.webhook_secret,
            "url": own.url or settings.url,
        }
    )
