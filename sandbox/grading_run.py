"""A graded run (sandbox/README.md, "Grading"): the learner's jail and the grader's, forked
from the warm zygotes and joined by one socket; the learner's output streamed as any run's,
the grader's result lines turned into TestDone events and the run's grading report."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
from dataclasses import dataclass, field, replace

from sandbox.cgroups import RunCgroup
from sandbox.output import OutputStreams
from sandbox.protocol import (
    Emit,
    GradingReport,
    GradingRequest,
    GradingVerdict,
    Limits,
    Mode,
    RunResult,
    Started,
    StopReason,
    TestDone,
    TestResult,
    Verdict,
)
from sandbox.runner import RunContext, _fork, _Pipes, _read_all, _read_pipe, _watch_cpu
from sandbox.verdict import judge
from sandbox.zygote_client import Zygote, ZygoteDied

log = logging.getLogger("sandbox")

# The grader's uid is its learner slot's plus this (its PID 1's, plus INIT_UID_OFFSET too):
# slots stay below INIT_UID_OFFSET (500), so no uid of one run's grader is another's.
GRADER_UID_OFFSET = 1000
# What the grader may use: ours, not the request's. It holds torch (shared with the zygote)
# and small tensors; one thread, so that it leaves the learner's cores to the learner.
GRADER_LIMITS = Limits(memory_mb=2048, pids=32, tmp_mb=16, threads=1, output_bytes=1 << 20)
MAX_GRADER_BYTES = 4 << 20  # its result lines, all told


def grader_context(learner: RunContext, payload: str) -> RunContext:
    """The grader's jail for `learner`'s graded run: another uid, the CPU, our limits; its
    "code" is the payload (exercise sources, the learner's source as data, seed, mode)."""
    limits = replace(
        GRADER_LIMITS,
        wall_seconds=learner.limits.wall_seconds,
        cpu_seconds=learner.limits.wall_seconds,
    )
    return replace(
        learner,
        code=payload,
        backend="cpu",
        limits=limits,
        uid=learner.uid + GRADER_UID_OFFSET,
        compile_cache=None,
        warm=False,
        role="grader",
        stop_reason=None,
        stopped=asyncio.Event(),
    )


def payload_for(code: str, grading: GradingRequest, seed: int, device: str) -> str:
    return json.dumps({"grading": grading.to_json(), "code": code, "seed": seed, "device": device})


@dataclass
class _GraderLines:
    """What the grader wrote: results as they come, its report or its fault."""

    emit: Emit
    tests: list[TestResult] = field(default_factory=list)
    report: GradingReport | None = None
    fault: str | None = None
    size: int = 0

    async def follow(self, queue: asyncio.Queue[bytes]) -> None:
        pending = b""
        while chunk := await queue.get():
            self.size += len(chunk)
            if self.size > MAX_GRADER_BYTES:
                self.fault = "the grader wrote more than its limit"
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                await self._line(line)
                if self.report is not None or self.fault is not None:
                    return  # its last word: the jails are torn down after the answer

    async def _line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
            if "test" in message:
                result = TestResult.from_json(message["test"])
                self.tests.append(result)
                await self.emit(TestDone(result))
            elif "report" in message:
                self.report = GradingReport.from_json(message["report"])
            elif "fault" in message:
                self.fault = str(message["fault"])
        except (ValueError, TypeError, ConnectionError) as exc:
            self.fault = self.fault or f"unreadable grader line: {exc}"


async def execute_grading(
    learner: RunContext,
    grader: RunContext,
    learner_zygote: Zygote,
    grader_zygote: Zygote,
    mode_seed: tuple[str, int],
    emit: Emit,
) -> tuple[RunResult, asyncio.Task[None]]:
    """Run both jails until the grader has reported (or the run is stopped). Returns the
    result at once, with the task that then kills and removes both jails: tearing down two
    jails takes a few hundred milliseconds the learner need not wait for, but the slot is
    not free until it is done (worker.py)."""
    started = time.monotonic()
    cgroups: list[RunCgroup] = []
    jobs = _Jobs()
    try:
        for ctx in (learner, grader):
            lim = ctx.limits
            cgroups.append(
                ctx.cgroups.create(memory_mb=lim.memory_mb, pids=lim.pids, cpus=lim.threads)
            )
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            learner_pipes = await _fork(learner, learner_zygote, cgroups[0], ours.fileno())
            grader_pipes = await _fork(grader, grader_zygote, cgroups[1], theirs.fileno())
        except ZygoteDied as exc:
            detail = f"The sandbox's warm process stopped unexpectedly ({exc}); please retry."
            result = RunResult.refused(
                learner.run_id, Verdict.INTERNAL_ERROR, detail, backend=learner.backend
            )
            return result, asyncio.create_task(_clean_up(cgroups, jobs))
        finally:
            ours.close()
            theirs.close()
        result = await _follow(
            learner, cgroups, learner_pipes, grader_pipes, mode_seed, emit, started, jobs
        )
    except BaseException:
        await asyncio.shield(_clean_up(cgroups, jobs))
        raise
    return result, asyncio.create_task(_clean_up(cgroups, jobs))


@dataclass
class _Jobs:
    """What still reads from the jails while they are torn down."""

    tasks: list[asyncio.Task[object]] = field(default_factory=list)
    output: OutputStreams | None = None


async def _clean_up(cgroups: list[RunCgroup], jobs: _Jobs) -> None:
    """Kill whatever is left of both jails and remove their cgroups; never raises."""
    try:
        for cgroup in cgroups:
            await asyncio.shield(asyncio.to_thread(cgroup.remove))
    except Exception:
        log.exception("removing a graded run's cgroups failed")
    finally:
        for task in jobs.tasks:
            task.cancel()
        if jobs.output is not None:
            jobs.output.close()


async def _follow(
    learner: RunContext,
    cgroups: list[RunCgroup],
    learner_pipes: _Pipes,
    grader_pipes: _Pipes,
    mode_seed: tuple[str, int],
    emit: Emit,
    started: float,
    jobs: _Jobs,
) -> RunResult:
    with contextlib.suppress(ConnectionError):  # a client gone away is noticed elsewhere
        await emit(Started(learner.backend, learner.device))
    output = OutputStreams(
        learner.limits.output_bytes, emit, lambda: learner.stop(StopReason.OUTPUT)
    )
    jobs.output = output
    output.attach(learner_pipes.stdout, "stdout")
    output.attach(learner_pipes.stderr, "stderr")
    lines = _GraderLines(emit)
    grader_err = asyncio.create_task(_read_all(await _read_pipe(grader_pipes.stderr)))
    grader_out = asyncio.create_task(lines.follow(await _read_pipe(grader_pipes.stdout)))
    jobs.tasks += [
        asyncio.create_task(output.run()),
        grader_out,
        grader_err,
        asyncio.create_task(_read_all(await _read_pipe(learner_pipes.status))),
        asyncio.create_task(_read_all(await _read_pipe(grader_pipes.status))),
        asyncio.create_task(_watch_cpu(learner, cgroups[0])),
    ]
    stopped = asyncio.create_task(learner.stopped.wait())
    jobs.tasks.append(stopped)
    # The grader's stdout ends when it has reported and exited (or died): its last line.
    deadline = learner.limits.wall_seconds
    done, _ = await asyncio.wait(
        {grader_out, stopped}, timeout=deadline, return_when=asyncio.FIRST_COMPLETED
    )
    if not done:
        learner.stop(StopReason.TIMEOUT)
    elif grader_out not in done and learner.stop_reason is not StopReason.CANCEL:
        # The learner's jail was stopped (its output or CPU time): the grader carries on,
        # its remaining requests unanswered, and reports.
        await asyncio.to_thread(cgroups[0].kill_all)
        remaining = max(1.0, deadline - (time.monotonic() - started))
        await asyncio.wait({grader_out}, timeout=remaining)
    stderr = b""
    if grader_err.done() and not grader_err.cancelled():
        stderr = grader_err.result()
    return _result(learner, cgroups[0], output, lines, stderr, mode_seed, started)


def _result(
    learner: RunContext,
    cgroup: RunCgroup,
    output: OutputStreams,
    lines: _GraderLines,
    grader_stderr: bytes,
    mode_seed: tuple[str, int],
    started: float,
) -> RunResult:
    verdict, detail = Verdict.OK, ""
    exit_code: int | None = 0
    report = lines.report
    if learner.stop_reason is not None:
        verdict, exit_code, detail = judge(learner.stop_reason, learner.limits, cgroup, b"")
    elif _oom_killed(cgroup):
        # One of its processes ran out of memory: the tests it was in failed, the rest were
        # graded (by a fresh server, or as errors where the whole jail went).
        verdict, exit_code = Verdict.MEMORY_LIMIT, None
        detail = (
            f"Your code needed more than {learner.limits.memory_mb:,} MB of memory in at "
            "least one test, the limit for a run."
        )
    if report is None and learner.stop_reason is StopReason.TIMEOUT:
        report = _partial(lines.tests, GradingVerdict.TIMEOUT, detail, mode_seed)
    elif report is None:
        log.error(
            "grader failed in run %s: %s; stderr: %s",
            learner.run_id,
            lines.fault,
            grader_stderr[-4000:].decode(errors="replace"),
        )
        if learner.stop_reason is None:
            verdict, exit_code = Verdict.INTERNAL_ERROR, None
            detail = "The grader failed (our fault, not your code's); it has been logged."
        report = _partial(lines.tests, GradingVerdict.ERROR, detail, mode_seed)
    return RunResult(
        id=learner.run_id,
        verdict=verdict,
        exit_code=exit_code,
        stdout=output.text("stdout"),
        stderr=output.text("stderr"),
        wall_ms=int((time.monotonic() - started) * 1000),
        backend=learner.backend,
        device=learner.device,
        detail=detail,
        cpu_ms=_cpu_ms(cgroup),
        max_memory_mb=None,
        truncated=output.truncated,
        grading=report,
    )


def _partial(
    tests: list[TestResult], verdict: GradingVerdict, detail: str, mode_seed: tuple[str, int]
) -> GradingReport:
    return GradingReport(verdict, 0.0, tests, detail, mode_seed[1], Mode(mode_seed[0]))


def _oom_killed(cgroup: RunCgroup) -> bool:
    try:
        return cgroup.oom_killed()
    except OSError:
        return False


def _cpu_ms(cgroup: RunCgroup) -> int | None:
    try:
        return cgroup.cpu_ms()
    except OSError:
        return None
