"""``orquestra/forked.py``: a replica forked from the supervisor runs its module as
``python -m`` would, with the environment, title, session and exit code of its own."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest

from orquestra.forked import fork

REPLICA = """
import json, os, signal, sys, time
out = os.environ["FORK_TEST_OUT"]
with open(out, "w") as handle:
    json.dump({
        "argv": sys.argv[1:],
        "env": os.environ.get("FORK_TEST_ONLY"),
        "parent_env": os.environ.get("PATH"),
        "cmdline": open("/proc/self/cmdline", "rb").read().split(b"\\0")[0].decode(),
        "session_leader": os.getsid(0) == os.getpid(),
        "sigterm_default": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
    }, handle)
if sys.argv[1:] == ["--wait"]:
    time.sleep(60)
if sys.argv[1:] == ["--crash"]:
    raise RuntimeError("a replica that crashed")
sys.exit(int(sys.argv[1]) if sys.argv[1:] else 0)
"""


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    package = tmp_path / "forktestpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(REPLICA)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "forktestpkg"


def test_a_replica_runs_its_module_with_its_own_environment_and_title(
    module: str, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # the supervisor's handler
    try:
        replica = fork(module, ["7"], {"FORK_TEST_OUT": str(out), "FORK_TEST_ONLY": "yes"})
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert replica.wait(30) == 7
    seen = json.loads(out.read_text())
    assert seen == {
        "argv": ["7"],
        "env": "yes",
        "parent_env": None,
        "cmdline": "forktestpkg 7",
        "session_leader": True,
        "sigterm_default": True,
    }


def test_a_crash_exits_1_and_a_terminated_replica_reports_its_signal(
    module: str, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    crashed = fork(module, ["--crash"], {"FORK_TEST_OUT": str(out)})
    assert crashed.wait(30) == 1

    waiting = fork(module, ["--wait"], {"FORK_TEST_OUT": str(out)})
    with pytest.raises(subprocess.TimeoutExpired):
        waiting.wait(0.2)
    waiting.terminate()
    assert waiting.wait(30) == -signal.SIGTERM
    assert waiting.poll() == -signal.SIGTERM
    waiting.kill()  # already gone: nothing to signal
