"""Baseline A, the logic floor: the services' own code in one process, without the bus.

Each service's ``build(rt)`` from its ``app.py`` is called on a runtime whose bus is
:class:`LocalBus`: ``publish`` hands the payload straight to the handlers subscribed to that
stream in this process (one task per handler, as a consumer group would), instead of going
through a Redis stream. Everything else is the product's code path: the gateway's turn keeper
(ingest, lease, release), every handler's ``handle_once`` commit, the merger's Lua aggregation,
the HTTP channel's delivery — with state in Redis. What is left out is exactly what the bus adds:
stream writes and reads, acknowledgements, FastStream's dispatch, and one process per service.

``python -m bench.inproc`` runs load phases on it and prints their summaries as JSON, so the
benchmark measures it in a process of its own, like any other component. It logs warnings only:
the services' per-turn INFO lines are operations, not logic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime

import uvloop
from pydantic import BaseModel

from bench.conversations import DEFAULT_MIX, Conversation, Message, conversation
from bench.load import LoadPlan, Reply, run_load
from services.gateway.app import build as build_gateway
from services.registry import BY_NAME, SPECS, TOPOLOGY
from shared.contracts import InboundMessage, new_id, utcnow
from shared.contracts import Reply as ReplyContract
from shared.logs import setup_logging
from shared.service import Lookup, Runtime, make_runtime
from shared.settings import Settings

Handler = Callable[[bytes], Awaitable[None]]


def only(exported: object) -> Lookup:
    """A shared loop's lookup in a run of one business: its one object."""
    return lambda _tenant: exported


class Router:
    """Which handlers read which stream, shared by every service of the process."""

    def __init__(self) -> None:
        self.handlers: dict[str, list[Handler]] = {}
        self.delivered: dict[str, Callable[[bytes], None]] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.errors: list[str] = []

    def dispatch(self, stream: str, body: bytes) -> None:
        handlers = self.handlers.get(stream, [])
        observer = self.delivered.get(stream)
        if not handlers and observer is None:
            return
        task = asyncio.get_running_loop().create_task(self._deliver(stream, handlers, body))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _deliver(self, stream: str, handlers: list[Handler], body: bytes) -> None:
        results = await asyncio.gather(*(h(body) for h in handlers), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                self.errors.append(f"{stream}: {type(result).__name__}: {result}")
        observer = self.delivered.get(stream)
        if observer is not None:
            observer(body)


class LocalBus:
    """What a service sees of the bus (``shared.bus.Bus``'s interface), backed by a Router."""

    def __init__(self, router: Router, service: str) -> None:
        self.router = router
        self.service = service
        self.consumer = f"{service}-inproc"

    async def publish(
        self,
        stream: str,
        payload: str | BaseModel,
        *,
        pipeline: object = None,
        taking: object = None,
    ) -> None:
        """Dispatched at once, also when the caller batches its Redis commands in ``pipeline``."""
        body = payload.model_dump_json() if isinstance(payload, BaseModel) else payload
        self.router.dispatch(stream, body.encode())

    async def publish_all(self, messages: list[tuple[str, str]]) -> None:
        for stream, payload in messages:
            await self.publish(stream, payload)

    def subscribe(self, stream: str, group: str, handler: Handler) -> None:
        self.router.handlers.setdefault(stream, []).append(handler)


class Pipeline:
    """Every service's shell, wired in one process; ``say`` returns the reply to a message."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.router = Router()
        self.runtimes: list[Runtime] = []
        self.waiting: dict[str, asyncio.Future[Reply]] = {}
        gateway = self._runtime("gateway")
        self.turns = build_gateway(gateway).turns
        for spec in SPECS:
            if spec.in_process:
                runtime = self._runtime(spec.name)
                if not spec.out_of(runtime.pack):
                    spec.builder()(runtime)
        self.router.delivered[gateway.keys.outbound] = self._on_delivered
        self.background: list[asyncio.Task[None]] = []

    def _runtime(self, service: str) -> Runtime:
        rt = make_runtime(BY_NAME[service], self.settings, topology=TOPOLOGY)
        rt.bus = LocalBus(self.router, service)  # type: ignore[assignment]
        self.runtimes.append(rt)
        return rt

    def _on_delivered(self, body: bytes) -> None:
        reply = ReplyContract.model_validate_json(body)
        waiter = self.waiting.pop(reply.conversation_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(Reply(reply.turn_id, reply.text))

    async def start(self) -> None:
        """Run the services' background jobs (sweeper, merge deadlines) as they would run."""
        self.background = [
            asyncio.create_task(job()) for rt in self.runtimes for job in rt.background
        ] + [
            asyncio.create_task(loop(only(rt.exports.get(name))))
            for rt in self.runtimes
            for name, loop in rt.shared_loops.items()
        ]

    async def stop(self) -> None:
        # Cancel until done: on Python 3.11 a cancellation that lands while redis-py finishes
        # a send (``asyncio.wait_for`` under its 5 s socket timeout) can be swallowed.
        pending = set(self.background)
        while pending:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=0.2)
        for rt in self.runtimes:
            for hook in rt.on_stop:
                await hook()
            if rt.llm:
                await rt.llm.aclose()
            await rt.redis.aclose()

    async def say(self, conversation_id: str, message: Message) -> Reply:
        waiter: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self.waiting[conversation_id] = waiter
        received = utcnow()
        inbound = InboundMessage(
            channel="http",
            conversation_id=conversation_id,
            message_id=new_id(),
            text=message.text,
            sent_at=message.sent_at,
            received_at=received,
            contact=conversation_id,
        )
        await self.turns.ingest(inbound)
        return await waiter

    async def close(self) -> None:
        """Sessions share the pipeline; closing one closes nothing."""


async def main_async(args: argparse.Namespace) -> dict[str, object]:
    settings = Settings(
        redis_url=args.redis_url,
        prefix=args.prefix,
        burst_window_ms=args.burst_window_ms,
        burst_fragment_ms=args.burst_fragment_ms,
        nlu_mode="rules",
    )
    pipeline = Pipeline(settings)
    await pipeline.start()
    base = datetime.fromisoformat(args.base)
    indexes = range(args.first_index, sys.maxsize)

    def scripts() -> Iterator[Conversation]:
        return (conversation(i, run_id=args.run_id, base=base, mix=DEFAULT_MIX) for i in indexes)

    async def connect() -> Pipeline:
        return pipeline

    results: dict[str, object] = {}
    conversations = scripts()
    cpu_before = os.times()
    turns = 0
    for spec in args.phase:
        name, users, seconds = spec.split(":")
        plan = LoadPlan(users=int(users), seconds=float(seconds))
        summary, samples = await run_load(connect, plan, conversations)
        results[name] = summary.as_dict()
        turns += len(samples)
    cpu_after = os.times()
    results["turns"] = turns
    await pipeline.stop()
    results["cpu_s"] = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
    results["errors"] = pipeline.router.errors[:5]
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.inproc")
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--run-id", required=True)
    parser.add_argument("--base", required=True, help="business time of conversation 0 (ISO)")
    parser.add_argument("--first-index", type=int, default=0)
    parser.add_argument("--burst-window-ms", type=int, default=0)
    parser.add_argument("--burst-fragment-ms", type=int, default=0)
    parser.add_argument(
        "--phase", action="append", required=True, help="NAME:USERS:SECONDS (repeatable)"
    )
    args = parser.parse_args()
    setup_logging("inproc", "WARNING", True)
    print(json.dumps(uvloop.run(main_async(args))))


if __name__ == "__main__":
    main()
