"""The sandbox worker: queues runs per backend and executes each in a jail forked from that
backend's warm zygote.

    python -m sandbox --socket PATH [--cpu-slots N] [--max-queue N]

It listens on its socket at once and warms its zygotes afterwards (importing torch takes
seconds): until they are warm its status says `starting`, and runs that arrive wait for them.
The socket is server.py's; the protocol is sandbox/protocol/ (see also sandbox/README.md)."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from functools import partial
from pathlib import Path
from typing import Any

from sandbox import cgroups, compile_cache, host, neutral, warming
from sandbox.grading_run import execute_grading, grader_context, payload_for
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
from sandbox.runner import INIT_UID_OFFSET, RunContext, execute
from sandbox.zygote_client import Zygote, ZygoteDied, zygote_env

log = logging.getLogger("sandbox")

# Each slot of every pool runs code as a user of its own: the CPU slots from FIRST_UID on, the
# GPU slot after them, the jail's PID 1 at the same uid + INIT_UID_OFFSET. A uid per slot
# keeps runs apart in what the kernel counts per user (pipe buffers, inotify instances...).
FIRST_UID = 61000
GPU_SLOTS = 1  # GPU runs take turns: one at a time per device, so timings mean something
BUSY_RETRY_SECONDS = 5


class Worker:
    """Holds the pools, says what it can do, and runs requests."""

    def __init__(
        self, *, cpu_slots: int, max_queue: int, state_dir: Path, labs_dir: Path | None = None
    ) -> None:
        self.problem = host.isolation_problem()  # why this host cannot run code at all
        self.failure: str | None = None  # why start-up failed, in words for the client
        self.warming = "waiting to begin"  # what start() is doing, while it is
        # Set when start() is over, however it went: runs wait for it.
        self.ready = asyncio.Event()
        self.state_dir = state_dir
        self.root_dir = state_dir / "root"
        self.view = neutral.PythonView.of_this_python()
        self.binds = self.view.binds()
        self.max_queue = max_queue
        self.cpu_slots = cpu_slots
        self.pools: dict[str, Pool] = {}
        self.cgroups: cgroups.CgroupTree | None = None
        # Lab pages whose samples the trusted step compiles once ready (compile_cache.py).
        self.labs_dir = labs_dir
        self.warming_task: asyncio.Task[None] | None = None
        self.teardowns: set[asyncio.Task[None]] = set()  # graded runs' jails going away
        if self.problem is None:
            self.problem = self._prepare()
        if self.problem is None:
            self.pools["cpu"] = Pool(
                "cpu", host.cpu_name(), cpu_slots, max_queue, FIRST_UID, state_dir
            )

    def _prepare(self) -> str | None:
        """Make the state folder, ours alone, with what the jails mount from it; clean up
        after a previous life of this worker. Why it cannot, or None."""
        state_dir = self.state_dir
        if not 1 <= self.cpu_slots <= INIT_UID_OFFSET - GPU_SLOTS:
            return f"--cpu-slots must be between 1 and {INIT_UID_OFFSET - GPU_SLOTS}"
        if state_dir.resolve().is_relative_to("/opt"):
            return "the state folder may not be under /opt, which the zygotes cover"
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if state_dir.is_symlink() or state_dir.stat().st_uid != os.geteuid():
            return f"the state folder {state_dir} does not belong to this user"
        state_dir.chmod(0o700)
        self.root_dir.mkdir(exist_ok=True)
        uids = list(range(FIRST_UID, FIRST_UID + self.cpu_slots + GPU_SLOTS))
        try:
            neutral.build(state_dir, self.view, uids)
            self.cgroups = cgroups.tree(cgroups.state_key(state_dir))
            self.cgroups.prepare()
        except (OSError, ValueError) as exc:  # ValueError: a file that is not UTF-8
            return f"cannot prepare the runs' state: {exc}"
        # Jails of a previous life are dead already (they die with their zygote, which dies
        # with its worker); their cgroups may not be, if it was killed mid-run.
        problems = self.cgroups.sweep()
        if problems:
            return "a previous run could not be cleaned up: " + "; ".join(problems)
        return None

    def close(self) -> None:
        """Kill and remove whatever run is left (the worker is stopping)."""
        if self.warming_task is not None:
            self.warming_task.cancel()
        if self.cgroups is not None:
            self.cgroups.sweep()
            self.cgroups.discard()

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
        if self.labs_dir is not None and not self.failure:
            self.warming_task = asyncio.create_task(self._warm_compile_caches(self.labs_dir))

    async def _warm_compile_caches(self, labs_dir: Path) -> None:
        """Fill each backend's compile cache from the content's own code (the labs, then the
        other samples that compile: compile_cache.warm_programs), one backend after the other.
        A failure leaves runs on an empty cache, as without one: slower, no worse."""
        try:
            programs = await asyncio.to_thread(compile_cache.warm_programs, labs_dir)
        except OSError as exc:
            log.error("compile cache: cannot read the labs in %s: %s", labs_dir, exc)
            return
        for pool in list(self.pools.values()):
            try:
                await warming.warm(pool, programs, self.state_dir, self._execute_warming)
            except OSError as exc:
                log.exception("compile cache (%s) not warmed", pool.backend)
                pool.cache_state = f"off: {exc}"

    async def _execute_warming(
        self,
        pool: Pool,
        request: RunRequest,
        folder: Path,
        emit: Emit,
        contexts: list[RunContext],
    ) -> RunResult:
        return await self._execute(pool, request, emit, contexts, warm_into=folder)

    async def _warm_up(self) -> None:
        self.warming = "loading PyTorch"
        await self.pools["cpu"].ensure_zygote()
        self.warming = "looking for a GPU"
        gpu = await asyncio.to_thread(host.probe_cuda, zygote_env("cuda"))
        if gpu:
            self.warming = "loading PyTorch for the GPU"
            first_uid = FIRST_UID + self.cpu_slots  # after every CPU slot's
            self.pools["cuda"] = Pool(
                "cuda", gpu, GPU_SLOTS, self.max_queue, first_uid, self.state_dir
            )
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
        auto, gpu = self.pick(Backend.AUTO), self.pools.get("cuda")
        return WorkerStatus(
            state=state,
            backends=list(self.pools),
            device=auto.device if auto else None,
            devices={name: pool.device for name, pool in self.pools.items()},
            detail=detail,
            queue={name: len(pool.waiting) for name, pool in self.pools.items()},
            compile_cache={name: pool.cache_state for name, pool in self.pools.items()},
            slots={name: pool.slots for name, pool in self.pools.items()},
            absent={"cuda": host.why_no_cuda()} if self.ready.is_set() and not gpu else {},
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

        refuse = partial(_refused, request)
        if self.problem:
            return refuse(Verdict.INTERNAL_ERROR, self.status().detail)
        await self.ready.wait()  # a run that comes while the zygotes warm waits for them
        if self.failure:
            return refuse(Verdict.INTERNAL_ERROR, self.failure)
        pool = self.pick(request.backend)
        if pool is None:
            return refuse(Verdict.REJECTED, "This server has no CUDA GPU: choose the cpu backend.")
        if pool.full(request.owner):
            await emit(Busy(retry_after=BUSY_RETRY_SECONDS))
            return refuse(Verdict.REJECTED, "The queue is full; try again in a few seconds.")
        await warming.wait_for_warming(pool, request, emit)
        return await self._execute(pool, request, emit, contexts)

    async def _execute(
        self,
        pool: Pool,
        request: RunRequest,
        emit: Emit,
        contexts: list[RunContext],
        warm_into: Path | None = None,
    ) -> RunResult:
        """Run `request` in `pool` once a slot is free; `warm_into`: a warming run, with that
        folder as its writable compile cache."""

        slot = await pool.acquire(emit, request.owner)
        # A graded run answers before its jails are torn down; the slot waits for that.
        teardown: asyncio.Task[None] | None = None
        try:
            try:
                zygote = await pool.ensure_zygote()
            except ZygoteDied as exc:
                detail = f"The sandbox could not start: {exc}"
                return _refused(request, Verdict.INTERNAL_ERROR, detail)
            ctx = self._context(request, pool, slot, warm_into)
            contexts.append(ctx)
            started = time.monotonic()
            if request.grading is not None:
                result, teardown = await self._grade(ctx, zygote, request, emit)
            else:
                result = await execute(ctx, zygote, emit)
            if warm_into is None:
                pool.ran_for(time.monotonic() - started)
            if result.verdict is Verdict.INTERNAL_ERROR and not zygote.alive():
                pool.zygote = None  # replaced on the next run
            return result
        finally:
            if teardown is None:
                pool.release(slot)
            else:
                self.teardowns.add(teardown)  # held here: the loop keeps only weak references
                teardown.add_done_callback(self.teardowns.discard)
                teardown.add_done_callback(lambda _: pool.release(slot))

    async def _grade(
        self, ctx: RunContext, zygote: Zygote, request: RunRequest, emit: Emit
    ) -> tuple[RunResult, asyncio.Task[None] | None]:
        """A graded run: the learner's jail in its slot, the grader's beside it, forked from
        the CPU zygote whatever the backend (the reference runs on the CPU)."""
        assert request.grading is not None
        try:
            grader_zygote = await self.pools["cpu"].ensure_zygote()
        except ZygoteDied as exc:
            detail = f"The sandbox could not start: {exc}"
            return _refused(request, Verdict.INTERNAL_ERROR, detail), None
        seed = request.grading.seed if request.grading.seed is not None else secrets.randbits(62)
        payload = payload_for(request.code, request.grading, seed, ctx.backend)
        ctx.role = "learner"
        grader = grader_context(ctx, payload)
        mode_seed = (request.grading.mode.value, seed)
        return await execute_grading(ctx, grader, zygote, grader_zygote, mode_seed, emit)

    def _context(
        self, request: RunRequest, pool: Pool, slot: int, warm_into: Path | None
    ) -> RunContext:
        assert self.cgroups is not None  # no pool without them
        cache = warm_into or pool.compile_cache
        return RunContext(
            run_id=request.id,
            code=request.code,
            backend=pool.backend,
            device=pool.device,
            limits=request.limits,
            uid=pool.uid(slot),
            root_dir=str(self.root_dir),
            binds=self.binds,
            cgroups=self.cgroups,
            compile_cache=str(cache) if cache else None,
            warm=warm_into is not None,
        )


def _refused(request: RunRequest, verdict: Verdict, detail: str) -> RunResult:
    """The answer to a request that will not run, in the request's own terms."""
    return RunResult.refused(request.id, verdict, detail, backend=request.backend.value)
