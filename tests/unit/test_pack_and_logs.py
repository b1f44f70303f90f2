from __future__ import annotations

from pathlib import Path

import pytest

from shared.logs import mask_phone
from shared.pack import PackError, load_pack


def test_texts_vary_by_seed_but_are_stable_per_seed() -> None:
    pack = load_pack("ctsmash")
    variants = pack.sections["texts"]["general_greeting"]
    seen = {pack.text("general_greeting", seed=str(i)) for i in range(50)}
    assert seen == set(variants)
    assert pack.text("general_greeting", seed="x") == pack.text("general_greeting", seed="x")


def test_unknown_pack_and_text_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(PackError, match="unknown pack"):
        load_pack("nope-not-a-pack")
    with pytest.raises(PackError, match="no text"):
        load_pack("ctsmash").text("no_such_text")
    (tmp_path / "a.yaml").write_text("business: {name: A}\ntexts: {x: 'um'}\n")
    (tmp_path / "b.yaml").write_text("business: {name: B}\n")
    with pytest.raises(PackError, match="defined twice"):
        load_pack(str(tmp_path))


def test_texts_merge_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("texts: {a: 'um'}\n")
    (tmp_path / "b.yaml").write_text("texts: {b: 'dois {n}'}\n")
    pack = load_pack(str(tmp_path))
    assert pack.text("a") == "um" and pack.text("b", n=2) == "dois 2"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("5511987654321", "*********4321"),
        ("de +55 11 98765-4321 veio", "de *********4321 veio"),
        ("2026-02-10T18:00:00-03:00", "2026-02-10T18:00:00-03:00"),
        ("turno 12 às 19:00", "turno 12 às 19:00"),
    ],
)
def test_phone_numbers_masked_dates_untouched(text: str, masked: str) -> None:
    assert mask_phone(text) == masked
