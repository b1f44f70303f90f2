"""The documentation site: its generated reference pages are current and complete, it builds
strictly (a broken link or a page missing from the nav fails the suite), and the README stays
a short front page that points into it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orquestra import docs, reference
from orquestra.cli import build_parser, main
from orquestra.reference import settings_models

ROOT = docs.ROOT
REFERENCE = ROOT / "docs" / "reference"


def page(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def test_the_reference_pages_are_current() -> None:
    """Fails when a setting, command, route or stream changed without `orquestra docs`."""
    assert main(["docs", "reference", "--check"]) == 0, "run `uv run orquestra docs`"


def test_a_changed_block_makes_a_page_drift(tmp_path: Path) -> None:
    text = page("cli.md")
    produce = reference.cli_reference
    drifted = docs.fill(text, {"cli": lambda: produce() + "\n| `--new` | a new option | |"}, "cli")
    assert drifted != text
    assert docs.fill(drifted, {"cli": produce}, "cli") == text
    with pytest.raises(ValueError, match="no <!-- generated: settings --> block"):
        docs.fill("# a page without its block\n", {"settings": lambda: ""}, "x.md")


def test_every_setting_is_in_the_configuration_reference() -> None:
    text = page("configuration.md")
    found = 0
    for model in settings_models():
        for name, field in model.model_fields.items():
            env = reference.env_names(model, name, field)[0]
            assert f"| `{env}`" in text, env
            assert field.description, f"{model.__name__}.{name} has no description"
            found += 1
    assert found >= 60  # Settings and WhatsAppSettings, at least


def test_every_command_is_in_the_cli_reference() -> None:
    text = page("cli.md")
    commands = [path for path, _, _ in reference._commands(build_parser(), "orquestra")]
    assert {"orquestra up", "orquestra docs reference", "orquestra tenants reload"} <= set(commands)
    for path in commands:
        assert f"### `{path}`" in text, path


def test_every_route_is_in_the_http_reference() -> None:
    text = page("http-api.md")
    paths = reference.openapi_document()["paths"]
    assert "/v1/messages" in paths and "/webhooks/whatsapp" in paths
    for path, methods in paths.items():
        for method in methods:
            assert f"| `{method.upper()}` | `{path}` |" in text, (method, path)


def test_every_stream_is_in_the_bus_reference() -> None:
    from services.registry import TOPOLOGY

    text = page("bus.md")
    for stream in [*TOPOLOGY.streams, "dlq"]:
        assert re.search(rf"\| `[^`]*:{re.escape(stream)}` \|", text), stream


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    built = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "reference" / "configuration" / "index.html").exists()
    assert (tmp_path / "site" / "img" / "inbox.png").exists()


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """The site's own configuration on a one-page site (quick): a link to no page fails."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config.update(docs_dir=str(tmp_path / "docs"), nav=[{"Home": "index.md"}])
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n[gone](channels/carrier-pigeon.md)\n")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    built = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert built.returncode != 0
    assert "carrier-pigeon.md" in built.stderr


def test_the_theme_fetches_nothing() -> None:
    """The build must work offline: no Google fonts, no plugin that downloads."""
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["theme"]["font"] is False
    assert config["plugins"] == ["search"]


def test_the_readme_is_short_and_its_links_lead_somewhere() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    links = re.findall(r"\]\(((?:docs/|CHANGELOG)[^)#]*)(?:#[^)]*)?\)", readme)
    assert len(links) >= 20
    for link in links:
        assert (ROOT / link).exists(), link


def test_each_channel_is_one_click_from_the_home_page() -> None:
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for channel in sorted((ROOT / "docs" / "channels").glob("*.md")):
        assert f"(channels/{channel.name})" in home, channel.name
