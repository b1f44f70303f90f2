"""What ``bench.trace`` counts as a turn's commands among everything ``MONITOR`` shows."""

from bench.trace import MARK, turn_lines


def test_a_turns_commands_leave_out_polling_and_the_marker() -> None:
    seen = [
        "    XREADGROUP GROUP triage c COUNT 16 BLOCK 1000 STREAMS p:turns >",
        "    EVALSHA abc 7 p:{c1}:state",
        "lua HSET p:{c1}:state trial {}",
        "    ZADD p:heartbeats 1.0 merger|m",
        "    ZRANGEBYSCORE p:merge:deadlines -inf 17 LIMIT 0 100 WITHSCORES",
        "    ZADD p:merge:deadlines NX 17 t1",
        "    XREAD BLOCK 30000 COUNT 100 STREAMS p:{c1}:replies 0-0",
        f"    ECHO {MARK}-3",
    ]
    assert turn_lines(seen) == [
        "    EVALSHA abc 7 p:{c1}:state",
        "lua HSET p:{c1}:state trial {}",
        "    ZADD p:merge:deadlines NX 17 t1",
        "    XREAD BLOCK 30000 COUNT 100 STREAMS p:{c1}:replies 0-0",
    ]
