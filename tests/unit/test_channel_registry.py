"""A channel is one folder and one line: what the registry gives the rest of the gateway, and
that no code outside a channel's folder names it (issue 31)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services.gateway import auth
from services.gateway.channels.registry import (
    CHANNELS,
    MAX_TEXT,
    SECTIONS,
    of_conversation,
    routes_of,
)
from shared.settings import Settings
from shared.tenants import Tenant

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "services/gateway/channels/registry.py"
# The channels whose names must stay inside their folders (and the registry's one line).
FOLDERS = {"evolution": "services/gateway/evolution", "chatwoot": "services/gateway/chatwoot"}
CODE = ("services", "shared", "orquestra", "bench")


def test_each_channel_declares_a_distinct_name_and_prefix() -> None:
    names = [spec.name for spec in CHANNELS]
    prefixes = [spec.conversation_prefix for spec in CHANNELS if spec.conversation_prefix]
    assert len(set(names)) == len(names) and len(set(prefixes)) == len(prefixes)
    assert min(spec.limits.max_text for spec in CHANNELS) == MAX_TEXT
    assert set(FOLDERS) <= set(SECTIONS)


@pytest.mark.parametrize(
    ("conversation_id", "channel", "writable"),
    [
        ("wa:106540352242922:5511987654321", "whatsapp", False),
        ("evo:recepcao:5511987654321", "evolution", False),
        ("cw:1:11791", "chatwoot", False),
        ("web:abc", None, True),
        ("5511987654321", None, True),
    ],
)
def test_a_conversation_is_its_channels_and_http_writes_are_the_channels_to_allow(
    conversation_id: str, channel: str | None, writable: bool
) -> None:
    spec = of_conversation(conversation_id)
    assert (spec.name if spec else None) == channel
    refusal = auth.write_refusal(conversation_id)
    assert (refusal is None) is writable
    if refusal is not None:
        assert refusal.status == 403 and "agent-messages" in refusal.reason


def test_a_tenants_sections_give_the_ids_that_route_its_webhooks() -> None:
    sections = {
        "whatsapp": SECTIONS["whatsapp"].model.model_validate({"phone_number_ids": ["1065"]}),
        "evolution": SECTIONS["evolution"].model.model_validate(
            {"instances": ["ct-recepcao"], "webhook_secret": "s"}
        ),
        "chatwoot": SECTIONS["chatwoot"].model.model_validate({"accounts": [3], "bot_token": "t"}),
    }
    tenant = Tenant(id="ct", settings=Settings(_env_file=None), pack=None, channels=sections)
    assert set(routes_of(tenant)) == {
        ("whatsapp", "1065"),
        ("evolution", "ct-recepcao"),
        ("chatwoot", "3"),
    }


def python_files() -> list[Path]:
    return [p for top in CODE for p in (ROOT / top).rglob("*.py") if ".venv" not in p.parts]


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_a_channel_is_named_only_in_its_folder_and_its_registry_line(name: str) -> None:
    word = re.compile(name, re.IGNORECASE)
    folder = ROOT / FOLDERS[name]
    outside = []
    for path in python_files():
        if folder in path.parents:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if word.search(line):
                outside.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert outside == [f"{REGISTRY.relative_to(ROOT)}:{line}" for line in registry_line(name)]


def registry_line(name: str) -> list[str]:
    lines = REGISTRY.read_text(encoding="utf-8").splitlines()
    return [f"{n}: {line.strip()}" for n, line in enumerate(lines, 1) if name in line.lower()]


def test_the_registry_names_each_such_channel_on_one_line() -> None:
    for name in FOLDERS:
        assert len(registry_line(name)) == 1, name
