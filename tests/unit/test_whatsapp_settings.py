"""The channel's settings: Meta's names, blanks mean unset, every one documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.gateway.whatsapp.settings import WhatsAppSettings

CONFIGURATION = (
    Path(__file__).resolve().parents[2] / "docs" / "reference" / "configuration.md"
).read_text()


def test_settings_come_from_the_whatsapp_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHATSAPP_VERIFY_TOKEN", "meatyhamhock")
    monkeypatch.setenv("WHATSAPP_APP_SECRET", "s3cret")
    monkeypatch.setenv("WHATSAPP_ACCESS_TOKEN", "EAAG")
    monkeypatch.setenv("WHATSAPP_PHONE_NUMBER_ID", "106540352242922")
    monkeypatch.setenv("WHATSAPP_GRAPH_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("WHATSAPP_API_VERSION", "v23.0")
    monkeypatch.setenv("WHATSAPP_MARK_READ", "true")
    s = WhatsAppSettings(_env_file=None)
    assert (s.verify_token, s.app_secret, s.access_token) == ("meatyhamhock", "s3cret", "EAAG")
    assert (s.phone_number_id, s.graph_base_url, s.api_version) == (
        "106540352242922",
        "http://127.0.0.1:9",
        "v23.0",
    )
    assert s.mark_read is True


def test_defaults_and_blank_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHATSAPP_APP_SECRET", "  ")
    s = WhatsAppSettings(_env_file=None)
    assert s.app_secret is None and s.verify_token is None and s.access_token is None
    assert s.graph_base_url == "https://graph.facebook.com" and s.mark_read is False
    assert s.max_body_bytes == 3 * 1024 * 1024


def test_the_configuration_reference_documents_every_setting() -> None:
    for name in WhatsAppSettings.model_fields:
        assert f"`WHATSAPP_{name.upper()}`" in CONFIGURATION, name
