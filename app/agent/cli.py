"""`backprop agent` (or `python -m app.agent`): run a worker host's runner agent.

    backprop agent --pool cpu --socket /run/backprop/sandbox.sock \
        --redis-url redis://redis:6379/0 --metrics-port 9108

It reads no settings of the web app and is given no database URL: Redis and the worker's
socket are all it knows."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
from pathlib import Path

from redis.asyncio import Redis

from app.agent.agent import Agent
from app.agent.executors import Executor, ScriptExecutor, SocketExecutor
from app.agent.metrics import AgentMetrics
from app.runqueue.fleet import keys
from app.runqueue.fleet.queue import FleetTiming


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pool", choices=keys.POOLS, required=True, help="the pool it serves")
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="the fleet's Redis (default: $REDIS_URL, else a local one)",
    )
    parser.add_argument(
        "--socket",
        type=Path,
        default=Path("/run/backprop/sandbox.sock"),
        help="the sandbox worker's Unix socket on this host",
    )
    parser.add_argument(
        "--executor",
        choices=("socket", "fake"),
        default="socket",
        help="`fake` plays scripted runs instead (no code runs): for tests only",
    )
    parser.add_argument(
        "--slots",
        type=int,
        default=None,
        help="runs it takes at once, at most (default: as many as its worker runs on the pool)",
    )
    parser.add_argument(
        "--heartbeat-seconds", type=float, default=2.0, help="as FLEET_HEARTBEAT_SECONDS"
    )
    parser.add_argument("--lease-seconds", type=float, default=10.0, help="as FLEET_LEASE_SECONDS")
    parser.add_argument("--metrics-host", default="127.0.0.1", help="address /metrics listens on")
    parser.add_argument(
        "--metrics-port", type=int, default=9108, help="port of /metrics; 0 serves none"
    )


async def run_agent(args: argparse.Namespace) -> None:
    executor: Executor = (
        ScriptExecutor(args.pool) if args.executor == "fake" else SocketExecutor(args.socket)
    )
    timing = FleetTiming(heartbeat_seconds=args.heartbeat_seconds, lease_seconds=args.lease_seconds)
    metrics = AgentMetrics()
    if args.metrics_port:
        metrics.serve(args.metrics_host, args.metrics_port)
    redis = Redis.from_url(args.redis_url, decode_responses=True)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    agent = Agent(redis, executor, pool=args.pool, slots=args.slots, timing=timing, metrics=metrics)
    logging.getLogger("backprop.agent").info(
        "agent %s serving the %s pool (%s)",
        agent.agent_id,
        args.pool,
        f"at most {args.slots} runs at once" if args.slots else "as many runs as its worker",
    )
    try:
        await agent.run(stop)
    finally:
        await redis.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="backprop agent", description=__doc__)
    add_arguments(parser)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return start(parser.parse_args(argv), parser)


def start(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Run the agent the parsed arguments describe, until SIGTERM or SIGINT."""
    if (
        (args.slots is not None and args.slots < 1)
        or args.heartbeat_seconds <= 0
        or args.lease_seconds <= args.heartbeat_seconds
    ):
        parser.error("--slots must be at least 1, and --lease-seconds above --heartbeat-seconds")
    asyncio.run(run_agent(args))
    return 0
