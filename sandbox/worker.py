"""The sandbox worker: a Unix-socket service that queues runs per backend and executes each
in a jail forked from that backend's warm zygote.

    python -m sandbox --socket PATH [--cpu-slots N] [--max-queue N]

One JSON message per line. A client sends {"op": "status"} or {"op": "run", "request": {...}}
(and, during a run, {"op": "cancel"}); a run answers with events and ends with its result.
See sandbox/README.md for the whole protocol."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox import host
from sandbox.protocol import (
    RUN_ID_RE,
    Backend,
    Limits,
    RunResult,
    Verdict,
    check_code,
    decode,
    encode,
)
from sandbox.runner import Emit, RunContext, execute
from sandbox.zygote_client import Zygote, ZygoteDied

log = logging.getLogger("sandbox")

FIRST_UID = 61000  # each slot runs code as its own unprivileged user, FIRST_UID + slot
ZYGOTE_MAX_RUNS = 500
ZYGOTE_MAX_AGE_SECONDS = 3600


def zygote_env() -> dict[str, str]:
    """The whole environment a zygote (and so every jail) starts from: nothing of ours."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def readonly_paths() -> list[str]:
    """Host paths a jail sees, read-only: the system, Python and its installed packages."""
    # Of /sys only the CPU topology (thread pools size themselves from it), not the host's
    # network interfaces and devices.
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/sys/devices/system/cpu"]
    for prefix in {sys.base_prefix, sys.prefix}:
        if prefix not in paths:
            paths.append(prefix)
    return paths


@dataclass
class Pool:
    """One backend: its zygote, its slots and its queue of waiting runs."""

    backend: str
    device: str
    slots: int
    max_queue: int
    zygote: Zygote | None = None
    free_slots: list[int] = field(default_factory=list)
    waiting: deque[tuple[asyncio.Future[int], Emit]] = field(default_factory=deque)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.free_slots = list(range(self.slots))

    async def ensure_zygote(self) -> Zygote:
        """The warm process, started or replaced when missing, dead, old or worn."""
        async with self.lock:
            z = self.zygote
            due = z is not None and (
                z.runs >= ZYGOTE_MAX_RUNS
                or time.monotonic() - z.started_at > ZYGOTE_MAX_AGE_SECONDS
            )
            if z is None or not z.alive() or due:
                if z is not None:
                    log.info(
                        "replacing the %s zygote (alive=%s, runs=%d)",
                        self.backend,
                        z.alive(),
                        z.runs,
                    )
                    await asyncio.to_thread(z.stop)
                fresh = Zygote(self.backend, zygote_env())
                await asyncio.to_thread(fresh.wait_ready)
                log.info("%s zygote ready in %.1f s", self.backend, fresh.warm_up_seconds)
                self.zygote = z = fresh
            return z

    async def acquire(self, emit: Emit) -> int:
        """Wait for a slot (FIFO), telling the client its place in the queue."""
        if self.free_slots and not self.waiting:
            return self.free_slots.pop(0)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.waiting.append((future, emit))
        await self._announce()
        try:
            return await future
        except asyncio.CancelledError:
            with contextlib.suppress(ValueError):
                self.waiting.remove((future, emit))
            if future.done() and not future.cancelled():
                self.release(future.result())
            raise

    def release(self, slot: int) -> None:
        while self.waiting:
            future, _ = self.waiting.popleft()
            if not future.done():
                future.set_result(slot)
                asyncio.get_running_loop().create_task(self._announce())
                return
        self.free_slots.append(slot)

    async def _announce(self) -> None:
        for position, (future, emit) in enumerate(list(self.waiting), start=1):
            if not future.done():
                with contextlib.suppress(ConnectionError):
                    await emit({"type": "queued", "position": position})


class Worker:
    """Holds the pools and answers clients."""

    def __init__(self, *, cpu_slots: int, max_queue: int, state_dir: Path) -> None:
        self.problem = host.isolation_problem()
        self.state_dir = state_dir
        self.root_dir = state_dir / "root"
        self.readonly = readonly_paths()
        self.pools: dict[str, Pool] = {}
        if self.problem is None:
            state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            if state_dir.is_symlink() or state_dir.stat().st_uid != os.geteuid():
                self.problem = f"the state folder {state_dir} does not belong to this user"
            else:
                state_dir.chmod(0o700)
                self.root_dir.mkdir(exist_ok=True)
        if self.problem is None:
            self.pools["cpu"] = Pool("cpu", host.cpu_name(), cpu_slots, max_queue)
        self.max_queue = max_queue

    async def start(self) -> None:
        if self.problem:
            log.error("refusing to run code: %s", self.problem)
            return
        await self.pools["cpu"].ensure_zygote()
        gpu = await asyncio.to_thread(host.probe_cuda, zygote_env())
        if gpu:
            # GPU runs take turns: one at a time per device, so timings mean something.
            self.pools["cuda"] = Pool("cuda", gpu, 1, self.max_queue)
            await self.pools["cuda"].ensure_zygote()

    def status(self) -> dict[str, Any]:
        if self.problem:
            return {
                "available": False,
                "backends": [],
                "device": None,
                "devices": {},
                "detail": f"This server cannot isolate code, so it runs none: {self.problem}.",
            }
        backends = list(self.pools)
        return {
            "available": True,
            "backends": backends,
            "device": self.pools["cuda" if "cuda" in self.pools else "cpu"].device,
            "devices": {name: pool.device for name, pool in self.pools.items()},
            "queue": {name: len(pool.waiting) for name, pool in self.pools.items()},
            "detail": "ready",
        }

    def pick(self, backend: str) -> Pool | None:
        if backend == Backend.AUTO:
            return self.pools.get("cuda") or self.pools.get("cpu")
        return self.pools.get(backend)

    async def run(
        self, message: dict[str, Any], emit: Emit, ctx_holder: list[RunContext]
    ) -> RunResult:
        request = message.get("request")
        if not isinstance(request, dict):
            request = {}
        run_id = str(request.get("id") or f"anon-{time.monotonic_ns()}")
        backend = str(request.get("backend", "auto"))

        def refuse(verdict: Verdict, detail: str) -> RunResult:
            return RunResult(
                id=run_id,
                verdict=verdict,
                exit_code=None,
                stdout="",
                stderr="",
                wall_ms=0,
                backend=backend,
                device="",
                detail=detail,
            )

        if not RUN_ID_RE.match(run_id):
            return refuse(Verdict.REJECTED, "A run id is 1 to 64 letters, digits, - or _.")
        problem = check_code(request.get("code"))
        if problem:
            return refuse(Verdict.REJECTED, problem.capitalize() + ".")
        try:
            limits = Limits.from_json(request.get("limits"))
        except ValueError as exc:
            return refuse(Verdict.REJECTED, f"Bad limits: {exc}.")
        if backend not in {b.value for b in Backend}:
            return refuse(Verdict.REJECTED, f"Unknown backend '{backend}': use cpu, cuda or auto.")
        if self.problem:
            return refuse(
                Verdict.INTERNAL_ERROR,
                f"This server cannot isolate code, so it runs none: {self.problem}.",
            )
        pool = self.pick(backend)
        if pool is None:
            return refuse(Verdict.REJECTED, "This server has no CUDA GPU: choose the cpu backend.")
        if not pool.free_slots and len(pool.waiting) >= pool.max_queue:
            await emit({"type": "busy", "retry_after": 5})
            return refuse(Verdict.REJECTED, "The queue is full; try again in a few seconds.")
        slot = await pool.acquire(emit)
        try:
            try:
                zygote = await pool.ensure_zygote()
            except ZygoteDied as exc:
                return refuse(Verdict.INTERNAL_ERROR, f"The sandbox could not start: {exc}")
            ctx = RunContext(
                run_id=run_id,
                code=request["code"],
                backend=pool.backend,
                device=pool.device,
                limits=limits,
                uid=FIRST_UID + slot,
                root_dir=str(self.root_dir),
                readonly_paths=self.readonly,
            )
            ctx_holder.append(ctx)
            result = await execute(ctx, zygote, emit)
            if result.verdict is Verdict.INTERNAL_ERROR and not zygote.alive():
                pool.zygote = None  # replaced on the next run
            return result
        finally:
            pool.release(slot)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One client connection: one status query or one run."""

        async def emit(event: dict[str, Any]) -> None:
            writer.write(encode(event))
            await writer.drain()

        try:
            line = await reader.readline()
            if not line:
                return
            try:
                message = decode(line)
            except ValueError:
                await emit({"type": "error", "detail": "each message must be one JSON object"})
                return
            if message.get("op") == "status":
                await emit({"type": "status", **self.status()})
                return
            if message.get("op") != "run":
                await emit({"type": "error", "detail": "op must be 'status' or 'run'"})
                return
            holder: list[RunContext] = []
            run = asyncio.create_task(self.run(message, emit, holder))
            watch = asyncio.create_task(reader.readline())  # a cancel, or the client leaving
            done, _ = await asyncio.wait({run, watch}, return_when=asyncio.FIRST_COMPLETED)
            if watch in done and not run.done():
                if holder:
                    holder[0].stop("cancel")
                else:
                    run.cancel()
            try:
                result = await run
            except Exception as exc:  # a bug of ours must still end in a result
                log.exception("run failed inside the worker")
                result = RunResult(
                    id="",
                    verdict=Verdict.INTERNAL_ERROR,
                    exit_code=None,
                    stdout="",
                    stderr="",
                    wall_ms=0,
                    backend="",
                    device="",
                    detail=f"The sandbox failed: {type(exc).__name__}.",
                )
            except asyncio.CancelledError:
                request = message.get("request")
                request = request if isinstance(request, dict) else {}
                result = RunResult(
                    id=str(request.get("id", "")),
                    verdict=Verdict.KILLED,
                    exit_code=None,
                    stdout="",
                    stderr="",
                    wall_ms=0,
                    backend=str(request.get("backend", "")),
                    device="",
                    detail="Cancelled while waiting in the queue.",
                )
            watch.cancel()
            await emit({"type": "result", "result": result.to_json()})
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


async def serve(socket_path: Path, worker: Worker) -> None:
    await worker.start()
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        socket_path.unlink()
    server = await asyncio.start_unix_server(worker.handle, path=str(socket_path), limit=1 << 20)
    os.chmod(socket_path, 0o600)
    log.info("sandbox worker listening on %s (%s)", socket_path, worker.status()["detail"])
    async with server:
        await server.serve_forever()


def default_state_dir() -> Path:
    """Root's own runtime folder rather than a guessable path in a world-writable /tmp."""
    if os.geteuid() == 0:
        return Path("/run/backprop-sandbox")
    return Path(tempfile.gettempdir()) / f"backprop-sandbox-{os.getuid()}"
