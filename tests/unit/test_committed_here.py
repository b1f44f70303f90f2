"""What a process remembers of its own commits (``shared.state.CommittedHere``): the slices
each conversation's latest committed turn wrote, and its commits on their way, for another
service of the process to take instead of reading them."""

from __future__ import annotations

import asyncio

from shared.state import CommittedHere


def test_the_commits_of_one_turn_are_remembered_together_and_a_new_turn_starts_over() -> None:
    async def scenario() -> None:
        here = CommittedHere(slices=frozenset({"mode", "memory"}))
        here.note("s:c1", "t1", {"mode": '{"mode": "oferta", "_v": 3}'})
        here.note("s:c1", "t1", {"memory": '{"facts": {}, "_v": 2}'})
        recalled = await here.recall("s:c1", "t1", "mode", "memory")
        assert recalled is not None
        assert recalled.get("mode") == {"mode": "oferta", "_v": 3}
        assert recalled.version("memory") == 2
        assert recalled.raw["mode"] == '{"mode": "oferta", "_v": 3}'
        assert await here.recall("s:c1", "t2", "mode") is None  # another turn
        assert await here.recall("s:c2", "t1", "mode") is None  # another conversation
        here.note("s:c1", "t2", {"memory": '{"facts": {}, "_v": 3}'})
        assert await here.recall("s:c1", "t2", "mode") is None  # t2's commits wrote no mode
        assert await here.recall("s:c1", "t1", "mode") is None  # t1 is forgotten

    asyncio.run(scenario())


def test_a_recall_waits_for_the_commit_on_its_way_and_takes_it_only_if_it_committed() -> None:
    async def scenario() -> tuple[object, object, object]:
        here = CommittedHere(slices=frozenset({"mode", "memory"}))
        answered = here.sending("s:c1", "t1", {"mode": '{"mode": "oferta", "_v": 1}'})
        unrelated = here.sending("s:c1", "t1", {"memory": "{}"})  # not waited for by a mode read
        assert answered is not None and unrelated is not None
        waiting = asyncio.ensure_future(here.recall("s:c1", "t1", "mode"))
        await asyncio.sleep(0)
        still_waiting = not waiting.done()
        answered(True)
        taken = await waiting
        failed = here.sending("s:c2", "t1", {"mode": "{}"})
        assert failed is not None
        refused = asyncio.ensure_future(here.recall("s:c2", "t1", "mode"))
        failed(False)
        unrelated(True)
        return still_waiting, taken and taken.get("mode"), await refused

    assert asyncio.run(scenario()) == (True, {"mode": "oferta", "_v": 1}, None)


def test_only_the_newest_conversations_and_the_slices_recalled_are_kept() -> None:
    here = CommittedHere(kept=2)  # the mode only, as the services recall it
    assert here.sending("c0", "t", {"memory": "{}", "triage": "{}"}) is None
    for conversation in ("c1", "c2", "c3"):
        here.note(conversation, "t", {"mode": "{}"})
    here.note("c2", "t", {"mode": "{}"})  # c2 is the newest now
    here.note("c4", "t", {"mode": "{}"})
    here.note("c4", "t", {"memory": "{}"})  # not kept: c4 stays as it was

    async def recalled() -> list[bool]:
        return [await here.recall(c, "t", "mode") is not None for c in ("c1", "c2", "c3", "c4")]

    assert asyncio.run(recalled()) == [False, True, False, True]
    assert asyncio.run(here.recall("c4", "t", "memory")) is None
