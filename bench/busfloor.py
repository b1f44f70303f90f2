"""Baseline B, the framework floor: a bare FastStream Redis Streams chain shaped like a turn.

A turn with one specialist takes these hops (``shared/keys.py``'s topology):

    gateway ─▶ turns ─┬▶ triage ─▶ tasks ─▶ trial ─▶ merge ─┐
                      └▶ mode_router ────────────▶ merge ───┤
                         merger ◀────────────────── merge ◀─┘ ─▶ outbound ─▶ gateway

six messages published (turn, task, plan, two parts, reply), seven deliveries (two groups on
turns, one on tasks, three on merge, one on outbound), four hops on the critical path. Here each
role is its own process, like the services, subscribed with the same options the product's bus
uses (consumer groups, ``max_records`` = ``max_workers`` = ``ORQ_WORKERS``, ack after the
handler, approximate ``MAXLEN``, no dependency injection), and its handler only forwards: the
merger-like role counts three inputs per turn in memory and then publishes the reply.

``python -m bench.busfloor ROLE`` runs one role; ``drive`` is the gateway-like role that sends
turns in a closed loop and prints its measurements as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import time
import uuid

import uvloop
from faststream import AckPolicy
from faststream.redis import RedisBroker, StreamSub

from bench.stats import TurnSample, summarize

ROLES = ("triage", "trial", "mode_router", "merger")
PUBLISHED_PER_TURN = 6
DELIVERED_PER_TURN = 7
MERGE_INPUTS = 3  # the plan, the trial part, the mode_router part
MAXLEN = 100_000


class Chain:
    def __init__(self, redis_url: str, prefix: str, workers: int) -> None:
        self.broker = RedisBroker(redis_url, logger=None, apply_types=False)
        self.prefix = prefix
        self.workers = workers
        self.consumer = f"{os.getpid()}-{uuid.uuid4().hex[:6]}"

    def stream(self, name: str) -> str:
        return f"{self.prefix}floor.{name}"

    async def publish(self, stream: str, body: bytes) -> None:
        await self.broker.publish(body, stream=self.stream(stream), maxlen=MAXLEN)

    def subscribe(self, stream: str, group: str, handler) -> None:
        sub = StreamSub(
            self.stream(stream),
            group=group,
            consumer=self.consumer,
            polling_interval=1000,
            max_records=self.workers,
        )
        self.broker.subscriber(
            stream=sub, ack_policy=AckPolicy.NACK_ON_ERROR, max_workers=self.workers
        )(handler)


def wire(chain: Chain, role: str) -> None:
    if role == "triage":

        async def triage(body: bytes) -> None:
            await chain.publish("tasks", body)
            await chain.publish("merge", body)

        chain.subscribe("turns", "triage", triage)
    elif role == "mode_router":

        async def mode_router(body: bytes) -> None:
            await chain.publish("merge", body)

        chain.subscribe("turns", "mode_router", mode_router)
    elif role == "trial":

        async def trial(body: bytes) -> None:
            await chain.publish("merge", body)

        chain.subscribe("tasks", "trial", trial)
    elif role == "merger":
        seen: dict[bytes, int] = {}

        async def merge(body: bytes) -> None:
            count = seen.get(body, 0) + 1
            if count < MERGE_INPUTS:
                seen[body] = count
                return
            seen.pop(body, None)
            await chain.publish("outbound", body)

        chain.subscribe("merge", "merger", merge)
    else:
        raise ValueError(f"unknown role {role!r}")


async def serve(args: argparse.Namespace) -> None:
    chain = Chain(args.redis_url, args.prefix, args.workers)
    wire(chain, args.role)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await chain.broker.start()
    print("ready", flush=True)
    await stopping.wait()
    await chain.broker.stop()


async def drive(args: argparse.Namespace) -> dict[str, object]:
    chain = Chain(args.redis_url, args.prefix, args.workers)
    waiting: dict[bytes, asyncio.Future[None]] = {}

    async def outbound(body: bytes) -> None:
        waiter = waiting.pop(body, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    chain.subscribe("outbound", "gateway", outbound)
    await chain.broker.start()
    results: dict[str, object] = {}
    cpu = os.times()
    completed = 0
    for spec in args.phase:
        name, users, seconds = spec.split(":")
        samples: list[TurnSample] = []
        started = time.perf_counter()
        stop_at = started + float(seconds)

        async def loop_turns(samples: list[TurnSample], stop_at: float) -> None:
            while time.perf_counter() < stop_at:
                turn = uuid.uuid4().hex.encode()
                waiter = asyncio.get_running_loop().create_future()
                waiting[turn] = waiter
                t0 = time.perf_counter()
                await chain.publish("turns", turn)
                await asyncio.wait_for(waiter, 30)
                samples.append(TurnSample(started=t0, latency=time.perf_counter() - t0))

        await asyncio.gather(*(loop_turns(samples, stop_at) for _ in range(int(users))))
        begin = started + min(1.0, float(seconds) / 2)
        summary = summarize(samples, users=int(users), begin=begin, end=stop_at).as_dict()
        summary["messages_per_s"] = summary["turns_per_s"] * DELIVERED_PER_TURN
        results[name] = summary
        completed += len(samples)
    after = os.times()
    results["driver_cpu_s"] = (after.user - cpu.user) + (after.system - cpu.system)
    results["chains"] = completed
    results["deliveries_per_chain"] = DELIVERED_PER_TURN
    await chain.broker.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.busfloor")
    parser.add_argument("role", choices=[*ROLES, "drive"])
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--phase", action="append", default=[], help="NAME:USERS:SECONDS")
    args = parser.parse_args()
    if args.role == "drive":
        print(json.dumps(uvloop.run(drive(args))), flush=True)
    else:
        uvloop.run(serve(args))


if __name__ == "__main__":
    main()
