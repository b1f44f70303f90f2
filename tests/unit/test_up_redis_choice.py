"""Which Redis ``orquestra up`` uses, and what it says about it (the pure decision)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orquestra.cli import build_parser
from orquestra.up import choose_redis

URL = "redis://127.0.0.1:6379/0"
DATA = Path("/srv/orq")


@pytest.mark.parametrize("answers", [True, False])
def test_embedded_flag_wins_whether_or_not_redis_url_answers(answers: bool) -> None:
    choice = choose_redis(URL, answers, embedded=True, data_dir=DATA, data_dir_given=True)
    assert choice.embedded and choice.reason == "--embedded" and choice.warning is None


def test_an_answering_redis_url_is_used_and_said_why() -> None:
    choice = choose_redis(URL, True, embedded=False, data_dir=DATA, data_dir_given=False)
    assert not choice.embedded and choice.reason == "REDIS_URL answers"
    assert choice.warning is None


def test_a_silent_redis_url_starts_the_embedded_one_and_says_why() -> None:
    choice = choose_redis(URL, False, embedded=False, data_dir=DATA, data_dir_given=False)
    assert choice.embedded and choice.reason == f"REDIS_URL {URL} did not answer"


def test_data_dir_with_an_external_redis_is_a_clear_warning() -> None:
    choice = choose_redis(URL, True, embedded=False, data_dir=DATA, data_dir_given=True)
    assert not choice.embedded
    assert choice.warning and "--data-dir /srv/orq is not used" in choice.warning
    assert "--embedded" in choice.warning


def test_up_parses_embedded_and_an_optional_data_dir() -> None:
    args = build_parser().parse_args(["up", "--embedded"])
    assert args.embedded is True and args.data_dir is None
    args = build_parser().parse_args(["up", "--data-dir", "x"])
    assert args.embedded is False and args.data_dir == "x"
