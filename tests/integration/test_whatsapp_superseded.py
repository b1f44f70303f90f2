"""WhatsApp's delivery of a reply to a turn that another turn superseded, on a real Redis: the
Graph API is an in-process ``httpx`` transport that records what it receives."""

from __future__ import annotations

import uuid

import httpx
from redis.asyncio import Redis

from services.gateway.channels.base import SUPERSEDED
from services.gateway.whatsapp.channel import WhatsAppChannel
from services.gateway.whatsapp.graph import GraphClient
from services.gateway.whatsapp.records import ChannelRecords
from services.gateway.whatsapp.settings import WhatsAppSettings
from shared.contracts import Reply
from shared.keys import Keys
from shared.logs import get_logger


class Graph:
    """Answers every message with a new wamid and keeps the texts sent."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = request.read().decode()
        self.texts.append(body)
        return httpx.Response(200, json={"messages": [{"id": f"wamid.{len(self.texts)}"}]})


def channel_for(redis: Redis, keys: Keys, graph: Graph) -> WhatsAppChannel:
    settings = WhatsAppSettings(
        access_token="token", phone_number_id="5511", graph_base_url="http://graph.test"
    )
    client = GraphClient(settings)
    client.http = httpx.AsyncClient(
        base_url="http://graph.test", transport=httpx.MockTransport(graph.handle)
    )
    records = ChannelRecords(redis, keys, 3600)
    return WhatsAppChannel(redis, keys, settings, client, records, None, get_logger("t"))


async def test_a_reply_whose_turn_lost_the_lease_to_another_is_not_sent(
    redis: Redis, unique_prefix: str
) -> None:
    keys = Keys(unique_prefix)
    conversation = f"wa:5511:5599{uuid.uuid4().int % 10**8:08d}"
    graph = Graph()
    channel = channel_for(redis, keys, graph)
    late = Reply(
        turn_id="t-late", conversation_id=conversation, channel="whatsapp", text="a", bubbles=["a"]
    )
    current = late.model_copy(update={"turn_id": "t-now", "text": "b", "bubbles": ["b"]})
    await redis.set(keys.lease(conversation), "t-now", ex=60)

    assert (await channel.deliver(late)).status == SUPERSEDED
    assert graph.texts == []
    assert (await channel.deliver(current)).status == "sent"
    assert len(graph.texts) == 1 and '"b"' in graph.texts[0]
    # A staff member's message answers no turn: sent whoever holds the lease.
    staff = late.model_copy(update={"turn_id": "agent-1", "author": "agent", "agent": "Ana"})
    assert (await channel.deliver(staff)).status == "sent"
    assert len(graph.texts) == 2
