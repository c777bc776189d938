"""The trusted step that fills a backend's compile cache (compile_cache.py explains why and
how runs use it). It runs after the worker is ready, through the pool's ordinary queue, so a
learner's run never waits for more than one lab being compiled.

Runs start from what is compiled so far: after each program the folder is published (a
snapshot of hard links, sealed) as the pool's cache. And a learner's run of a program the
warmer has not yet published never compiles it beside the warmer: it waits for the warmer,
which takes that program next and, while anyone waits, runs at an ordinary run's priority
(`wait_for_warming`; the state it waits on is warm_progress.py's)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path

from sandbox import compile_cache
from sandbox.pool import Pool
from sandbox.protocol import (
    Backend,
    Emit,
    Event,
    Limits,
    Output,
    Phase,
    RunRequest,
    RunResult,
    Verdict,
)
from sandbox.runner import RunContext
from sandbox.warm_progress import Warming, key

log = logging.getLogger("sandbox")

# Past a learner's ceilings (limits.py): this is trusted code, at idle priority, so on a busy
# host it gets the CPU only when nothing else wants it. The ResNet-50 lab compiles its training
# step for a minute on an idle 2-core CPU; beside other work, a 180 s limit starved it.
WARM_LIMITS = Limits(wall_seconds=900.0, cpu_seconds=1200.0, memory_mb=6144, tmp_mb=1024)

# How long a learner's run waits for the warmer to publish its program: as long as the warmer
# may take for it (it ends every program, published or not, by its limit), and a little more.
# Giving up sooner would be worse: the run would then compile the same graphs beside it
# (on a busy 2-core machine the ResNet-50 lab's run gave up after 120 s, then compiled for
# 177 s beside the warmer and timed out).
WAIT_FOR_WARMER_SECONDS = WARM_LIMITS.wall_seconds + 60.0

# Runs `request` in `pool` with the given folder as its writable cache, appending its context
# to the list once it has one (Worker._execute_warming).
Execute = Callable[[Pool, RunRequest, Path, Emit, list[RunContext]], Awaitable[RunResult]]


async def warm(
    pool: Pool, programs: list[compile_cache.WarmProgram], state_dir: Path, execute: Execute
) -> None:
    """Compile every program that runs on `pool`'s backend into a fresh folder, publishing
    it to the pool after each one: runs that start afterwards load from it."""
    chosen = [p for p in programs if p.runs_on(pool.backend)]
    folder = compile_cache.fresh_folder(state_dir, pool.backend)
    warming = pool.warming = Warming(list(chosen))
    compiled = 0
    try:
        while (program := warming.next_program()) is not None:
            done = len(chosen) - len(warming.pending) - 1
            pool.cache_state = f"warming: {done} of {len(chosen)} samples compiled"
            compile_cache.seal(folder)  # writable by whichever slot's user runs the next one
            request = RunRequest(
                id=f"warm-{pool.backend}-{done}",
                code=program.code,
                backend=Backend(pool.backend),
                limits=WARM_LIMITS,
            )
            tail = OutputTail()
            warming.running = []
            result = await execute(pool, request, folder, tail, warming.running)
            warming.running = []
            if result.verdict is Verdict.OK:
                compiled += 1
                log.info("compile cache (%s): %s compiled", pool.backend, program.name)
            else:
                log.warning(
                    "compile cache (%s): %s ended %s: %s\n%s",
                    pool.backend,
                    program.name,
                    result.verdict.value,
                    result.detail,
                    tail.text(),
                )
            pool.compile_cache = await asyncio.to_thread(compile_cache.publish, folder, done + 1)
            warming.published[key(program.code)].set()
    finally:
        pool.warming = None
        for event in warming.published.values():
            event.set()  # nobody waits for a warming that ended
    pool.cache_state = f"ready: {compiled} of {len(chosen)} samples compiled"
    log.info("compile cache (%s) %s", pool.backend, pool.cache_state)


async def wait_for_warming(pool: Pool, request: RunRequest, emit: Emit) -> None:
    """A run of a program the warmer has still to compile waits for it instead of compiling
    the same graphs beside it: the warmer takes it next, at an ordinary run's priority, and
    the run then loads what it compiled. The page hears the wait as the `warming` phase; it
    is not charged to the run's clocks, which start with the run (above)."""
    progress = pool.warming
    event = progress.unpublished(request.code) if progress is not None else None
    if progress is None or event is None or request.grading is not None:
        return
    allowance = request.limits.compile_seconds
    with contextlib.suppress(ConnectionError):
        await emit(Phase("warming", allowance))
    waited = time.monotonic()
    published = await progress.wait_for(event, request.code, WAIT_FOR_WARMER_SECONDS)
    log.info(
        "run %s waited %.1f s for the %s warmer (%s)",
        request.id,
        time.monotonic() - waited,
        pool.backend,
        "published" if published else "not published: it compiles on its own",
    )
    with contextlib.suppress(ConnectionError):
        await emit(Phase("running", allowance))


class OutputTail:
    """The end of what a warming run printed, for the log when it fails."""

    def __init__(self, keep: int = 2000) -> None:
        self.keep = keep
        self.chunks: deque[str] = deque()
        self.size = 0

    async def __call__(self, event: Event) -> None:
        if isinstance(event, Output):
            self.chunks.append(event.data)
            self.size += len(event.data)
            while self.size > self.keep and len(self.chunks) > 1:
                self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return "".join(self.chunks)[-self.keep :]
