"""The bot against a real Redis Cluster (3 masters, 3 replicas, ``tests/support/cluster.py``):
the main journeys, duplicates and bursts, with ``ORQ_REDIS_MODE=cluster`` and partitioned
streams. One system for the module; the tests that break the cluster have their own."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import yaml
from redis.cluster import RedisCluster

from orquestra.redis_cluster import LocalCluster
from orquestra.redis_server import free_port, reachable
from services.registry import TOPOLOGY
from shared.faq.config import FaqConfig
from shared.keys import Keys, partition_of
from shared.pack import load_pack
from tests.e2e.journey import PACK, Chat, assert_said, eventually, together
from tests.system import System, service

pytestmark = pytest.mark.cluster

START = "2026-03-02T10:00:00-03:00"
PARTITIONS = 4


def cluster_env(**extra: str) -> dict[str, str]:
    return {"ORQ_REDIS_MODE": "cluster", "ORQ_PARTITIONS": str(PARTITIONS), **extra}


@pytest.fixture(scope="module")
def cluster_prefix() -> str:
    return f"orqtest-{uuid.uuid4().hex[:8]}:"


@pytest.fixture(scope="module")
def cluster_system(redis_cluster: LocalCluster, cluster_prefix: str) -> Iterator[System]:
    with System.up(redis_cluster.url, cluster_prefix, **cluster_env()) as running:
        yield running


def faq_answer(entry_id: str) -> str:
    faq = PACK.sections["faq"]["entries"]
    return next(e["answer"] for e in faq if e["id"] == entry_id).strip()


def started(system: System, conversation: str) -> list[dict]:
    return [e for e in system.journal(conversation) if e["event"] == "turn.started"]


def test_a_booking_a_faq_answer_and_a_two_intent_turn_on_the_cluster(
    cluster_system: System,
) -> None:
    def booking() -> None:
        chat = Chat(cluster_system, "cl-book", START)
        chat.say("Oi! Quero agendar uma aula experimental. Me chamo João, 27 anos, iniciante")
        chat.say("terça que vem às 19h")
        reply = chat.say("sim")
        code = assert_said(reply, "trial_booked", nome="João")["codigo"]
        assert chat.slice("trial")["booking_id"] == code

    def faq() -> None:
        chat = Chat(cluster_system, "cl-faq", START)
        assert faq_answer("endereco") in chat.say("onde fica a CT?")

    def both() -> None:
        chat = Chat(cluster_system, "cl-both", START)
        reply = chat.say("quero agendar e onde fica a CT?")
        assert_said(reply, "trial_ask_name")
        assert faq_answer("endereco") in reply
        [merged] = chat.journal("merge.complete")
        assert {"trial", "faq"} <= set(merged["sources"])

    together(booking, faq, both)


def test_every_turn_under_concurrent_load_completes_before_its_deadline(
    cluster_system: System,
) -> None:
    """With every service up, no turn waits for the merger's deadline. The gateway opens a
    turn's merge record and publishes the turn in one round trip; a cluster runs a pipeline's
    commands on several nodes at once, so the turn could reach triage, and every part the
    merger, before the record existed: the merger then answered at the deadline, 8 s later,
    with every part in hand (p95 8.1 s in a cluster bench)."""

    def talk(i: int) -> Chat:
        chat = Chat(cluster_system, f"cl-load{i}", START)
        for _ in range(3):
            assert faq_answer("endereco") in chat.say("onde fica a CT?")
        return chat

    chats = together(*[lambda i=i: talk(i) for i in range(32)])
    assert [e for chat in chats for e in chat.journal("merge.partial")] == []


def test_a_burst_is_one_turn_on_the_cluster(cluster_system: System) -> None:
    conversation = f"cl-burst-{uuid.uuid4().hex[:8]}"
    for text in ("oi", "quero agendar", "pra terça"):
        cluster_system.post(conversation, text)
        time.sleep(0.1)  # the input itself: a person typing quick messages
    reply = cluster_system.next_reply(conversation)
    assert [e["messages"] for e in started(cluster_system, conversation)] == [
        ["oi", "quero agendar", "pra terça"]
    ]
    assert cluster_system.replies(conversation, after=reply["cursor"])["replies"] == []


def test_the_same_message_to_two_gateways_is_one_turn_on_the_cluster(
    cluster_system: System, redis_cluster: LocalCluster, cluster_prefix: str
) -> None:
    conversation = f"cl-dup-{uuid.uuid4().hex[:8]}"
    port = free_port()
    body = {"conversation_id": conversation, "text": "onde fica a CT?", "message_id": "wamid.C"}
    with service(
        "gateway", redis_cluster.url, cluster_prefix, "--port", str(port), **cluster_env()
    ):
        urls = [cluster_system.base_url, f"http://127.0.0.1:{port}"] * 3

        def post(url: str) -> dict:
            return httpx.post(f"{url}/v1/messages", json=body, timeout=10).json()

        with ThreadPoolExecutor(6) as pool:
            answers = list(pool.map(post, urls))
        reply = cluster_system.next_reply(conversation)
    assert sorted(a["duplicate"] for a in answers) == [False] + [True] * 5
    assert len(started(cluster_system, conversation)) == 1
    assert cluster_system.replies(conversation, after=reply["cursor"])["replies"] == []


def conversations_in(partition: int, count: int) -> list[str]:
    """``count`` fresh conversation ids that hash to ``partition``."""
    found: list[str] = []
    while len(found) < count:
        candidate = f"cl-part-{uuid.uuid4().hex[:8]}"
        if partition_of(candidate, PARTITIONS) == partition:
            found.append(candidate)
    return found


def test_every_partition_is_consumed_by_every_group(
    cluster_system: System, redis_cluster: LocalCluster, cluster_prefix: str
) -> None:
    """Three conversations in each partition, all answered; then every group of the turns,
    faq, merge and outbound streams (the funnel's too) has read and acknowledged work in every
    partition."""
    conversations = [c for p in range(PARTITIONS) for c in conversations_in(p, 3)]

    def ask(conversation: str) -> str:
        return str(cluster_system.say(conversation, "onde fica a CT?")["text"])

    with ThreadPoolExecutor(len(conversations)) as pool:
        answers = list(pool.map(ask, conversations))
    assert all(faq_answer("endereco") in answer for answer in answers)

    keys = Keys(cluster_prefix, PARTITIONS, topology=TOPOLOGY)
    watched = [
        (stream, group)
        for stream, group in keys.groups()
        if any(stream in keys.parts(name) for name in (keys.turns, keys.tasks("faq"),
                                                        keys.merge, keys.outbound))
    ]  # fmt: skip
    single = Keys(cluster_prefix, topology=TOPOLOGY)
    named = (single.turns, single.tasks("faq"), single.merge, single.outbound)
    per_partition = [(stream, group) for stream, group in single.groups() if stream in named]
    assert len(watched) == len(per_partition) * PARTITIONS  # every group on every partition
    client = RedisCluster.from_url(redis_cluster.url, decode_responses=True)

    def unfinished() -> list[str]:
        left = []
        for stream, group in watched:
            [info] = [i for i in client.xinfo_groups(stream) if i["name"] == group]
            if info["last-delivered-id"] == "0-0" or info["pending"]:
                left.append(f"{stream}/{group}")
        return left

    try:
        eventually(lambda: not unfinished(), timeout_s=30)
        slots = {client.keyslot(part) for part in keys.parts(keys.turns)}
    finally:
        client.close()
    assert len(slots) == PARTITIONS


def test_orquestra_up_redis_cluster_starts_a_local_cluster_and_answers(
    tmp_path, cluster_prefix: str
) -> None:
    # REDIS_URL names nothing: the cluster is started by `up` itself.
    with System.up(
        "redis://127.0.0.1:1/0", cluster_prefix, "--redis-cluster", "3",
        "--data-dir", str(tmp_path),
    ) as system:  # fmt: skip
        assert system.watcher.wait_for("started a local Redis Cluster: 3 masters", 1)
        reply = system.say(f"cl-up-{uuid.uuid4().hex[:8]}", "onde fica a CT?")
        assert faq_answer("endereco") in reply["text"]
        [started_line] = [
            line for line in system.watcher.lines if "started a local Redis Cluster" in line
        ]
        ports = [int(p) for p in started_line.split("ports ")[1].split(" (")[0].split(", ")]
        assert len(ports) == 6
        node = RedisCluster(host="127.0.0.1", port=ports[0])
        try:
            assert len(node.get_primaries()) == 3 and len(node.get_replicas()) == 3
        finally:
            node.close()
    assert system.watcher.wait_for("stopping the local Redis Cluster", 5)
    assert not any(reachable(f"redis://127.0.0.1:{port}/0", 0.2) for port in ports)


def test_two_tenants_with_different_packs_answer_on_the_cluster(
    redis_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Tenant keys (``{tenant~conversation}``, each tenant's indexes and deadlines) are
    cluster-safe: the same conversation id under two tenants with different packs gets each
    its own answer over partitioned streams."""
    tokens = {"ctsmash": f"ct-{uuid.uuid4().hex}", "revoluna": f"rv-{uuid.uuid4().hex}"}
    packs = {"ctsmash": "ctsmash", "revoluna": "staffing"}
    path = tmp_path_factory.mktemp("cluster-tenants") / "tenants.yaml"
    listed = [{"id": t, "pack": packs[t], "admin_token": tokens[t]} for t in tokens]
    path.write_text(yaml.safe_dump({"tenants": listed}), encoding="utf-8")
    prefix = f"orqtest-{uuid.uuid4().hex[:8]}:"
    env = cluster_env(ORQ_TENANTS=str(path), ORQ_BURST_WINDOW_MS="0", ORQ_BURST_FRAGMENT_MS="0")
    question = "a Julia reserva o plantão pra mim?"
    with System.up(redis_cluster.url, prefix, **env) as running:
        replies = {}
        for tenant, token in tokens.items():
            headers = {"authorization": f"Bearer {token}"}
            body = {"conversation_id": "same-id", "message_id": "m1", "text": question}
            assert running.http.post("/v1/messages", json=body, headers=headers).is_success
            got = running.http.get(
                "/v1/conversations/same-id/replies", params={"wait": 20}, headers=headers
            ).json()["replies"]
            assert got, f"no reply for {tenant}\n{running.watcher.tail()}"
            replies[tenant] = got[0]["text"]
    staffing = load_pack("staffing").section("faq", FaqConfig).entries
    assert next(e.answer for e in staffing if e.id == "reserva").strip() in replies["revoluna"]
    assert replies["ctsmash"] != replies["revoluna"]
