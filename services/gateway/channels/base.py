"""What a channel adapter is, and the set of configured adapters the gateway asks.

An adapter declares what its channel allows (``Limits``: the longest text of one message, and
how long after the customer's last message a free-form message may still go), the scheme of
its conversation ids, and does its channel's work: deliver a composed reply exactly once per
turn, answer turns the pipeline should not see (photos and audios), react while a fragment
waits for the rest of a burst, tell its provider when the bot hands a conversation to a person,
and report its provider's health. The gateway never branches on a channel's name: it looks the
message's, reply's or conversation's adapter up in ``ChannelSet``. Each channel is declared in
its own folder (``spec.py``, see ``channels/spec.py``) and registered in ``registry.py``.

Inbound is each channel's own routes (a provider's webhook, the HTTP API's ``POST
/v1/messages``), which parse what their transport posts into ``InboundMessage``s for
``TurnKeeper.ingest``: a webhook also carries delivery statuses and a person's messages
(echoes, which make the conversation a person's), so that side has no common signature.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from shared.contracts import InboundMessage, Reply, Turn

if TYPE_CHECKING:
    from services.gateway.turns import ReleaseCall

# A ``Delivery`` status: not delivered, because a person owns the conversation (``guards_owner``).
HUMAN_OWNER = "human_owner"
# A reply to a turn whose messages another turn took up again (it holds the lease now): that
# turn answers them, this reply is not delivered.
SUPERSEDED = "superseded"


@dataclass(frozen=True)
class Delivery:
    """Outcome of handing a reply to a channel."""

    # "sent" | "duplicate" | "failed" | "unknown" (a person's message that may have gone) |
    # HUMAN_OWNER | SUPERSEDED
    status: str
    detail: str = ""


@dataclass(frozen=True)
class Limits:
    # The longest text of one message, in or out (one bubble).
    max_text: int
    # How long after the customer's last message a free-form message may still be sent
    # (e.g. 24 hours, then only an approved template); None: any time.
    reply_window: timedelta | None = None


class Channel(Protocol):
    name: str
    limits: Limits
    # Conversation ids of this channel start with it ("" for a channel that takes any id).
    conversation_prefix: str
    # True when ``deliver`` also writes the reply into the conversation's history (in the
    # same step); otherwise egress writes it after the delivery.
    writes_history: bool
    # True when ``deliver`` itself refuses a bot's reply while a person owns the conversation
    # (``HUMAN_OWNER``), in the same step as the delivery; otherwise egress reads the owner
    # before it delivers.
    guards_owner: bool

    async def deliver(self, reply: Reply) -> Delivery: ...

    def own_answer(self, turn: Turn) -> tuple[Reply, str] | None:
        """As the turn starts: the channel's own reply and its journal entry, or None for a
        turn the pipeline answers."""
        ...

    def on_fragment(self, message: InboundMessage) -> None:
        """A fragment ("oi") makes the gateway wait for the rest of the burst."""
        ...

    async def on_handoff(self, conversation_id: str) -> None:
        """The bot handed the conversation to a person (``handoff.requested``): tell the
        provider, if it keeps its own idea of who owns a conversation."""
        ...

    async def health(self) -> dict[str, Any] | None:
        """The provider's state for ``/healthz``; None for a channel with nothing to report."""
        ...

    async def aclose(self) -> None:
        """Close what the adapter opened (clients, tasks) as its tenant's gateway stops."""
        ...


@runtime_checkable
class ReleasesTurns(Protocol):
    """A channel whose delivery script also releases the reply's turn (``DELIVER_RELEASE``):
    egress hands it the release (``TurnKeeper.release_call``) instead of running its own, one
    round trip less per turn."""

    async def deliver_and_release(
        self, reply: Reply, release: ReleaseCall, entry: str, *before: str
    ) -> tuple[Delivery, list[Any] | None]:
        """Deliver ``reply`` and release its turn; the release's answer, or None when the reply
        was not delivered (``HUMAN_OWNER``, ``SUPERSEDED``) and the turn not released.
        ``entry`` (the reply's journal entry, its ``detail`` set to what the delivery reports)
        and ``before`` are journaled only with a delivery."""
        ...


class PlainChannel:
    """What a channel without extras does: no answers of its own (every turn goes through
    the pipeline), nothing shown while a burst is typed, nobody to tell about a handoff,
    nothing to report on ``/healthz``, nothing to close; egress checks the conversation's
    owner before a delivery."""

    guards_owner = False

    def own_answer(self, turn: Turn) -> tuple[Reply, str] | None:
        return None

    def on_fragment(self, message: InboundMessage) -> None:
        return None

    async def on_handoff(self, conversation_id: str) -> None:
        return None

    async def health(self) -> dict[str, Any] | None:
        return None

    async def aclose(self) -> None:
        return None


class ChannelSet(Mapping[str, Channel]):
    """The configured adapters by name."""

    def __init__(self, adapters: Iterable[Channel]) -> None:
        self._by_name = {adapter.name: adapter for adapter in adapters}

    def __getitem__(self, name: str) -> Channel:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def reply_window(self, channel: str) -> timedelta | None:
        adapter = self.get(channel)
        return adapter.limits.reply_window if adapter else None

    def own_answer(self, turn: Turn) -> tuple[Reply, str] | None:
        adapter = self.get(turn.channel)
        return adapter.own_answer(turn) if adapter else None

    def on_fragment(self, message: InboundMessage) -> None:
        adapter = self.get(message.channel)
        if adapter:
            adapter.on_fragment(message)

    def of_conversation(self, conversation_id: str) -> Channel | None:
        """The adapter whose conversation ids start with its prefix (the longest that fits)."""
        fits = [
            adapter
            for adapter in self._by_name.values()
            if adapter.conversation_prefix
            and conversation_id.startswith(adapter.conversation_prefix)
        ]
        return max(fits, key=lambda adapter: len(adapter.conversation_prefix), default=None)

    def name_of(self, conversation_id: str) -> str | None:
        """The name of the channel whose prefix ``conversation_id`` has, if any."""
        adapter = self.of_conversation(conversation_id)
        return adapter.name if adapter else None

    async def on_handoff(self, conversation_id: str) -> None:
        adapter = self.of_conversation(conversation_id)
        if adapter:
            await adapter.on_handoff(conversation_id)

    async def aclose(self) -> None:
        for adapter in self._by_name.values():
            await adapter.aclose()

    async def health(self) -> dict[str, dict[str, Any]]:
        """Each adapter's health that has any, by channel name."""
        report: dict[str, dict[str, Any]] = {}
        for name, adapter in self._by_name.items():
            detail = await adapter.health()
            if detail is not None:
                report[name] = detail
        return report
