"""The channel adapters: each one is a ``Channel``, and only WhatsApp has a reply window."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from redis.asyncio import Redis

from services.gateway.channels.base import Channel, ChannelSet
from services.gateway.channels.console import ConsoleChannel
from services.gateway.channels.http import HttpChannel
from services.gateway.history import History
from services.gateway.whatsapp.gateway import WhatsApp
from services.gateway.whatsapp.settings import WhatsAppSettings
from shared.contracts import MetaView
from shared.keys import Keys
from shared.logs import get_logger
from shared.lua import register
from shared.pack import load_pack
from shared.reply_window import window_expires_at
from shared.settings import Settings

T0 = datetime(2026, 2, 10, 18, 0, tzinfo=UTC)


@pytest.fixture
async def built() -> AsyncIterator[list[Any]]:
    """One of each adapter, built as the gateway builds them (no connection is opened)."""
    redis, keys, settings = Redis(), Keys("t:"), Settings(_env_file=None)
    scripts = register(redis)
    history = History(redis, scripts, keys, 100, 3600, 3600)
    runtime = SimpleNamespace(
        redis=redis, keys=keys, pack=load_pack("ctsmash"), log=get_logger("t"), tz=None
    )
    http = HttpChannel(redis, scripts, keys, settings, 60, 4, 100, history)
    whatsapp = WhatsApp(runtime, WhatsAppSettings(_env_file=None, app_secret="s"))  # type: ignore[arg-type]
    yield [http, ConsoleChannel(redis, keys, 60), whatsapp]
    await http.aclose()
    await whatsapp.aclose()


def protocol_members() -> dict[str, Any]:
    declared = {n: v for n, v in vars(Channel).items() if not n.startswith("_")}
    return {**dict.fromkeys(Channel.__annotations__), **declared}


def test_every_adapter_has_what_the_channel_protocol_asks(built: list[Any]) -> None:
    for adapter in built:
        for member, declared in protocol_members().items():
            assert hasattr(adapter, member), (type(adapter).__name__, member)
            if callable(declared):
                ours = getattr(adapter, member)
                assert inspect.iscoroutinefunction(ours) == inspect.iscoroutinefunction(declared)
        assert adapter.limits.max_text > 0
    channels = ChannelSet(built)
    assert sorted(channels) == ["console", "http", "whatsapp"]


def test_only_whatsapp_has_a_reply_window_and_the_4096_character_limit_is_its(
    built: list[Any],
) -> None:
    channels = ChannelSet(built)
    assert channels.reply_window("whatsapp") == timedelta(hours=24)
    assert channels["whatsapp"].limits.max_text == 4096
    assert channels["whatsapp"].conversation_prefix == "wa:"
    assert channels.reply_window("http") is None
    assert channels.reply_window("console") is None
    assert channels.reply_window("unknown") is None


def test_a_message_without_a_reply_window_stores_none_and_is_never_closed() -> None:
    assert window_expires_at(T0, None) is None
    assert (
        MetaView.model_validate({"window_expires_at": None}).window_closed(T0 + timedelta(days=30))
        is False
    )
    stored = window_expires_at(T0, timedelta(hours=24))
    assert stored == "2026-02-11T18:00:00+00:00"
    assert not MetaView.model_validate({"window_expires_at": stored}).window_closed(
        T0 + timedelta(hours=23)
    )
    assert MetaView.model_validate({"window_expires_at": stored}).window_closed(
        T0 + timedelta(hours=24)
    )
