"""Run one request in one jail: pipes, cgroups, the fork, the streaming, and the verdict."""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import secrets
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sandbox.cgroups import RunCgroup
from sandbox.jail import JailSpec
from sandbox.protocol import Limits, RunResult, Verdict
from sandbox.zygote_client import Zygote, ZygoteDied

Emit = Callable[[dict[str, Any]], Awaitable[None]]
INIT_UID_OFFSET = 500  # the jail's PID 1 runs as the code's uid + this
TRUNCATION_MARKER = "\n[output truncated: the run printed more than {limit}]\n"


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
    readonly_paths: list[str]
    stop_reason: str | None = None  # set when the worker stops the run: why
    stopped: asyncio.Event = field(default_factory=asyncio.Event)

    def stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        self.stopped.set()


async def _read_pipe(fd: int) -> asyncio.Queue[bytes]:
    """Chunks read from `fd` as they arrive; b'' marks its end."""
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


def _human_bytes(n: int) -> str:
    return f"{n // 1024} KiB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.0f} MiB"


async def execute(ctx: RunContext, zygote: Zygote, emit: Emit) -> RunResult:
    """Run `ctx.code` in a fresh jail forked from `zygote`; stream output through `emit`."""
    limits = ctx.limits
    started = time.monotonic()
    # A random name: nothing the code can see (its cgroup path) tells it the run's id.
    cgroup = RunCgroup.create(
        f"run-{secrets.token_hex(8)}",
        memory_mb=limits.memory_mb,
        pids=limits.pids,
        cpus=limits.threads,
    )
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    status_r, status_w = os.pipe()
    code_fd = os.memfd_create("sample", os.MFD_CLOEXEC)
    os.write(code_fd, ctx.code.encode())
    spec = JailSpec(
        root_dir=ctx.root_dir,
        uid=ctx.uid,
        init_uid=ctx.uid + INIT_UID_OFFSET,
        tmp_mb=limits.tmp_mb,
        cpu_seconds=limits.cpu_seconds,
        threads=limits.threads,
        cgroup_procs=cgroup.procs_files(),
        readonly_paths=ctx.readonly_paths,
        cuda=ctx.backend == "cuda",
        gpu_memory_fraction=limits.gpu_memory_fraction,
    )
    try:
        try:
            await asyncio.to_thread(zygote.fork, spec, [out_w, err_w, status_w, code_fd])
        finally:
            for fd in (out_w, err_w, status_w, code_fd):
                os.close(fd)
    except ZygoteDied as exc:
        for fd in (out_r, err_r, status_r):
            os.close(fd)
        await asyncio.to_thread(cgroup.remove)
        return _result(
            ctx,
            started,
            Verdict.INTERNAL_ERROR,
            None,
            "",
            "",
            detail=(
                f"The sandbox's warm {ctx.backend} process stopped unexpectedly ({exc}); it is "
                "being replaced. The run did not start: please run it again."
            ),
        )

    await emit({"type": "started", "backend": ctx.backend, "device": ctx.device})
    output = _Output(limits.output_bytes, emit, ctx)
    streams = [
        asyncio.create_task(output.pump(await _read_pipe(out_r), "stdout")),
        asyncio.create_task(output.pump(await _read_pipe(err_r), "stderr")),
    ]
    status_queue = await _read_pipe(status_r)

    async def status() -> bytes:
        data = b""
        while chunk := await status_queue.get():
            data += chunk
        return data

    async def watch_cpu() -> None:
        # RLIMIT_CPU bounds each process; the cgroup's total bounds the run, forks included.
        while True:
            await asyncio.sleep(0.25)
            if _cpu_exhausted(cgroup, limits):
                ctx.stop("cpu")
                return

    finished = asyncio.create_task(status())
    cpu_watch = asyncio.create_task(watch_cpu())
    stop = asyncio.create_task(ctx.stopped.wait())
    done, _ = await asyncio.wait(
        {finished, stop}, timeout=limits.wall_seconds, return_when=asyncio.FIRST_COMPLETED
    )
    if finished not in done:
        ctx.stop_reason = ctx.stop_reason or "timeout"
        await asyncio.to_thread(cgroup.kill_all)
    stop.cancel()
    cpu_watch.cancel()
    report_bytes = await finished
    await asyncio.gather(*streams)
    verdict, exit_code, detail = _judge(ctx, cgroup, report_bytes)
    cpu_ms: int | None
    memory_mb: int | None
    try:
        cpu_ms, memory_mb = cgroup.cpu_ms(), cgroup.max_memory_mb()
    except OSError:
        cpu_ms = memory_mb = None
    await asyncio.to_thread(cgroup.remove)
    return _result(
        ctx,
        started,
        verdict,
        exit_code,
        output.text("stdout"),
        output.text("stderr"),
        detail=detail,
        cpu_ms=cpu_ms,
        max_memory_mb=memory_mb,
        truncated=output.truncated,
    )


class _Output:
    """Streams stdout and stderr as events and keeps them, up to the output limit."""

    def __init__(self, limit: int, emit: Emit, ctx: RunContext) -> None:
        self.limit = limit
        self.emit = emit
        self.ctx = ctx
        self.total = 0
        self.truncated = False
        self.kept: dict[str, list[str]] = {"stdout": [], "stderr": []}

    async def pump(self, queue: asyncio.Queue[bytes], kind: str) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while chunk := await queue.get():
            if self.truncated:
                continue  # drain until the kill closes the pipe
            room = self.limit - self.total
            self.total += len(chunk)
            if len(chunk) > room:
                chunk = chunk[: max(room, 0)]
                self.truncated = True
            text = decoder.decode(chunk)
            if self.truncated:
                text += decoder.decode(b"", final=True)
                text += TRUNCATION_MARKER.format(limit=_human_bytes(self.limit))
                self.ctx.stop("output")
            if text:
                self.kept[kind].append(text)
                await self.emit({"type": kind, "data": text})
        tail = decoder.decode(b"", final=True)
        if tail:
            self.kept[kind].append(tail)
            await self.emit({"type": kind, "data": tail})

    def text(self, kind: str) -> str:
        return "".join(self.kept[kind])


def _judge(
    ctx: RunContext, cgroup: RunCgroup, report_bytes: bytes
) -> tuple[Verdict, int | None, str]:
    """The verdict, the exit code and plain words on why."""
    limits = ctx.limits
    reason = ctx.stop_reason
    if reason == "timeout":
        return (
            Verdict.TIMEOUT,
            None,
            (f"Stopped after {limits.wall_seconds:g} s of wall-clock time, the limit for a run."),
        )
    if reason == "output":
        return (
            Verdict.OUTPUT_LIMIT,
            None,
            (
                f"Stopped: the run printed more than {_human_bytes(limits.output_bytes)}, "
                "the limit for a run's output."
            ),
        )
    if reason == "cancel":
        return Verdict.KILLED, None, "Cancelled."
    if reason == "cpu":
        return (
            Verdict.TIMEOUT,
            None,
            (f"Stopped after {limits.cpu_seconds:g} s of CPU time, the limit for a run."),
        )
    try:
        oom = cgroup.oom_killed()
    except OSError:
        oom = False
    if oom:
        return (
            Verdict.MEMORY_LIMIT,
            None,
            (
                f"Stopped: the run needed more than {limits.memory_mb:,} MB of memory, the limit "
                "for a run."
            ),
        )
    report: dict[str, Any] = {}
    for line in report_bytes.splitlines():
        try:
            report.update(json.loads(line))
        except ValueError:
            continue
    if "status" not in report:
        init = report.get("init")
        if isinstance(init, int) and os.WIFEXITED(init) and os.WEXITSTATUS(init) == 126:
            return Verdict.INTERNAL_ERROR, None, "The sandbox could not build this run's jail."
        return (
            Verdict.INTERNAL_ERROR,
            None,
            ("The sandbox could not start or watch this run: " + str(report.get("error", report))),
        )
    status = report["status"]
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGSYS:
            return (
                Verdict.KILLED,
                -sig,
                (
                    "Stopped: the code made a system call the sandbox forbids (such as ptrace, "
                    "mount or creating namespaces)."
                ),
            )
        # The kernel sends SIGXCPU at RLIMIT_CPU, which it measures on its own clock: the
        # cgroup's count may still read a few ms short then (seen under load), so SIGXCPU
        # alone is enough. A SIGKILL is ours only when the run's CPU time is used up.
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and _cpu_exhausted(cgroup, limits)):
            return (
                Verdict.TIMEOUT,
                -sig,
                (f"Stopped after {limits.cpu_seconds:g} s of CPU time, the limit for a run."),
            )
        return Verdict.ERROR, -sig, f"The program was ended by signal {signal.Signals(sig).name}."
    code = os.WEXITSTATUS(status)
    if code == 0:
        return Verdict.OK, 0, ""
    return Verdict.ERROR, code, f"The program exited with status {code}."


def _cpu_exhausted(cgroup: RunCgroup, limits: Limits) -> bool:
    try:
        return cgroup.cpu_ms() >= limits.cpu_seconds * 1000
    except OSError:
        return False


def _result(
    ctx: RunContext,
    started: float,
    verdict: Verdict,
    exit_code: int | None,
    stdout: str,
    stderr: str,
    *,
    detail: str = "",
    cpu_ms: int | None = None,
    max_memory_mb: int | None = None,
    truncated: bool = False,
) -> RunResult:
    return RunResult(
        id=ctx.run_id,
        verdict=verdict,
        exit_code=exit_code,
        stdout=stdout,
        stderr=stderr,
        wall_ms=int((time.monotonic() - started) * 1000),
        backend=ctx.backend,
        device=ctx.device,
        detail=detail,
        cpu_ms=cpu_ms,
        max_memory_mb=max_memory_mb,
        truncated=truncated,
    )
