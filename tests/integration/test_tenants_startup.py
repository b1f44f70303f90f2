"""A bad tenants file stops the deployment at start, and ``orquestra tenants check`` says why.

The tenants file decides whose token reads whose conversations, so a deployment must not
start with a file it cannot trust (a clash of ids or tokens, a guessable token, an id that
cannot be part of a key, a file that is not there): ``orquestra up``, and any one process
started alone (the gateway, a worker), exits non-zero with a message naming the file and the
problem. Real processes, started as an operator starts them.

A process that comes up anyway is stopped at once and the test fails: no test waits out a
timeout for a process that is serving.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from orquestra.redis_server import free_port
from tests.system import ROOT, OutputWatcher, service_env

GOOD_A = "a-admin-" + uuid.uuid4().hex
GOOD_B = "b-admin-" + uuid.uuid4().hex


def tenant(tid: str, admin: str, **more: object) -> dict[str, object]:
    return {"id": tid, "pack": "ctsmash", "admin_token": admin, **more}


def dump(*tenants: dict[str, object]) -> str:
    return yaml.safe_dump({"tenants": list(tenants)})


@dataclass(frozen=True)
class Bad:
    """A tenants file (None: no file at the path) and what the refusal must say."""

    text: str | None
    says: tuple[str, ...]


BAD: dict[str, Bad] = {
    "invalid-yaml": Bad("tenants:\n  - id: [unclosed\n", ("YAML",)),
    "duplicate-id": Bad(
        dump(tenant("ctsmash", GOOD_A), tenant("ctsmash", GOOD_B)), ("tenant 'ctsmash'", "twice")
    ),
    "bad-id": Bad(dump(tenant("Bad Id", GOOD_A)), ("tenant 'Bad Id'", "id")),
    "short-token": Bad(
        dump(tenant("ctsmash", GOOD_A), tenant("revoluna", "short-token")),
        ("tenant 'revoluna'", "admin_token"),
    ),
    "shared-token": Bad(
        dump(tenant("ctsmash", GOOD_A), tenant("revoluna", GOOD_B, api_token=GOOD_A)),
        ("tenant 'revoluna'", "api_token"),
    ),
    "missing-file": Bad(None, ()),
}


def tenants_file(tmp_path: Path, bad: Bad) -> Path:
    path = tmp_path / "tenants.yaml"
    if bad.text is not None:
        path.write_text(bad.text, encoding="utf-8")
    return path


def refused(command: list[str], env: dict[str, str], started: str) -> str:
    """Run ``command``; it must exit non-zero before logging ``started``. Its output."""
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    watcher = OutputWatcher(process.stdout)
    try:
        if watcher.wait_for(started, 120):
            pytest.fail(f"{command[2]} started with a bad tenants file:\n{watcher.tail()}")
        code = process.wait(30)
    finally:
        if process.poll() is None:
            # As an operator stops it (Ctrl-C), so ``orquestra up`` stops its children too.
            process.send_signal(signal.SIGINT)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    assert watcher.wait_for("<eof>", 10)
    assert code != 0, watcher.tail()
    return "\n".join(watcher.lines)


def assert_names(output: str, path: Path, bad: Bad) -> None:
    assert str(path) in output, output
    for needle in bad.says:
        assert needle in output, (needle, output)


@pytest.mark.parametrize("case", sorted(BAD))
def test_orquestra_up_refuses_a_bad_tenants_file(
    case: str, tmp_path: Path, redis_url: str, unique_prefix: str
) -> None:
    """The whole deployment stops before serving, with the file and the problem named."""
    path = tenants_file(tmp_path, BAD[case])
    env = service_env(redis_url, unique_prefix, ORQ_TENANTS=str(path))
    command = [sys.executable, "-m", "orquestra.cli", "up", "--port", str(free_port())]
    assert_names(refused(command, env, "orquestra: up:"), path, BAD[case])


@pytest.mark.parametrize("case", ["duplicate-id", "short-token", "missing-file"])
def test_the_gateway_alone_refuses_a_bad_tenants_file(
    case: str, tmp_path: Path, redis_url: str, unique_prefix: str
) -> None:
    """Deployments that run each service on its own (compose, Kubernetes) get the same
    refusal from the gateway, which holds the tokens."""
    path = tenants_file(tmp_path, BAD[case])
    env = service_env(redis_url, unique_prefix, ORQ_TENANTS=str(path), ORQ_LOG_LEVEL="INFO")
    command = [sys.executable, "-m", "services.gateway", "--port", str(free_port())]
    assert_names(refused(command, env, "gateway started"), path, BAD[case])


@pytest.mark.parametrize("case", ["bad-id", "missing-file"])
def test_a_worker_alone_refuses_a_bad_tenants_file(
    case: str, tmp_path: Path, redis_url: str, unique_prefix: str
) -> None:
    """A worker runs every tenant's turns with that tenant's pack: it reads the same file and
    must not run on one it cannot trust either."""
    path = tenants_file(tmp_path, BAD[case])
    env = service_env(redis_url, unique_prefix, ORQ_TENANTS=str(path), ORQ_LOG_LEVEL="INFO")
    command = [sys.executable, "-m", "services.faq"]
    assert_names(refused(command, env, "service started"), path, BAD[case])


# orquestra tenants check -----------------------------------------------------------------------


def check(*args: str, tenants: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = service_env("redis://127.0.0.1:1/0", "unused:")
    env.pop("ORQ_TENANTS", None)
    if tenants is not None:
        env["ORQ_TENANTS"] = str(tenants)
    return subprocess.run(
        [sys.executable, "-m", "orquestra.cli", "tenants", "check", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def good_file(tmp_path: Path) -> Path:
    path = tmp_path / "tenants.yaml"
    path.write_text(
        dump(
            tenant("ctsmash", GOOD_A), {"id": "revoluna", "pack": "staffing", "admin_token": GOOD_B}
        ),
        encoding="utf-8",
    )
    return path


def test_check_lists_every_tenant_and_exits_0_for_a_good_file(tmp_path: Path) -> None:
    """Before a deploy, an operator sees each tenant and whether its pack loads; read from
    ``ORQ_TENANTS`` or from ``--file``."""
    path = good_file(tmp_path)
    for done in (check(tenants=path), check("--file", str(path))):
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        for tid in ("ctsmash", "revoluna"):
            assert tid in output, output
        # The tokens are secrets: a check that prints them leaks them into CI logs.
        assert GOOD_A not in output and GOOD_B not in output


@pytest.mark.parametrize("case", sorted(BAD))
def test_check_exits_1_with_the_problems_of_a_bad_file(case: str, tmp_path: Path) -> None:
    path = tenants_file(tmp_path, BAD[case])
    done = check("--file", str(path))
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert_names(output, path, BAD[case])


def test_check_reports_a_tenant_whose_pack_does_not_load(tmp_path: Path) -> None:
    """The deployment would start with that tenant disabled; the check is where an operator
    finds out before customers do, so it is a problem (exit 1) naming the tenant."""
    broken = tmp_path / "broken-pack"
    broken.mkdir()
    (broken / "business.yaml").write_text("business: [unclosed\n", encoding="utf-8")
    path = tmp_path / "tenants.yaml"
    path.write_text(
        dump(
            tenant("ctsmash", GOOD_A), {"id": "broken", "pack": str(broken), "admin_token": GOOD_B}
        ),
        encoding="utf-8",
    )
    done = check("--file", str(path))
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "ctsmash" in output and "broken" in output, output
    # Why it does not load: the pack's own error (its file, or that it is invalid YAML).
    assert str(broken / "business.yaml") in output or "YAML" in output, output
