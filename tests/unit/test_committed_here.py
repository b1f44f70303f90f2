"""What a process remembers of its own commits (``shared.state.CommittedHere``): the slices
each conversation's last committed turn wrote, for another service of the process to take
instead of reading them."""

from __future__ import annotations

from shared.state import CommittedHere


def test_the_commits_of_one_turn_are_remembered_together_and_a_new_turn_starts_over() -> None:
    here = CommittedHere()
    here.note("s:c1", "t1", {"mode": '{"mode": "oferta", "_v": 3}'})
    here.note("s:c1", "t1", {"memory": '{"facts": {}, "_v": 2}'})
    recalled = here.recall("s:c1", "t1", "mode", "memory")
    assert recalled is not None
    assert recalled.get("mode") == {"mode": "oferta", "_v": 3}
    assert recalled.version("memory") == 2
    assert recalled.raw["mode"] == '{"mode": "oferta", "_v": 3}'
    assert here.recall("s:c1", "t2", "mode") is None  # another turn
    assert here.recall("s:c2", "t1", "mode") is None  # another conversation
    here.note("s:c1", "t2", {"memory": '{"facts": {}, "_v": 3}'})
    assert here.recall("s:c1", "t2", "mode") is None  # t2's commits wrote no mode
    assert here.recall("s:c1", "t1", "mode") is None  # t1 is forgotten


def test_only_the_newest_conversations_are_kept() -> None:
    here = CommittedHere(kept=2)
    for conversation in ("c1", "c2", "c3"):
        here.note(conversation, "t", {"mode": "{}"})
    here.note("c2", "t", {"memory": "{}"})  # c2 is the newest now
    here.note("c4", "t", {"mode": "{}"})
    assert [here.recall(c, "t", "mode") is not None for c in ("c1", "c2", "c3", "c4")] == [
        False,
        True,
        False,
        True,
    ]
