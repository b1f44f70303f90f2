"""``orquestra explain`` on a real conversation, and the lag gauges on the real bus."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from orquestra.cli import main
from services.registry import TOPOLOGY
from shared.keys import Keys
from shared.lag import register_lag_collector
from tests.system import System


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def orquestra(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """The ``orquestra`` command run in this process: ``orquestra("explain", cid, ENV=value)``."""

    def run(*args: str, **env: str) -> Run:
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return Run(code, out, err)

    return run


@pytest.fixture(scope="module")
def conversation(system: System) -> str:
    cid = f"explain-{uuid.uuid4().hex[:8]}"
    first = system.say(cid, "quero agendar e onde fica a CT?")
    system.say(cid, "João", after=first["cursor"])
    return cid


def test_explain_tells_each_turn_in_english(system: System, conversation: str, orquestra) -> None:
    done = orquestra("explain", conversation, "--url", system.base_url, "--lang", "en")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"Conversation {conversation}")
    for line in [
        "── Turn 1 · ",
        "── Turn 2 · ",
        "› quero agendar e onde fica a CT?",
        "intents: trial, faq (source: rules)",
        "specialists: trial, faq",
        "stage: collect_client_info → collect_client_info",
        "knowledge-base answers: endereco",
        "parts: faq, trial",
        "delivery: sent (channel: http)",
        "from start to delivery: ",
    ]:
        assert line in out, line
    assert out.index("── Turn 1") < out.index("── Turn 2") < out.index("› João")


def test_explain_speaks_portuguese_by_default_and_from_the_environment(
    system: System, conversation: str, orquestra
) -> None:
    done = orquestra("explain", conversation, "--url", system.base_url, ORQ_EXPLAIN_LANG="pt")
    assert "── Turno 1 · " in done.stdout and "intenções: trial, faq (fonte: rules)" in done.stdout
    english = orquestra("explain", conversation, "--url", system.base_url, ORQ_EXPLAIN_LANG="en")
    assert "── Turn 1 · " in english.stdout


def test_explain_json_is_the_raw_journal(system: System, conversation: str, orquestra) -> None:
    done = orquestra("explain", conversation, "--url", system.base_url, "--json")
    assert json.loads(done.stdout) == system.journal(conversation)


def test_explain_errors_are_plain(system: System, orquestra) -> None:
    unknown = orquestra("explain", "never-seen", "--url", system.base_url, "--lang", "en")
    assert unknown.returncode == 0 and "No journal entries" in unknown.stdout
    nowhere = orquestra("explain", "x", "--url", "http://127.0.0.1:9")
    assert nowhere.returncode == 1 and "cannot reach the gateway" in nowhere.stderr


def test_lag_gauges_read_the_running_bus(
    system: System, conversation: str, redis_url: str, prefix: str
) -> None:
    registry = CollectorRegistry()
    register_lag_collector(redis_url, Keys(prefix, topology=TOPOLOGY), registry)
    text = generate_latest(registry).decode()
    assert "orq_lag_collector_up 1.0" in text
    for stream, group in Keys("", topology=TOPOLOGY).groups():
        labels = f'group="{group}",stream="{stream}"'
        assert f"orq_consumer_group_pending{{{labels}}}" in text
    assert 'orq_consumer_group_lag{group="triage",stream="turns"} 0.0' in text
