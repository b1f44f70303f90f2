"""The gateway's sweepers run once per process for every tenant, on a real Redis: one sorted
set per partition holds every tenant's pending starts (and one set each the handoff reminders
and idle returns), and each due conversation is handled by its own tenant's TurnKeeper or
Handoff; a tenant the process does not serve is left alone."""

from __future__ import annotations

from pathlib import Path

import httpx
import yaml
from faststream.redis.parser.binary import BinaryMessageFormatV1
from redis.asyncio import Redis

from orquestra.redis_server import free_port
from services.gateway import handoff
from services.gateway.handoff import Handoff
from services.gateway.turns import TurnKeeper
from services.registry import TOPOLOGY
from shared.contracts import InboundMessage, Turn, utcnow
from shared.keys import Keys
from shared.logs import get_logger
from shared.lua import register
from shared.pack import load_pack
from shared.settings import Settings
from shared.state import StateStore
from shared.sweep import Due, due_members
from tests.integration.test_bus_and_merger import read_entries
from tests.system import service

LOG = get_logger("test")
PACK = load_pack("ctsmash")


def store_of(redis: Redis, keys: Keys) -> StateStore:
    return StateStore(
        redis, register(redis), keys, journal_max=50, state_ttl_s=3600, outbox_ttl_s=60
    )


async def test_reading_goes_past_members_of_tenants_not_served(
    redis: Redis, unique_prefix: str
) -> None:
    """More due members of an unserved tenant than one page holds, at the same score as a
    served one: the served one is still found, and the others stay where they are."""
    key = f"{unique_prefix}gw:pending"
    await redis.zadd(key, {f"absent~c{i}": 0 for i in range(5)})
    await redis.zadd(key, {"alpha~c9": 0, "beta~c1": 1, "alpha~later": 10**15})
    found = await due_members(redis, key, 100, lambda tenant: tenant != "absent", 2)
    assert found == [Due("alpha", "c9", 0), Due("beta", "c1", 1)]
    assert await redis.zcard(key) == 8


async def test_one_gateway_process_recovers_each_tenants_stranded_start_in_one_sweep(
    redis: Redis, redis_url: str, unique_prefix: str, tmp_path: Path
) -> None:
    """A gateway replica stored a message for each of two tenants (the same conversation id in
    both) and died before their burst timers fired. Another gateway serving both tenants
    starts each turn through its one shared sweep, as that tenant's turn; a third tenant's
    stranded start, which no process here serves, is left in the set untouched."""
    tenants_file = tmp_path / "tenants.yaml"
    listed = [
        {"id": "alpha", "pack": "ctsmash", "admin_token": "alpha-admin-0123456789"},
        {"id": "beta", "pack": "ctsmash", "admin_token": "beta-admin-01234567890"},
    ]
    tenants_file.write_text(yaml.safe_dump({"tenants": listed}), encoding="utf-8")
    settings = Settings(prefix=unique_prefix, burst_window_ms=300)
    scripts = register(redis)
    conversation = "stranded"

    async def no_publish(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("ingest publishes nothing")

    def keeper(tenant: str) -> TurnKeeper:
        keys = Keys(unique_prefix, tenant=tenant, topology=TOPOLOGY)
        return TurnKeeper(redis, scripts, keys, settings, store_of(redis, keys), no_publish, LOG)

    port = free_port()
    env = {"ORQ_TENANTS": str(tenants_file), "ORQ_SWEEP_INTERVAL_MS": "200"}
    with service("gateway", redis_url, unique_prefix, "--port", str(port), **env):
        for tenant in ("alpha", "beta", "gamma"):
            dead_replica = keeper(tenant)
            now = utcnow()
            said = InboundMessage(
                channel="http",
                conversation_id=conversation,
                message_id=f"m-{tenant}",
                text=f"oi, aqui é {tenant}",
                sent_at=now,
                received_at=now,
            )
            assert await dead_replica.ingest(said)
            dead_replica.cancel_timers()  # the replica died: its burst timer never fires
        shared = Keys(unique_prefix, topology=TOPOLOGY)
        started: dict[str, Turn] = {}
        for fields in await read_entries(redis_url, shared.turns, 2):
            body, headers = BinaryMessageFormatV1.parse(fields[b"__data__"])
            started[headers["tenant"]] = Turn.model_validate_json(body)
        gamma = Keys(unique_prefix, tenant="gamma")
        left = await redis.zrange(shared.pending_starts(conversation), 0, -1)
        gamma_inbox = await redis.llen(gamma.inbox(conversation))
    assert {tenant: turn.text for tenant, turn in started.items()} == {
        "alpha": "oi, aqui é alpha",
        "beta": "oi, aqui é beta",
    }
    # Started turns stay (scored by their lease expiry); gamma's start waits for its tenant.
    assert sorted(left) == ["alpha~stranded", "beta~stranded", "gamma~stranded"]
    assert gamma_inbox == 1


async def test_one_handoff_sweep_returns_every_served_tenants_idle_conversations(
    redis: Redis, unique_prefix: str
) -> None:
    """Two tenants' human-owned conversations (the same id in both) gone idle are given back
    to the bot by one sweep, each by its tenant's Handoff; a third tenant's stays in the set."""
    settings = Settings(prefix=unique_prefix, human_idle_min=1, handoff_remind_min=0)
    scripts = register(redis)
    served: dict[str, Handoff] = {}
    async with httpx.AsyncClient() as http:
        for tenant in ("alpha", "beta", "gamma"):
            keys = Keys(unique_prefix, tenant=tenant)
            staff = Handoff(scripts, keys, store_of(redis, keys), http, settings, PACK, LOG)
            await staff.assign("conv", "human", by="ana")
            await redis.zadd(keys.human_owned, {keys.qualified("conv"): 0})  # idle for long
            served[tenant] = staff
        gamma = served.pop("gamma")
        shared = Keys(unique_prefix)
        acted = await handoff.sweep_once(redis, shared, settings, served.get)
        owners = {tenant: await staff.owner("conv") for tenant, staff in served.items()}
        assert acted == 2
        assert owners == {"alpha": "bot", "beta": "bot"}
        assert await gamma.owner("conv") == "human"
        assert await redis.zrange(shared.human_owned, 0, -1) == ["gamma~conv"]
