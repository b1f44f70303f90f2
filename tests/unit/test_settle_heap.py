"""A started process's heap is set aside from the garbage collector (``settle_heap``): what
exists then is frozen, young collections run less often, and what turns make afterwards is
still collected."""

from __future__ import annotations

import gc
import weakref

from shared.process import YOUNG_COLLECTION_THRESHOLD, settle_heap


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_the_start_is_frozen_and_what_comes_after_is_still_collected() -> None:
    kept = [Node() for _ in range(100)]
    threshold = gc.get_threshold()
    try:
        settle_heap()
        assert gc.get_freeze_count() >= len(kept)
        assert gc.get_threshold()[0] == YOUNG_COLLECTION_THRESHOLD
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle: only the collector frees it
        gone = weakref.ref(a)
        del a, b
        gc.collect()
        assert gone() is None
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
