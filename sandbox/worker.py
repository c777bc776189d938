"""The sandbox worker: queues runs per backend and executes each in a jail forked from that
backend's warm zygote.

    python -m sandbox --socket PATH [--cpu-slots N] [--max-queue N]

It listens on its socket at once and warms its zygotes afterwards (importing torch takes
seconds): until they are warm its status says `starting`, and runs that arrive wait for them.
The socket and its connections are server.py's; the protocol is sandbox/protocol/ (see also
sandbox/README.md)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from sandbox import host
from sandbox.pool import Pool
from sandbox.protocol import (
    Backend,
    Busy,
    Emit,
    RunRequest,
    RunResult,
    Verdict,
    WorkerState,
    WorkerStatus,
)
from sandbox.runner import RunContext, execute
from sandbox.zygote_client import ZygoteDied, zygote_env

log = logging.getLogger("sandbox")

FIRST_UID = 61000  # each slot runs code as its own unprivileged user, FIRST_UID + slot
BUSY_RETRY_SECONDS = 5


def readonly_paths() -> list[str]:
    """Host paths a jail sees, read-only: the system, Python and its installed packages."""
    # Of /sys only the CPU topology (thread pools size themselves from it), not the host's
    # network interfaces and devices.
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/sys/devices/system/cpu"]
    for prefix in {sys.base_prefix, sys.prefix}:
        if prefix not in paths:
            paths.append(prefix)
    return paths


def default_state_dir() -> Path:
    """Root's own runtime folder rather than a guessable path in a world-writable /tmp."""
    if os.geteuid() == 0:
        return Path("/run/backprop-sandbox")
    return Path(tempfile.gettempdir()) / f"backprop-sandbox-{os.getuid()}"


class Worker:
    """Holds the pools, says what it can do, and runs requests."""

    def __init__(self, *, cpu_slots: int, max_queue: int, state_dir: Path) -> None:
        self.problem = host.isolation_problem()  # why this host cannot run code at all
        self.failure: str | None = None  # why start-up failed, in words for the client
        self.warming = "waiting to begin"  # what start() is doing, while it is
        # Set when start() is over, however it went: runs wait for it.
        self.ready = asyncio.Event()
        self.root_dir = state_dir / "root"
        self.readonly = readonly_paths()
        self.max_queue = max_queue
        self.pools: dict[str, Pool] = {}
        if self.problem is None:
            self.problem = self._prepare(state_dir)
        if self.problem is None:
            self.pools["cpu"] = Pool("cpu", host.cpu_name(), cpu_slots, max_queue)

    def _prepare(self, state_dir: Path) -> str | None:
        """Make the state folder, ours alone; why it cannot be, or None."""
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if state_dir.is_symlink() or state_dir.stat().st_uid != os.geteuid():
            return f"the state folder {state_dir} does not belong to this user"
        state_dir.chmod(0o700)
        self.root_dir.mkdir(exist_ok=True)
        return None

    async def start(self) -> None:
        """Warm every backend's zygote. Meanwhile status says `starting` and runs wait."""
        if self.problem:
            log.error("refusing to run code: %s", self.problem)
            return
        try:
            await self._warm_up()
        except Exception as exc:  # a zygote that could not start, say: say so, run nothing
            log.exception("the sandbox could not start")
            self.failure = f"The sandbox could not start: {exc}"
        finally:
            self.ready.set()

    async def _warm_up(self) -> None:
        self.warming = "loading PyTorch"
        await self.pools["cpu"].ensure_zygote()
        self.warming = "looking for a GPU"
        gpu = await asyncio.to_thread(host.probe_cuda, zygote_env())
        if gpu:
            self.warming = "loading PyTorch for the GPU"
            # GPU runs take turns: one at a time per device, so timings mean something.
            self.pools["cuda"] = Pool("cuda", gpu, 1, self.max_queue)
            await self.pools["cuda"].ensure_zygote()

    def status(self) -> WorkerStatus:
        """What this worker can do right now."""
        if self.problem:
            return WorkerStatus.unavailable(
                f"This server cannot isolate code, so it runs none: {self.problem}."
            )
        if self.failure:
            return WorkerStatus.unavailable(self.failure)
        if self.ready.is_set():
            state, detail = WorkerState.READY, "ready"
        else:
            state, detail = WorkerState.STARTING, f"starting: {self.warming}"
        auto = self.pick(Backend.AUTO)
        return WorkerStatus(
            state=state,
            backends=list(self.pools),
            device=auto.device if auto else None,
            devices={name: pool.device for name, pool in self.pools.items()},
            detail=detail,
            queue={name: len(pool.waiting) for name, pool in self.pools.items()},
        )

    def status_message(self) -> dict[str, Any]:
        """The answer to {"op": "status"}: built here and nowhere else."""
        return {"type": "status", **self.status().to_json()}

    def pick(self, backend: Backend) -> Pool | None:
        if backend is Backend.AUTO:
            return self.pools.get("cuda") or self.pools.get("cpu")
        return self.pools.get(backend.value)

    async def run(self, request: RunRequest, emit: Emit, contexts: list[RunContext]) -> RunResult:
        """Run `request` once its backend has a free slot. The run's context is appended to
        `contexts` as soon as it has one, so that the caller can stop it."""

        def refuse(verdict: Verdict, detail: str) -> RunResult:
            return RunResult.refused(request.id, verdict, detail, backend=request.backend.value)

        if self.problem:
            return refuse(Verdict.INTERNAL_ERROR, self.status().detail)
        await self.ready.wait()  # a run that comes while the zygotes warm waits for them
        if self.failure:
            return refuse(Verdict.INTERNAL_ERROR, self.failure)
        pool = self.pick(request.backend)
        if pool is None:
            return refuse(Verdict.REJECTED, "This server has no CUDA GPU: choose the cpu backend.")
        if pool.full():
            await emit(Busy(retry_after=BUSY_RETRY_SECONDS))
            return refuse(Verdict.REJECTED, "The queue is full; try again in a few seconds.")
        slot = await pool.acquire(emit)
        try:
            try:
                zygote = await pool.ensure_zygote()
            except ZygoteDied as exc:
                return refuse(Verdict.INTERNAL_ERROR, f"The sandbox could not start: {exc}")
            ctx = self._context(request, pool, slot)
            contexts.append(ctx)
            result = await execute(ctx, zygote, emit)
            if result.verdict is Verdict.INTERNAL_ERROR and not zygote.alive():
                pool.zygote = None  # replaced on the next run
            return result
        finally:
            pool.release(slot)

    def _context(self, request: RunRequest, pool: Pool, slot: int) -> RunContext:
        return RunContext(
            run_id=request.id,
            code=request.code,
            backend=pool.backend,
            device=pool.device,
            limits=request.limits,
            uid=FIRST_UID + slot,
            root_dir=str(self.root_dir),
            readonly_paths=self.readonly,
        )
