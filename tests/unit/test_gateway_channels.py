"""The channel adapters: each registered one is a ``Channel`` built as the gateway builds it,
and only WhatsApp has a reply window."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from redis.asyncio import Redis

from services.gateway.channels.base import Channel, ChannelSet
from services.gateway.channels.registry import CHANNELS
from services.gateway.channels.spec import Parts
from services.gateway.history import History
from shared.contracts import MetaView
from shared.keys import Keys
from shared.logs import get_logger
from shared.lua import register
from shared.pack import load_pack
from shared.reply_window import window_expires_at
from shared.settings import Settings
from shared.tenants import Tenant

T0 = datetime(2026, 2, 10, 18, 0, tzinfo=UTC)


@pytest.fixture
async def built() -> AsyncIterator[list[Any]]:
    """One adapter of each registered channel, built as the gateway builds them (``spec.make``;
    no connection is opened)."""
    redis, keys, settings = Redis(), Keys("t:"), Settings(_env_file=None)
    scripts = register(redis)
    history = History(redis, scripts, keys, 100, 3600, 3600)
    pack = load_pack("ctsmash")
    runtime = SimpleNamespace(
        redis=redis,
        scripts=scripts,
        keys=keys,
        settings=settings,
        pack=pack,
        log=get_logger("t"),
        tz=None,
    )
    tenant = Tenant(id="", settings=settings, pack=pack)
    adapters = [spec.make(Parts(runtime, history, tenant)) for spec in CHANNELS]  # type: ignore[arg-type]
    yield adapters
    for adapter in adapters:
        await adapter.aclose()


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
    assert list(channels) == [spec.name for spec in CHANNELS]
    for spec in CHANNELS:
        adapter = channels[spec.name]
        assert adapter.limits == spec.limits
        assert adapter.conversation_prefix == spec.conversation_prefix


def test_only_whatsapp_has_a_reply_window_and_the_4096_character_limit_is_its(
    built: list[Any],
) -> None:
    channels = ChannelSet(built)
    assert channels.reply_window("whatsapp") == timedelta(hours=24)
    assert channels["whatsapp"].limits.max_text == 4096
    assert channels["whatsapp"].conversation_prefix == "wa:"
    assert [name for name in channels if channels.reply_window(name)] == ["whatsapp"]
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


def test_a_conversation_is_asked_of_the_adapter_whose_prefix_it_has(built: list[Any]) -> None:
    """A handoff is told to the conversation's own channel (by its id's prefix); an id of no
    prefixed channel (the HTTP channel takes any id) has none to tell."""
    channels = ChannelSet(built)
    for spec in CHANNELS:
        if spec.conversation_prefix:
            found = channels.of_conversation(f"{spec.conversation_prefix}1:2")
            assert found is not None and found.name == spec.name
    assert channels.of_conversation("web:abc") is None
