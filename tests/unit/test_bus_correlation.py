"""A message's correlation id (``shared.bus.correlation_id``): no two alike in a process, nor
between a process and the replicas forked from it, which start with the parent's memory."""

from __future__ import annotations

import os

from shared.bus import correlation_id


def test_correlation_ids_differ_within_a_process_and_across_a_fork() -> None:
    mine = {correlation_id() for _ in range(1000)}
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a replica forked by the supervisor
        os.close(read)
        os.write(write, "\n".join(correlation_id() for _ in range(1000)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        theirs = set(pipe.read().split("\n"))
    os.waitpid(pid, 0)
    assert len(mine) == 1000 and len(theirs) == 1000
    assert not mine & theirs
    assert {i.rsplit("-", 1)[0] for i in theirs} != {i.rsplit("-", 1)[0] for i in mine}
