"""Browsing and running under load, with faults, on the fleet and on one process.

The fleet: two uvicorn replicas (RUN_QUEUE=redis, the PostgreSQL at DATABASE_URL), a
redis-server, and a CPU runner agent in front of a real sandbox worker. Faults come at fixed
times: the agent is SIGKILLed (and restarted), redis-server is killed (and restarted), then
wiped (FLUSHALL: every job, marker and claim lost), and one replica is SIGKILLed for good.
Clients move to the other replica when one does not answer, as a load balancer would. The
same load then runs against one process (RUN_QUEUE=local, SQLite, the same worker) with no
faults. Prints one table per set-up: each phase's page
requests, 5xx, page p50/p99, and runs accepted and finished; then run latency, and how many
times each accepted run's code reached the worker (counted on the worker's socket, through a
proxy in front of it: each run's code is unique), which must be exactly once.

    sudo .ci/postgres .venv/bin/python bench/fleet_load.py [--seconds 60]
        [--browsers 50] [--runners 10]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import signal
import socket
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

# isort: off
from worker import started_worker  # puts the checkout on sys.path
from tests.support.processes import start_web
from tests.support.redis_server import RedisServer, start_agent

# isort: on

PAGES = ["/", "/items", "/items/batch-normalization", "/items?q=gradient", "/api/items/dropout"]
CODE = "print({nonce!r}, sum(range(1000)))"  # unique per run: its executions are counted
POST_TRIES = 5  # a client whose POST got no answer sends it again, with the same key
ENV = {
    "SANDBOX_AUTOSTART": "false",
    "SECRET_KEY": "one-key-for-every-replica-of-the-bench",
    "RUNS_PER_MINUTE": "100000",
    "RUNS_PER_MINUTE_PER_CLIENT": "100000",
    "CONCURRENT_RUNS": "1000",
    "CONCURRENT_RUNS_PER_CLIENT": "1000",
    "STREAMS_PER_VISITOR": "1000",
    "FLEET_HEARTBEAT_SECONDS": "0.5",
    "FLEET_LEASE_SECONDS": "2.0",
    "LOG_FORMAT": "json",
}


@dataclass
class Tally:
    """What the clients saw, each entry stamped with seconds since the load began."""

    started: float = field(default_factory=time.monotonic)
    pages: list[tuple[float, float, int]] = field(default_factory=list)  # at, seconds, status
    accepted: dict[str, tuple[float, dict[str, str]]] = field(default_factory=dict)
    finished: dict[str, tuple[float, float, str]] = field(default_factory=dict)  # at, s, verdict
    refused: list[tuple[float, int]] = field(default_factory=list)  # 503/429 with Retry-After
    codes: dict[str, str] = field(default_factory=dict)  # run id -> its code

    def now(self) -> float:
        return time.monotonic() - self.started


class Balancer:
    """Round-robin over the replicas, skipping one that did not answer for a while."""

    def __init__(self, urls: list[str]) -> None:
        self.urls, self.down_until = urls, dict.fromkeys(urls, 0.0)
        self.turn = 0

    def pick(self) -> str:
        live = [u for u in self.urls if self.down_until[u] <= time.monotonic()] or self.urls
        self.turn += 1
        return live[self.turn % len(live)]

    def failed(self, url: str) -> None:
        self.down_until[url] = time.monotonic() + 3


def start_server(env: dict[str, str], base: Path) -> tuple[subprocess.Popen[bytes], str]:
    return start_web({**ENV, **env}, base, timeout_seconds=180)


async def browse(balancer: Balancer, tally: Tally, until: float) -> None:
    async with httpx2.AsyncClient(timeout=30) as client:
        while tally.now() < until:
            url = balancer.pick()
            began = time.perf_counter()
            try:
                response = await client.get(url + random.choice(PAGES))
            except httpx2.TransportError:
                balancer.failed(url)
                continue
            tally.pages.append((tally.now(), time.perf_counter() - began, response.status_code))


async def follow(balancer: Balancer, run_id: str, owner: dict[str, str]) -> str:
    """Read the run's events until its result, resuming on another replica from the last
    event id when a stream breaks; the verdict."""
    last_id: str | None = None
    while True:
        url = balancer.pick()
        headers = {**owner, **({"Last-Event-ID": last_id} if last_id else {})}
        try:
            async with (
                httpx2.AsyncClient(timeout=60) as client,
                client.stream("GET", f"{url}/api/runs/{run_id}/events", headers=headers) as r,
            ):
                kind = ""
                async for line in r.aiter_lines():
                    if line.startswith("id: "):
                        last_id = line[4:]
                    elif line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: ") and kind == "result":
                        verdict: str = json.loads(line[6:])["verdict"]
                        return verdict
        except httpx2.TransportError:
            balancer.failed(url)
        await asyncio.sleep(0.2)


async def run_code(balancer: Balancer, tally: Tally, until: float, address: str) -> None:
    """Run code again and again as one client from `address`: the runners are different
    people (the sandbox shares its slots fairly between addresses)."""
    while tally.now() < until:
        key = str(uuid.uuid4())
        code = CODE.format(nonce=key)
        began = time.perf_counter()
        response = None
        for _ in range(POST_TRIES):  # as a client would: no answer, the same request again
            url = balancer.pick()
            try:
                # No cookies: a token owns the run. The client closes its transport: one each.
                transport = httpx2.AsyncHTTPTransport(local_address=address)
                async with httpx2.AsyncClient(timeout=30, transport=transport) as client:
                    response = await client.post(
                        f"{url}/api/runs",
                        json={"code": code, "backend": "cpu"},
                        headers={"Idempotency-Key": key},
                    )
                break
            except httpx2.TransportError:
                balancer.failed(url)
        if response is None:
            continue
        if response.status_code in (429, 503):
            tally.refused.append((tally.now(), response.status_code))
            await asyncio.sleep(min(5, int(response.headers.get("retry-after", "1"))))
            continue
        body = response.json()
        owner = {"X-Run-Token": body["token"]}
        tally.accepted[body["id"]] = (tally.now(), owner)
        tally.codes[body["id"]] = code
        verdict = await follow(balancer, body["id"], owner)
        tally.finished[body["id"]] = (tally.now(), time.perf_counter() - began, verdict)


class _Forward(socketserver.BaseRequestHandler):
    """One client connection to the worker, passed through as it is; a run's code counted."""

    server: _CountingServer

    def handle(self) -> None:
        with socket.socket(socket.AF_UNIX) as worker:
            worker.connect(str(self.server.target))
            reader = self.request.makefile("rb")
            first = reader.readline()
            try:
                message = json.loads(first)
            except ValueError:
                message = {}
            if isinstance(message, dict) and message.get("op") == "run":
                with self.server.lock:
                    self.server.executions[str(message["request"].get("code"))] += 1
            worker.sendall(first)
            back = threading.Thread(target=_pump, args=(worker, self.request), daemon=True)
            back.start()
            while chunk := reader.read1(65536):
                worker.sendall(chunk)
            back.join()


class _CountingServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, target: Path) -> None:
        super().__init__(str(path), _Forward)
        self.target = target
        self.lock = threading.Lock()
        self.executions: Counter[str] = Counter()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


@contextmanager
def counting_proxy(target: Path, path: Path) -> Iterator[_CountingServer]:
    """A socket in front of the worker's: what reaches the worker, counted by code."""
    server = _CountingServer(path, target)
    os.chmod(path, 0o666)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def executions_line(tally: Tally, counted: Counter[str]) -> str:
    """How many times each accepted run's code reached the worker."""
    per_run = Counter(counted[code] for code in tally.codes.values())
    ok_never = sum(
        1
        for run_id, code in tally.codes.items()
        if counted[code] == 0 and tally.finished.get(run_id, (0, 0, ""))[2] == "ok"
    )
    spread = ", ".join(f"{n} run(s) {times}×" for times, n in sorted(per_run.items()))
    twice = sum(n for times, n in per_run.items() if times > 1)
    return (
        f"Executions per accepted run, counted on the worker's socket: {spread or 'none'}; "
        f"run twice or more: {twice}; finished ok without reaching the worker: {ok_never}."
    )


async def load(urls: list[str], args: argparse.Namespace, faults: list) -> Tally:  # type: ignore[type-arg]
    tally, balancer = Tally(), Balancer(urls)

    async def inject() -> None:
        for at, _, act in faults:
            await asyncio.sleep(max(0.0, at - tally.now()))
            await asyncio.to_thread(act)

    await asyncio.gather(
        *(browse(balancer, tally, args.seconds) for _ in range(args.browsers)),
        *(
            run_code(balancer, tally, args.seconds, f"127.0.0.{10 + n}")
            for n in range(args.runners)
        ),
        inject(),
    )
    return tally


def pct(values: list[float], q: float) -> str:
    if not values:
        return "–"
    ordered = sorted(values)
    return f"{1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.0f}"


def report(title: str, tally: Tally, bounds: list[tuple[float, str]]) -> None:
    print(f"\n### {title}\n")
    print(
        "| phase | pages | page 5xx | page p50 ms | page p99 ms | runs accepted"
        " | of those finished | refused (503/429) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")  # fmt: skip
    edges = [0.0, *(at for at, _ in bounds), float("inf")]
    names = ["start", *(name for _, name in bounds)]
    for (low, high), name in zip(itertools.pairwise(edges), names, strict=False):
        pages = [p for p in tally.pages if low <= p[0] < high]
        accepted = [i for i, (at, _) in tally.accepted.items() if low <= at < high]
        finished = [i for i in accepted if i in tally.finished]
        refused = [r for r in tally.refused if low <= r[0] < high]
        fives = sum(1 for p in pages if p[2] >= 500)
        seconds = [p[1] for p in pages]
        print(f"| {name} | {len(pages)} | {fives} | {pct(seconds, 0.5)} | {pct(seconds, 0.99)} "
              f"| {len(accepted)} | {len(finished)} | {len(refused)} |")  # fmt: skip
    latency = [s for _, s, _ in tally.finished.values()]
    verdicts = statistics.multimode([v for _, _, v in tally.finished.values()]) or ["–"]
    ends = [v for _, _, v in tally.finished.values()]
    counts = {v: ends.count(v) for v in sorted(set(ends))}
    print(f"\nRuns: {len(tally.accepted)} accepted, {len(tally.finished)} finished "
          f"({counts}); run latency, request to result: p50 {pct(latency, 0.5)} ms, "
          f"p99 {pct(latency, 0.99)} ms (most common verdict: {verdicts[0]}).")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--browsers", type=int, default=50)
    parser.add_argument("--runners", type=int, default=10)
    args = parser.parse_args()
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url.startswith("postgresql"):
        sys.exit("run it under .ci/postgres (DATABASE_URL must name a PostgreSQL database)")
    base = Path(tempfile.mkdtemp(prefix="backprop-fleet-bench-"))
    processes: list[subprocess.Popen[bytes]] = []
    with (
        started_worker() as worker_socket,
        counting_proxy(worker_socket, base / "counted.sock") as counted,
    ):
        socket_path = base / "counted.sock"
        redis = RedisServer(base / "redis")
        redis.start()
        fleet_env = {"DATABASE_URL": database_url, "RUN_QUEUE": "redis", "REDIS_URL": redis.url}
        a, url_a = start_server(fleet_env, base / "a")  # migrates and imports first
        b, url_b = start_server({**fleet_env, "IMPORT_ON_START": "false"}, base / "b")
        processes += [a, b]

        def agent() -> subprocess.Popen[bytes]:
            return start_agent(
                redis.url, base / "agent.log", executor="socket", socket_path=socket_path,
                slots=2, heartbeat=0.5, lease=2.0,
            )  # fmt: skip

        agents = [agent()]
        time.sleep(3)
        s = args.seconds

        def kill_agent() -> None:
            agents[-1].kill()

        def restart_agent() -> None:
            agents.append(agent())

        def restart_redis() -> None:
            redis.start()

        faults = [
            (0.25 * s, "agent SIGKILLed", kill_agent),
            (0.25 * s + 3, "agent restarted", restart_agent),
            (0.5 * s, "redis killed", redis.kill),
            (0.5 * s + 2, "redis restarted", restart_redis),
            (0.625 * s, "redis wiped", lambda: redis.client().flushall()),
            (0.75 * s, "replica b SIGKILLed", lambda: os.kill(b.pid, signal.SIGKILL)),
        ]
        tally = asyncio.run(load([url_a, url_b], args, faults))
        time.sleep(10)  # runs accepted at the very end finish
        title = (
            f"Fleet: 2 replicas, PostgreSQL, Redis, 1 CPU agent ({args.browsers} browsers, "
            f"{args.runners} runners, {s:.0f} s)"
        )
        report(title, tally, [(at, n) for at, n, _ in faults])
        print("\n" + executions_line(tally, counted.executions))
        for process in [*processes, *agents]:
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=20)
        redis.stop()

        one_env = {"DATABASE_URL": f"sqlite:///{base / 'one.db'}", "RUN_QUEUE": "local",
                   "SANDBOX_SOCKET": str(socket_path)}  # fmt: skip
        single, url = start_server(one_env, base / "one")
        try:
            tally = asyncio.run(load([url], args, []))
            report("One process: SQLite, the worker's socket, no faults", tally, [])
            print("\n" + executions_line(tally, counted.executions))
        finally:
            single.terminate()
            single.wait(timeout=20)


if __name__ == "__main__":
    main()
