"""A real headless Chromium for the page tests, installed from Debian on first use.

A fresh machine has no browser: the ``chromium`` fixture installs Debian's ``chromium`` and
``chromium-driver`` packages with apt-get when they are missing (the only download the suite
makes; nothing comes from a browser vendor's CDN). Selenium drives it through chromedriver.
The documentation shows what the page tests saw: with ``ORQ_DOCS_SCREENSHOTS=1`` their
screenshots are written to ``docs/img/`` (commit them); otherwise to a temporary folder, so a
test run leaves the checkout as it was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

from tests.system import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PACKAGES = ["chromium", "chromium-driver"]
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1300,860",
]
SCREENSHOTS = (
    Path(ROOT) / "docs" / "img"
    if os.environ.get("ORQ_DOCS_SCREENSHOTS") == "1"
    else Path(tempfile.gettempdir()) / "orquestra-screenshots"
)
WAIT_S = 30


def apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    """apt-get, waiting for the package database's lock while another install (a second test
    run on the same machine) holds it, instead of failing at once."""
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    command = [*prefix, "apt-get", "-o", "DPkg::Lock::Timeout=600", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="session")
def chromium() -> str:
    """Chromium and its driver from Debian, installed on first use."""
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        installed = apt_get("install", "-y", "--no-install-recommends", *PACKAGES)
        if installed.returncode != 0:
            updated = apt_get("update")
            assert updated.returncode == 0, f"apt-get update failed:\n{updated.stderr}"
            installed = apt_get("install", "-y", "--no-install-recommends", *PACKAGES)
        assert installed.returncode == 0, f"apt-get install failed:\n{installed.stderr}"
    assert os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)
    return CHROMIUM


@pytest.fixture
def browser(chromium: str) -> Iterator[WebDriver]:
    profile = tempfile.mkdtemp(prefix="orq-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
