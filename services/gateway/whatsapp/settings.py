"""The WhatsApp Cloud API channel's settings: the ``WHATSAPP_*`` names Meta's set-up fixes.

Kept apart from ``shared.settings`` because only the gateway reads them, and an empty value
counts as unset (a blank line in ``.env`` must not become an empty secret that signs nothing).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.tenants import Tenant

META_GRAPH = "https://graph.facebook.com"


class WhatsAppSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WHATSAPP_", env_file=".env", extra="ignore")

    verify_token: str | None = Field(
        default=None,
        description=(
            "Verify token of the webhook handshake (`GET /webhooks/whatsapp`); unset: the "
            "handshake answers 403."
        ),
    )
    app_secret: str | None = Field(
        default=None,
        description=(
            "App secret that signs webhooks (`X-Hub-Signature-256`); unset: unsigned bodies "
            "are accepted (a warning at start)."
        ),
    )
    access_token: str | None = Field(
        default=None,
        description=(
            "Graph API bearer token (a system user's token); unset: WhatsApp replies fail "
            "and `/healthz` says so."
        ),
    )
    phone_number_id: str | None = Field(
        default=None,
        description=(
            "Sending number for a conversation whose id names none (ids are "
            "`wa:<phone_number_id>:<wa_id>`)."
        ),
    )
    graph_base_url: str = Field(
        default=META_GRAPH, description="Graph API base URL (tests point it at a local fake)."
    )
    api_version: str = Field(default="v24.0", description="Graph API version in the request path.")
    max_body_bytes: int = Field(
        default=3 * 1024 * 1024, description="Larger webhook bodies get 413."
    )
    mark_read: bool = Field(
        default=False,
        description=(
            'When a turn starts, and when a fragment ("oi") starts the longer burst wait, '
            'mark the person\'s message read and show "typing…".'
        ),
    )
    timeout_s: float = Field(default=10.0, description="Timeout of one Graph API request.")
    send_attempts: int = Field(
        default=4, ge=1, description="Attempts per message on throttling or transient errors."
    )
    retry_base_ms: int = Field(
        default=500, ge=1, description="First retry backoff (doubles, jittered)."
    )
    retry_max_ms: int = Field(
        default=8000, ge=1, description="Longest backoff; a longer `Retry-After` gives up at once."
    )
    delivery_ttl_s: int = Field(
        default=7 * 24 * 3600,
        description="How long delivery records and send claims are kept (7 days).",
    )

    @field_validator("verify_token", "app_secret", "access_token", "phone_number_id", mode="before")
    @classmethod
    def blank_is_unset(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value


class WhatsAppTenant(BaseModel):
    """A tenant's ``whatsapp:`` section in ``tenants.yaml``: its business numbers (which route
    a webhook to it), app secret and access token."""

    model_config = ConfigDict(extra="forbid")

    phone_number_ids: list[Annotated[str, StringConstraints(min_length=1)]] = Field(min_length=1)
    app_secret: str | None = None
    access_token: str | None = None


def numbers_of(section: WhatsAppTenant) -> list[str]:
    return section.phone_number_ids


def whatsapp_for(tenant: Tenant) -> WhatsAppSettings:
    """A tenant's channel settings: the ``WHATSAPP_*`` environment for a deployment of one;
    with several, each tenant's own secret, token and first number from the tenants file
    (a tenant without ``whatsapp`` has none: the environment's are no one tenant's)."""
    settings = WhatsAppSettings()
    if not tenant.id:
        return settings
    own = tenant.channels.get("whatsapp")
    return settings.model_copy(
        update={
            "app_secret": own.app_secret if own else None,
            "access_token": own.access_token if own else None,
            "phone_number_id": own.phone_number_ids[0] if own else None,
        }
    )
