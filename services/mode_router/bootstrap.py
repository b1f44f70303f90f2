"""The first mode of a conversation, chosen deterministically.

The seed's problem: an inbound "Oi, vi uma vaga de anestesia com vocês" that starts in discovery
makes the assistant look inattentive. So: a campaign's conversation inherits the campaign's mode;
an inbound first message with an interest pattern (pack ``bootstrap.interest_patterns``) starts in
``interest_mode`` (oferta); anything else starts in the conservative ``default_mode`` (discovery).
An unknown campaign mode falls through to the next rules instead of failing.
"""

from __future__ import annotations

from services.mode_router.config import ModesConfig
from services.mode_router.intents import first_match, match_form
from services.mode_router.types import ConversationMode


def bootstrap_mode(
    primeira_mensagem: str,
    origem: str,
    campaign_mode: str | None = None,
    *,
    config: ModesConfig,
) -> ConversationMode:
    """The initial mode; ``origem`` is "inbound", "campaign:<id>" or "manual"."""
    if origem.startswith("campaign:") and campaign_mode:
        try:
            return ConversationMode(campaign_mode)
        except ValueError:
            pass
    if origem == "inbound":
        text = match_form(primeira_mensagem, config.text_form)
        if first_match(text, config.bootstrap.interest_patterns) is not None:
            return config.bootstrap.interest_mode
    return config.bootstrap.default_mode


def get_mode_source(origem: str, campaign_id: str | None = None) -> str:
    """The persisted ``source``: "inbound", "campaign:<id>" or "manual".

    An origin given as "campaign" plus a separate id becomes "campaign:<id>", the form
    ``bootstrap_mode`` recognises; any other origin is kept as is.
    """
    if origem == "campaign" and campaign_id:
        return f"campaign:{campaign_id}"
    return origem
