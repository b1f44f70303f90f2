"""Pytest fixtures from ``tests.support``.

Import the fixture functions into a test module (``from tests.support.fixtures import
fake_openai_fixture  # noqa: F401``) or list this module in ``pytest_plugins``; tests then ask
for ``fake_openai``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.fake_openai import FakeOpenAI


@pytest.fixture(scope="session", name="fake_openai_server")
def fake_openai_server_fixture() -> Iterator[FakeOpenAI]:
    """One fake server for the whole session (starting one takes a few milliseconds, but
    there is no reason to pay it per test)."""
    with FakeOpenAI.running() as fake:
        yield fake


@pytest.fixture(name="fake_openai")
def fake_openai_fixture(fake_openai_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    """The fake server with an empty script and request log for this test."""
    fake_openai_server.reset()
    yield fake_openai_server
    fake_openai_server.reset()
