"""What a channel that sends through a provider's REST API shares (a webhook in, a POST out).

Such a channel takes webhooks in, sends each bubble of a reply with one POST to the provider,
once (``once.py``), and answers a turn made only of media with the pack's notices. The settings of
the sending (timeout, attempts, backoff, how long claims are kept) are the same fields under
each channel's own environment prefix.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

import httpx
from pydantic import Field
from pydantic_settings import BaseSettings

from services.gateway.channels.base import PlainChannel
from services.gateway.channels.notices import notice_kinds, notice_reply
from services.gateway.channels.once import Holder, Retry, Sent, send_once
from shared.contracts import Reply, Turn, utcnow
from shared.durability import ReplicaAck
from shared.service import Runtime
from shared.state import journal_entry


class RestSending(BaseSettings):
    """How a REST channel sends (a subclass sets its ``env_prefix``)."""

    timeout_s: float = Field(default=10.0, description="Timeout of one API request.")
    send_attempts: int = Field(default=4, ge=1, description="Attempts on 429, 5xx, no connection.")
    retry_base_ms: int = Field(default=500, ge=1, description="First retry backoff (doubles).")
    retry_max_ms: int = Field(default=8000, ge=1, description="Longest backoff.")
    delivery_ttl_s: int = Field(
        default=7 * 24 * 3600,
        description="How long send claims and the provider's message ids are kept.",
    )


class RestChannel(PlainChannel):
    """A channel's adapter that sends through ``base_url``; ``tag`` names its Redis keys."""

    name: str
    tag: ClassVar[str]
    writes_history = False

    def __init__(
        self, rt: Runtime, settings: RestSending, base_url: str, ack: ReplicaAck | None
    ) -> None:
        self.rt = rt
        self.ack = ack or ReplicaAck()
        self.keys = rt.keys
        self.redis = rt.redis
        self.http = httpx.AsyncClient(base_url=base_url, timeout=settings.timeout_s)
        self.retry = Retry(
            settings.send_attempts, settings.retry_base_ms / 1000, settings.retry_max_ms / 1000
        )
        self.delivery_ttl_s = settings.delivery_ttl_s
        # A sender that died mid-request frees its claim after its longest request and backoff.
        self.pending_ttl_s = int(settings.timeout_s + settings.retry_max_ms / 1000) + 10

    @property
    def health_key(self) -> str:
        return self.keys.channel_global(self.tag, "health")

    def own_answer(self, turn: Turn) -> tuple[Reply, str] | None:
        """A turn made only of photos, audios, locations... gets the pack's notices."""
        reply = notice_reply(turn, self.rt.pack, created_at=utcnow())
        if reply is None:
            return None
        event = f"{self.name}.notice"
        return reply, journal_entry("gateway", turn.turn_id, event, kinds=notice_kinds(turn))

    async def send(
        self,
        key: str,
        post: Callable[[], Awaitable[httpx.Response]],
        id_of: Callable[[Any], str | None],
        holder: Holder | None = None,
    ) -> Sent:
        """Send one slot (``key``) once, with this channel's retries and claims; with
        ``holder``, only while that turn holds its conversation's lease."""
        return await send_once(
            self.redis,
            key,
            post,
            id_of,
            self.retry,
            ttl_s=self.delivery_ttl_s,
            pending_ttl_s=self.pending_ttl_s,
            ack=self.ack,
            holder=holder,
        )

    async def aclose(self) -> None:
        await self.http.aclose()
