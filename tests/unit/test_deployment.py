"""docker-compose.yml and the Dockerfile, checked without Docker (tests/compose/ runs them on a
real engine: docs/operations/compose.md)."""

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


def defaults(value: str) -> str:
    """``value`` as Compose reads it with no variable set (``${NAME:-default}``)."""
    return re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)


def stages() -> list[list[str]]:
    """The Dockerfile's stages, each its instructions (comments and blank lines left out)."""
    found: list[list[str]] = []
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        line = line.strip()
        if line.startswith("FROM "):
            found.append([])
        if line and not line.startswith("#"):
            found[-1].append(line)
    return found


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


def test_checks_are_light_exec_form_and_reaped_by_an_init() -> None:
    """A check through a shell, or one that outlives its timeout, leaves a zombie unless PID 1
    reaps it; the services' check is the module that imports no client library
    (tests/unit/test_deployment_health.py), reading the heartbeat of $ORQ_SERVICE."""
    for name, spec in compose()["services"].items():
        assert spec["init"] is True, name
        check = spec["healthcheck"]
        assert check["test"][0] == "CMD", name
        if name in THIRD_PARTY:
            continue
        assert check["test"][1:] == ["python", "-m", "orquestra.health"], name
        assert spec["environment"]["ORQ_SERVICE"] == name
        assert check["start_period"] and check["timeout"], name


def test_image_ships_the_packages_and_packs() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    for folder in ("shared", "services", "orquestra", "packs"):
        assert f"COPY {folder} ./{folder}" in dockerfile
    assert "uv sync --frozen --no-dev" in dockerfile


def test_one_image_built_once_runs_every_service_and_is_never_pulled() -> None:
    services = {n: s for n, s in compose()["services"].items() if n not in THIRD_PARTY}
    assert [name for name, spec in services.items() if "build" in spec] == ["gateway"]
    assert len({spec["image"] for spec in services.values()}) == 1
    assert {spec["pull_policy"] for spec in services.values()} == {"never"}


def test_the_gateway_is_published_on_loopback_unless_told_otherwise() -> None:
    [published] = compose()["services"]["gateway"]["ports"]
    assert defaults(published) == "127.0.0.1:8000:8000"
    assert published.startswith("${GATEWAY_BIND:-127.0.0.1}:")


def test_services_read_a_tenants_file_and_packs_from_a_mounted_folder() -> None:
    """The folder holds tokens (tenants.yaml): mounted read-only, kept out of git and the image."""
    for name, spec in compose()["services"].items():
        if name in THIRD_PARTY:
            continue
        assert [defaults(v) for v in spec["volumes"]] == ["./config:/config:ro"], name
    assert "config" in (ROOT / ".dockerignore").read_text().split()
    assert "/config/" in (ROOT / ".gitignore").read_text().split()


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


def test_uv_and_its_cache_stay_in_the_build_stage() -> None:
    build, run = stages()
    assert build[0].endswith(" AS build") and "UV_NO_CACHE=1" in " ".join(build)
    assert not any("uv" in line.split() or "uv==" in line for line in run)
    assert [line for line in run if line.startswith("COPY")] == ["COPY --from=build /app /app"]
    assert build[0].split()[1] == run[0].split()[1]  # the virtualenv's Python is the same


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


def test_compose_traces_to_jaeger_only_when_asked_and_nothing_waits_for_it() -> None:
    """Jaeger's image cannot be pulled everywhere: it is in the ``tracing`` profile, so a plain
    ``up`` never needs it, and tracing is off until an endpoint is given."""
    services = compose()["services"]
    for name in SERVICES:
        endpoint = services[name]["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"]
        assert endpoint == "${OTEL_EXPORTER_OTLP_ENDPOINT:-}", name
        assert "jaeger" not in services[name].get("depends_on", {}), name
    assert services["jaeger"]["profiles"] == ["tracing"]
    assert services["jaeger"]["ports"] == ["127.0.0.1:16686:16686"]
