"""Run one request in one jail: its cgroup, the fork from the warm zygote, the clocks that
bound it, and its result. What it prints is handled in output.py, its verdict in verdict.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field

from sandbox.cgroups import CgroupTree, RunCgroup
from sandbox.jail_spec import JailSpec
from sandbox.output import OutputStreams
from sandbox.phases import PhaseClock, PhaseLines
from sandbox.protocol import Emit, Limits, Phase, RunResult, Started, StopReason, Verdict
from sandbox.unix_sockets import MAX_UNIX_SOCKETS, POLL_SECONDS, UnixSocketCount
from sandbox.verdict import cpu_exhausted, judge
from sandbox.zygote_client import Zygote, ZygoteDied

INIT_UID_OFFSET = 500  # the jail's PID 1 runs as the code's uid + this
CPU_POLL_SECONDS = 0.25


@dataclass
class RunContext:
    """Where and as whom a run executes, chosen by the worker."""

    run_id: str
    code: str
    backend: str
    device: str
    limits: Limits
    uid: int
    root_dir: str
    binds: list[list[str]]  # read-only paths: [as the zygote sees it, in the jail]
    cgroups: CgroupTree  # where the run's cgroup goes
    compile_cache: str | None = None  # the sealed cache, or the warming step's own folder
    warm: bool = False  # the trusted step warming the cache (compile_cache.py)
    role: str = "run"  # or a graded run's "learner" / "grader" (jail.JailSpec.role)
    stop_reason: StopReason | None = None  # set when the worker stops the run: why
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    clock: PhaseClock | None = None  # a plain run's wall clock, by phase (phases.py)
    cgroup: RunCgroup | None = None  # once made: a warming run is hurried through it

    def stop(self, reason: StopReason) -> None:
        """Stop the run. The first reason given is the one its verdict names."""
        if self.stop_reason is None:
            self.stop_reason = reason
        self.stopped.set()


@dataclass(frozen=True)
class _Pipes:
    """The worker's ends of a run's pipes."""

    stdout: int
    stderr: int
    status: int
    phase: int = -1  # a plain run's phase pipe (phases.py)


async def execute(ctx: RunContext, zygote: Zygote, emit: Emit) -> RunResult:
    """Run `ctx.code` in a fresh jail forked from `zygote`; stream output through `emit`."""
    started = time.monotonic()
    limits = ctx.limits
    cgroup: RunCgroup | None = None
    try:
        # Warming the compile cache is background work: the least CPU weight, beside the
        # idle nice level its processes take (jail.py).
        cgroup = ctx.cgroups.create(
            memory_mb=limits.memory_mb, pids=limits.pids, cpus=limits.threads, idle=ctx.warm
        )
        ctx.cgroup = cgroup
        # The code's phase pipe (phases.py) travels where a graded run's socket does.
        phase_r, phase_w = os.pipe()
        try:
            pipes = await _fork(ctx, zygote, cgroup, phase_w)
        except ZygoteDied as exc:
            os.close(phase_r)
            detail = (
                f"The sandbox's warm {ctx.backend} process stopped unexpectedly ({exc}); it is "
                "being replaced. The run did not start: please run it again."
            )
            return RunResult.refused(
                ctx.run_id, Verdict.INTERNAL_ERROR, detail, backend=ctx.backend, device=ctx.device
            )
        except BaseException:
            os.close(phase_r)
            raise
        finally:
            os.close(phase_w)
        return await _follow(
            ctx, cgroup, _Pipes(pipes.stdout, pipes.stderr, pipes.status, phase_r), emit, started
        )
    finally:
        # However the run ended (or this failed, or was cancelled), nothing of it outlives
        # it: remove kills whatever is left in the cgroup first (and logs what it could
        # not). Shielded: a second cancel must not stop the clean-up halfway.
        if cgroup is not None:
            await asyncio.shield(asyncio.to_thread(cgroup.remove))


def _jail_spec(ctx: RunContext, cgroup: RunCgroup) -> JailSpec:
    return JailSpec(
        root_dir=ctx.root_dir,
        uid=ctx.uid,
        init_uid=ctx.uid + INIT_UID_OFFSET,
        tmp_mb=ctx.limits.tmp_mb,
        cpu_seconds=ctx.limits.cpu_seconds,
        threads=ctx.limits.threads,
        cgroup_procs=cgroup.procs_files(),
        binds=ctx.binds,
        cuda=ctx.backend == "cuda",
        gpu_memory_fraction=ctx.limits.gpu_memory_fraction,
        compile_cache=ctx.compile_cache,
        warm=ctx.warm,
        role=ctx.role,
    )


async def _fork(
    ctx: RunContext, zygote: Zygote, cgroup: RunCgroup, channel: int | None = None
) -> _Pipes:
    """Have `zygote` fork the run's supervisor, handing it the write ends of the run's pipes
    and its code in a memfd (and, in a graded run, its end of the learner-grader socket);
    return the read ends. ZygoteDied when the zygote is gone."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    status_r, status_w = os.pipe()
    code_fd = os.memfd_create("sample", os.MFD_CLOEXEC)
    os.write(code_fd, ctx.code.encode())
    try:
        fds = [out_w, err_w, status_w, code_fd] + ([channel] if channel is not None else [])
        await asyncio.to_thread(zygote.fork, _jail_spec(ctx, cgroup), fds)
    except BaseException:  # ZygoteDied above all: no run, so nobody reads these
        for fd in (out_r, err_r, status_r):
            os.close(fd)
        raise
    finally:
        for fd in (out_w, err_w, status_w, code_fd):
            os.close(fd)
    return _Pipes(out_r, err_r, status_r)


async def _follow(
    ctx: RunContext, cgroup: RunCgroup, pipes: _Pipes, emit: Emit, started: float
) -> RunResult:
    """Stream the run's output until it ends or is stopped; judge it."""
    # A client that has gone away is the worker's to notice (as a cancel), not ours.
    with contextlib.suppress(ConnectionError):
        await emit(Started(ctx.backend, ctx.device))
    output = OutputStreams(ctx.limits.output_bytes, emit, lambda: ctx.stop(StopReason.OUTPUT))
    output.attach(pipes.stdout, "stdout")
    output.attach(pipes.stderr, "stderr")
    streams = asyncio.create_task(output.run())
    try:
        phases = PhaseLines(await _read_pipe(pipes.phase)) if pipes.phase >= 0 else None
        report = await _wait_for_end(ctx, cgroup, await _read_pipe(pipes.status), phases, emit)
        await streams
    finally:
        streams.cancel()
        output.close()
    verdict, exit_code, detail = judge(ctx.stop_reason, ctx.limits, cgroup, report)
    if ctx.stop_reason is StopReason.TIMEOUT and ctx.clock is not None:
        ctx.clock.stop(time.monotonic())
        detail = ctx.clock.timeout_detail()  # says which phase it was in
    cpu_ms, max_memory_mb = _usage(cgroup)
    return RunResult(
        id=ctx.run_id,
        verdict=verdict,
        exit_code=exit_code,
        stdout=output.text("stdout"),
        stderr=output.text("stderr"),
        wall_ms=int((time.monotonic() - started) * 1000),
        backend=ctx.backend,
        device=ctx.device,
        detail=detail,
        cpu_ms=cpu_ms,
        max_memory_mb=max_memory_mb,
        truncated=output.truncated,
    )


KILL_AGAIN_SECONDS = 0.1  # between kills of a stopped run, until it has ended


async def _wait_for_end(
    ctx: RunContext,
    cgroup: RunCgroup,
    status: asyncio.Queue[bytes],
    phases: PhaseLines | None = None,
    emit: Emit | None = None,
) -> bytes:
    """The supervisor's report, once the run has ended by itself or been stopped: at its
    wall-clock limit (with the compile allowance for the time `phases` says it spent
    compiling), at its CPU-time limit, or through `ctx.stop` (a cancel, too much output).
    A stopped run is killed here, every process of its cgroup."""
    clock = ctx.clock = PhaseClock.start(ctx.limits, time.monotonic())
    finished = asyncio.create_task(_read_all(status))
    cpu_watch = asyncio.create_task(_watch_cpu(ctx, cgroup))
    socket_watch = asyncio.create_task(_watch_unix_sockets(ctx, cgroup))
    stopped = asyncio.create_task(ctx.stopped.wait())
    heard = asyncio.create_task(phases.next()) if phases is not None else None
    try:
        while True:
            waiting = {finished, stopped} | ({heard} if heard is not None else set())
            left = clock.left(time.monotonic())
            done, _ = await asyncio.wait(
                waiting, timeout=max(left, 0.0), return_when=asyncio.FIRST_COMPLETED
            )
            if finished in done or stopped in done:
                break
            if heard is not None and heard in done:
                assert phases is not None
                word = heard.result()
                heard = None if word is None else asyncio.create_task(phases.next())
                if word is not None and clock.switch(word, time.monotonic()) and emit:
                    with contextlib.suppress(ConnectionError):
                        await emit(Phase(clock.phase, clock.allowance))  # type: ignore[arg-type]
                continue
            if clock.left(time.monotonic()) <= 0:
                break
        if finished not in done:
            ctx.stop(StopReason.TIMEOUT)  # names the timeout only when nothing else stopped it
            # Stopped just after its fork, the run's processes may not have joined their
            # cgroup yet, and one kill would find it empty (a cancel then went unheard for
            # the whole run): kill again until the supervisor reports the end.
            while not finished.done():
                await asyncio.to_thread(cgroup.kill_all)
                await asyncio.wait({finished}, timeout=KILL_AGAIN_SECONDS)
        return await finished
    finally:
        for task in (finished, cpu_watch, socket_watch, stopped, heard):
            if task is not None:
                task.cancel()


async def _watch_cpu(ctx: RunContext, cgroup: RunCgroup) -> None:
    # RLIMIT_CPU bounds each process; the cgroup's total bounds the run, forks included.
    while True:
        await asyncio.sleep(CPU_POLL_SECONDS)
        if cpu_exhausted(cgroup, ctx.limits):
            ctx.stop(StopReason.CPU)
            return


async def _watch_unix_sockets(ctx: RunContext, cgroup: RunCgroup) -> None:
    # The buffers Unix sockets queue are kernel memory the cgroup counts only in part: the
    # number of sockets bounds them (unix_sockets.py).
    count = UnixSocketCount(cgroup.pids)
    while True:
        await asyncio.sleep(POLL_SECONDS)
        held = count.read()
        if held is not None and held > MAX_UNIX_SOCKETS:
            ctx.stop(StopReason.UNIX_SOCKETS)
            return


def _usage(cgroup: RunCgroup) -> tuple[int | None, int | None]:
    """CPU milliseconds and peak memory (MB) of the whole run, when the cgroup can tell."""
    try:
        return cgroup.cpu_ms(), cgroup.max_memory_mb()
    except OSError:
        return None, None


async def _read_pipe(fd: int) -> asyncio.Queue[bytes]:
    """Chunks read from `fd` as they arrive; b'' marks its end (and `fd` is closed then)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    os.set_blocking(fd, False)

    def readable() -> None:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        queue.put_nowait(chunk)
        if not chunk:
            loop.remove_reader(fd)
            os.close(fd)

    loop.add_reader(fd, readable)
    return queue


async def _read_all(queue: asyncio.Queue[bytes]) -> bytes:
    data = b""
    while chunk := await queue.get():
        data += chunk
    return data
