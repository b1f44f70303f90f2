"""docker-compose.yml and the Dockerfile, checked without Docker (it does not run here)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml

from services.gateway.auth import exposure_problem
from services.registry import SERVICES
from shared.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
# Services of other images: Redis, and Jaeger for the traces (docs/operations/tracing.md).
THIRD_PARTY = ("redis", "jaeger")


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_names_every_service_and_redis_with_aof() -> None:
    services = compose()["services"]
    assert set(services) == {*SERVICES, *THIRD_PARTY}
    command = services["redis"]["command"]
    assert command[command.index("--appendonly") + 1] == "yes"


def test_each_command_starts_a_module_that_exists() -> None:
    for name, spec in compose()["services"].items():
        if name in THIRD_PARTY:
            continue
        command = spec["command"]
        assert command[:2] == ["python", "-m"], name
        module = command[2]
        assert module == f"services.{name}"
        assert importlib.util.find_spec(f"{module}.__main__") is not None, module


def test_workers_scale_freely_and_everything_has_a_health_check() -> None:
    for name, spec in compose()["services"].items():
        assert "healthcheck" in spec, name
        if name in (*THIRD_PARTY, "gateway"):
            continue
        assert "container_name" not in spec and "ports" not in spec, name
        assert spec["environment"]["ORQ_SERVICE"] == name


def test_image_ships_the_packages_and_packs() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for folder in ("shared", "services", "orquestra", "packs"):
        assert f"COPY {folder} ./{folder}" in dockerfile
    assert "uv sync --frozen --no-dev" in dockerfile


def test_one_image_built_once_runs_every_service() -> None:
    services = {n: s for n, s in compose()["services"].items() if n not in THIRD_PARTY}
    assert [name for name, spec in services.items() if "build" in spec] == ["gateway"]
    assert len({spec["image"] for spec in services.values()}) == 1


def test_every_service_reads_the_optional_env_file() -> None:
    """WhatsApp, LLM, handoff and token settings reach the containers from .env."""
    for name, spec in compose()["services"].items():
        if name in THIRD_PARTY:
            continue
        assert {"path": ".env", "required": False} in spec["env_file"], name
    assert ".env" in (ROOT / ".dockerignore").read_text().split()


def test_the_exposed_gateway_requires_the_admin_token() -> None:
    gateway = compose()["services"]["gateway"]
    command = gateway["command"]
    host = command[command.index("--host") + 1]
    assert exposure_problem(Settings(_env_file=None, admin_token=None), host) is not None  # type: ignore[call-arg]
    token = gateway["environment"]["ORQ_ADMIN_TOKEN"]
    assert token.startswith("${ORQ_ADMIN_TOKEN:?") and token.endswith("}"), token


def test_image_runs_unprivileged_with_a_pinned_uv() -> None:
    lines = [line.strip() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    version = next(line for line in lines if line.startswith("ARG UV_VERSION="))
    assert re.fullmatch(r"ARG UV_VERSION=\d+\.\d+\.\d+", version)
    assert any('"uv==${UV_VERSION}"' in line for line in lines)


def test_every_setting_is_documented_and_ci_runs_the_readme_test_command() -> None:
    from shared.settings import Settings

    configuration = (ROOT / "docs" / "reference" / "configuration.md").read_text()
    for name in Settings.model_fields:
        env = "REDIS_URL" if name == "redis_url" else f"ORQ_{name.upper()}"
        assert f"`{env}`" in configuration, env
    readme = (ROOT / "README.md").read_text()
    test_command = "python3 -m pip install -q uv && uv run --frozen pytest"
    assert test_command in readme
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_compose_traces_to_jaeger_which_nothing_waits_for() -> None:
    services = compose()["services"]
    for name in SERVICES:
        endpoint = services[name]["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"]
        assert endpoint == "${OTEL_EXPORTER_OTLP_ENDPOINT:-http://jaeger:4318}", name
        assert "jaeger" not in services[name].get("depends_on", {}), name
    assert services["jaeger"]["ports"] == ["127.0.0.1:16686:16686"]
