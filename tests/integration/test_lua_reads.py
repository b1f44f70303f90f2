"""What the scripts read off stored JSON without decoding it (``shared/lua.py``): a plan's
expected sources (``expected_of``), from its text only where that text can mean nothing else
(a member of its top level), and decoded otherwise; the turn the meta slice names
(``names_turn``), for a commit of a turn or of an event (no turn)."""

from __future__ import annotations

import json

from redis.asyncio import Redis

from shared.lua import register

NOW_MS = 1_800_000_000_000


async def merge_add(redis: Redis, key: str, field: str, value: str) -> list[object]:
    scripts = register(redis)
    result = await scripts.merge_add(keys=[key], args=[field, value, 60, NOW_MS, 30_000])
    return [v.decode() if isinstance(v, bytes) else v for v in result]


def plan(expected: list[str], **json_options: object) -> str:
    body = {"v": 1, "kind": "plan", "turn_id": "t1", "conversation_id": "c1"}
    return json.dumps({**body, "expected": expected, "parts": [], "journal": []}, **json_options)


async def test_a_compact_plan_waits_for_each_expected_part(
    redis: Redis, unique_prefix: str
) -> None:
    key = f"{unique_prefix}merge:t1"
    await merge_add(redis, key, "turn", "{}")
    assert await merge_add(
        redis, key, "plan", plan(["trial", "mode_router"], separators=(",", ":"))
    ) == ["wait"]
    assert await merge_add(redis, key, "part:trial", "{}") == ["wait"]
    assert (await merge_add(redis, key, "part:mode_router", "{}"))[0] == "complete"


async def test_a_plan_whose_expected_comes_after_a_nested_object_is_decoded(
    redis: Redis, unique_prefix: str
) -> None:
    """A nested part naming "expected" before the plan's own list: the plan's list counts."""
    key = f"{unique_prefix}merge:t2"
    text = json.dumps(
        {"parts": [{"expected": ["faq"]}], "v": 1, "kind": "plan", "expected": ["trial"]}
    )
    await merge_add(redis, key, "turn", "{}")
    assert await merge_add(redis, key, "plan", text) == ["wait"]
    assert await merge_add(redis, key, "part:faq", "{}") == ["wait"]
    assert (await merge_add(redis, key, "part:trial", "{}"))[0] == "complete"


async def test_a_spaced_plan_is_read_as_a_compact_one(redis: Redis, unique_prefix: str) -> None:
    key = f"{unique_prefix}merge:t3"
    await merge_add(redis, key, "turn", "{}")
    assert await merge_add(redis, key, "plan", plan(["faq"])) == ["wait"]
    assert (await merge_add(redis, key, "part:faq", "{}"))[0] == "complete"


async def commit_mode(redis: Redis, prefix: str, outbox: str) -> list[object]:
    """``COMMIT`` of one slice on a state whose meta slice names turn ``t1``."""
    state = f"{prefix}state"
    await redis.hset(state, mapping={"meta": json.dumps({"turn_id": "t1", "_v": 1})})
    scripts = register(redis)
    args = [1, "mode", 0, '{"mode":"oferta","_v":1}', "[]", 60, 100, 60, "", "", 0, 1000, 60]
    result = await scripts.commit(
        keys=[state, f"{prefix}{outbox}", f"{prefix}journal"], args=[*args, NOW_MS, 30_000]
    )
    return [v.decode() if isinstance(v, bytes) else v for v in result]


async def test_a_commit_for_the_meta_slices_turn_is_made(redis: Redis, unique_prefix: str) -> None:
    assert (await commit_mode(redis, unique_prefix, "out:t1:mode_router"))[0] == 1


async def test_a_commit_for_no_turn_is_made(redis: Redis, unique_prefix: str) -> None:
    """An event's commit: its outbox key names an event, not a turn."""
    assert (await commit_mode(redis, unique_prefix, "out:event:e1:mode_router"))[0] == 1
