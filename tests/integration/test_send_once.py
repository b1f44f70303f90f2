"""``channels/once.py`` on a real Redis: a slot is sent until a 2xx and never after it, 429 and
5xx are retried, another 4xx is not, and a request that may have arrived (no answer) is not sent
again. The provider is an in-process ``httpx`` transport that counts what it receives."""

from __future__ import annotations

import uuid

import httpx
import pytest
from redis.asyncio import Redis

from services.gateway.channels.once import DeliveryInFlight, Holder, Retry, send_once

RETRY = Retry(attempts=4, base_s=0.0, cap_s=1.0)


class Provider:
    """Answers each request with the next of ``answers`` (a status, or an exception)."""

    def __init__(self, *answers: int | Exception) -> None:
        self.answers = list(answers)
        self.received = 0
        self.client = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.received += 1
        answer = self.answers.pop(0) if self.answers else 200
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(answer, json={"id": f"m{self.received}"})

    async def post(self) -> httpx.Response:
        return await self.client.post("http://provider.test/messages", json={"text": "oi"})


async def no_sleep(_: float) -> None:
    return None


def id_of(body: object) -> str | None:
    return body.get("id") if isinstance(body, dict) else None


async def send(redis: Redis, key: str, provider: Provider) -> str:
    sent = await send_once(
        redis, key, provider.post, id_of, RETRY, ttl_s=60, pending_ttl_s=30, sleep=no_sleep
    )
    return sent.status


@pytest.fixture
def key(unique_prefix: str) -> str:
    return f"{unique_prefix}sent:{{c}}:{uuid.uuid4().hex}:0"


async def test_a_2xx_is_final_and_the_slot_is_never_sent_again(redis: Redis, key: str) -> None:
    provider = Provider(200)
    assert await send(redis, key, provider) == "sent"
    assert await send(redis, key, provider) == "duplicate"
    assert provider.received == 1 and await redis.get(key) == "sent:m1"


@pytest.mark.parametrize("errors", [(429,), (500, 502), (httpx.ConnectError("refused"),)])
async def test_429_5xx_and_refused_connections_are_retried(
    redis: Redis, key: str, errors: tuple[int | Exception, ...]
) -> None:
    provider = Provider(*errors, 201)
    assert await send(redis, key, provider) == "sent"
    assert provider.received == len(errors) + 1


@pytest.mark.parametrize(
    ("answers", "made", "stored"),
    [
        ((400,), 1, "failed:400"),  # refused for good: never retried
        ((503, 503, 503, 503), 4, "failed:503"),  # attempts exhausted
    ],
)
async def test_a_refusal_or_exhausted_attempts_fail_once(
    redis: Redis, key: str, answers: tuple[int, ...], made: int, stored: str
) -> None:
    provider = Provider(*answers)
    assert await send(redis, key, provider) == "failed"
    assert provider.received == made and await redis.get(key) == stored
    assert await send(redis, key, Provider()) == "failed"  # decided: not sent again


async def test_no_answer_may_mean_it_arrived_so_it_is_not_sent_again(
    redis: Redis, key: str
) -> None:
    provider = Provider(httpx.ReadTimeout("no answer"))
    assert await send(redis, key, provider) == "unknown"
    assert await send(redis, key, provider) == "unknown"
    assert provider.received == 1


async def test_a_slot_another_sender_holds_is_left_to_it(redis: Redis, key: str) -> None:
    await redis.set(key, "pending:other-sender", ex=30)
    provider = Provider()
    with pytest.raises(DeliveryInFlight):
        await send(redis, key, provider)
    assert provider.received == 0


@pytest.mark.parametrize(
    ("holder_now", "expected"), [(None, "sent"), ("t1", "sent"), ("t2", "superseded")]
)
async def test_a_reply_is_sent_only_while_its_turn_holds_the_lease(
    redis: Redis, unique_prefix: str, holder_now: str | None, expected: str
) -> None:
    """A turn whose messages another turn took up again (it outlived its lease; its start was
    lost in a failover) sends nothing: the turn holding the lease answers them."""
    lease = f"{unique_prefix}{{c}}:lease"
    key = f"{unique_prefix}{{c}}:sent:t1:0"
    if holder_now:
        await redis.set(lease, holder_now, ex=60)
    provider = Provider(200)
    sent = await send_once(
        redis, key, provider.post, id_of, RETRY, ttl_s=60, pending_ttl_s=30,
        holder=Holder(lease, "t1"), sleep=no_sleep,
    )  # fmt: skip
    assert sent.status == expected
    assert provider.received == (0 if expected == "superseded" else 1)
    assert (await redis.get(key) is None) == (expected == "superseded")
