"""The trusted step that fills a backend's compile cache (compile_cache.py explains why and
how runs use it). It runs after the worker is ready, through the pool's ordinary queue, so a
learner's run never waits for more than one lab being compiled."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path

from sandbox import compile_cache
from sandbox.pool import Pool
from sandbox.protocol import Backend, Emit, Event, Limits, Output, RunRequest, RunResult, Verdict

log = logging.getLogger("sandbox")

# Past a learner's ceilings (limits.py): this is trusted code, at idle priority, so on a busy
# host it gets the CPU only when nothing else wants it. The ResNet-50 lab compiles its training
# step for a minute on an idle 2-core CPU; beside other work, a 180 s limit starved it.
WARM_LIMITS = Limits(wall_seconds=900.0, cpu_seconds=1200.0, memory_mb=6144, tmp_mb=1024)

# Runs `request` in `pool` with the given folder as its writable cache (Worker.execute_in).
Execute = Callable[[Pool, RunRequest, Path, Emit], Awaitable[RunResult]]


async def warm(
    pool: Pool, programs: list[compile_cache.WarmProgram], state_dir: Path, execute: Execute
) -> None:
    """Compile every program that runs on `pool`'s backend into a fresh folder, then seal it
    and hand it to the pool: runs that start afterwards load from it."""
    chosen = [p for p in programs if p.runs_on(pool.backend)]
    folder = compile_cache.fresh_folder(state_dir, pool.backend)
    compiled = 0
    for index, program in enumerate(chosen):
        pool.cache_state = f"warming: {index} of {len(chosen)} samples compiled"
        compile_cache.seal(folder)  # writable by whichever slot's user runs the next one
        request = RunRequest(
            id=f"warm-{pool.backend}-{index}",
            code=program.code,
            backend=Backend(pool.backend),
            limits=WARM_LIMITS,
        )
        tail = OutputTail()
        result = await execute(pool, request, folder, tail)
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
    compile_cache.seal(folder)
    pool.compile_cache = folder
    pool.cache_state = f"ready: {compiled} of {len(chosen)} samples compiled"
    log.info("compile cache (%s) %s", pool.backend, pool.cache_state)


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
