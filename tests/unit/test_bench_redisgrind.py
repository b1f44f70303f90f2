"""What ``bench.redisgrind`` reads of callgrind's dump: the instructions it counted."""

from pathlib import Path

import pytest

from bench.redisgrind import instructions


def test_the_count_is_the_dumps_summary(tmp_path: Path) -> None:
    dump = tmp_path / "callgrind.out.1"
    dump.write_text("version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 608020987\n")
    assert instructions(dump) == 608_020_987
    dump.write_text("events: Ir\n")
    with pytest.raises(RuntimeError, match="no totals"):
        instructions(dump)
