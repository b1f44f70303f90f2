"""Where one service's CPU goes during the max phase: py-spy samples, summed per function.

``orquestra bench --profile merger`` attaches ``py-spy record`` (not a project dependency:
``pip install py-spy``) to that service while the max phase runs and keeps its "raw" output:
one line per distinct stack, frames separated by ``;``, then the sample count. The summary
here is pure: the share of samples in which a function appears anywhere in the stack
(inclusive: what it costs with everything it calls) and at the top (self: where the CPU is
actually spent), with library paths shortened so the report names files a reader can open.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

# "function (path/to/file.py:123)" → ("function", "path/to/file.py")
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<path>[^():]+)(?::\d+)?\)$")
_SHORTEN = ("site-packages/", "lib/python3.11/", "/work/main/")

# Where a sample's CPU goes, named by the innermost frame (leaf upwards) whose file matches:
# a socket write inside redis-py counts for the Redis client, the same write inside uvicorn for
# the HTTP stack. Checked in this order for each frame.
AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("thread hop (a sync function run in a worker thread)",
     ("anyio/to_thread.py", "fast_depends/utils.py", "starlette/concurrency.py")),
    ("Redis client (redis-py)", ("redis/",)),
    ("pydantic", ("pydantic/", "pydantic_core/")),
    ("FastStream and fast_depends", ("faststream/", "fast_depends/")),
    ("HTTP stack (uvicorn, FastAPI, Starlette)",
     ("uvicorn/", "fastapi/", "starlette/", "h11/", "httptools/")),
    ("logging (structlog)", ("structlog/", "logging/")),
    ("orquestra code (services/, shared/)", ("services/", "shared/")),
    ("JSON", ("json/",)),
    ("event loop waiting (epoll)", ("selectors.py",)),
)  # fmt: skip
OTHER = "other (asyncio, stdlib)"
# The event loop's frame: asyncio's ``run_forever``; under uvloop (every service) the loop is C
# and the first Python frame below it is ``asyncio.Runner.run`` (uvicorn's ``asyncio_run`` too).
LOOP_ROOTS = ("run_forever", "Runner.run")


@dataclass(frozen=True)
class ProfileSummary:
    samples: int
    inclusive: list[tuple[float, str]]  # (share of samples, "function (file)")
    self_time: list[tuple[float, str]]
    areas: list[tuple[float, str]]

    def as_dict(self) -> dict[str, object]:
        return {
            "samples": self.samples,
            "areas": [[round(share, 4), name] for share, name in self.areas],
            "inclusive": [[round(share, 4), name] for share, name in self.inclusive],
            "self": [[round(share, 4), name] for share, name in self.self_time],
        }


def frame_name(frame: str) -> str:
    """``name (short/path.py)`` without the line number, the path cut after site-packages."""
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    path = match["path"]
    for marker in _SHORTEN:
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{match['name']} ({path})"


def area(frames: list[str]) -> str:
    """The area of one stack (shortened frame names, root first), from its leaf upwards."""
    for frame in reversed(frames):
        for name, markers in AREAS:
            if any(marker in frame for marker in markers):
                return name
    return OTHER


def summarize_raw(
    lines: Iterable[str], *, roots: tuple[str, ...] = LOOP_ROOTS, top: int = 25
) -> ProfileSummary:
    """Inclusive and self shares of the stacks under the event loop (the first frame naming
    one of ``roots``), so start-up imports and idle threads are left out."""
    inclusive: Counter[str] = Counter()
    self_time: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    total = 0
    for line in lines:
        stack, _, count = line.rstrip().rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        starts = [i for i, frame in enumerate(frames) if any(root in frame for root in roots)]
        if not starts:
            continue
        names = [frame_name(frame) for frame in frames[starts[0] + 1 :]]
        if not names:
            continue
        n = int(count)
        total += n
        for name in set(names):
            inclusive[name] += n
        self_time[names[-1]] += n
        areas[area(names)] += n
    if total == 0:
        return ProfileSummary(0, [], [], [])
    return ProfileSummary(
        samples=total,
        inclusive=[(n / total, name) for name, n in inclusive.most_common(top)],
        self_time=[(n / total, name) for name, n in self_time.most_common(top)],
        areas=[(n / total, name) for name, n in areas.most_common()],
    )
