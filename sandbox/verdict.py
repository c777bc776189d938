"""The verdict on a finished run, with its exit code and plain words on why: from why the
worker stopped it (if it did), what its cgroup saw, and the wait status its jail reported."""

from __future__ import annotations

import json
import os
import signal
from typing import Any, NamedTuple, assert_never

from sandbox.cgroups import RunCgroup
from sandbox.jail import SETUP_FAILED
from sandbox.output import human_bytes
from sandbox.protocol import Limits, StopReason, Verdict
from sandbox.unix_sockets import MAX_UNIX_SOCKETS


class Judgement(NamedTuple):
    verdict: Verdict
    exit_code: int | None
    detail: str


def judge(
    stop_reason: StopReason | None, limits: Limits, cgroup: RunCgroup, report_bytes: bytes
) -> Judgement:
    """The verdict on a run whose processes are all gone. `report_bytes` holds the JSON
    lines the supervisor wrote to the run's status pipe."""
    if stop_reason is not None:
        return _stopped(stop_reason, limits)
    if _oom_killed(cgroup):
        return Judgement(
            Verdict.MEMORY_LIMIT,
            None,
            f"Stopped: the run needed more than {limits.memory_mb:,} MB of memory, the limit "
            "for a run.",
        )
    report = _read_report(report_bytes)
    if "status" not in report:
        return _not_started(report)
    return _ended(report["status"], limits, cgroup)


def cpu_exhausted(cgroup: RunCgroup, limits: Limits) -> bool:
    """Whether the run (all its processes together) has used up its CPU time."""
    try:
        return cgroup.cpu_ms() >= limits.cpu_seconds * 1000
    except OSError:
        return False


def _stopped(reason: StopReason, limits: Limits) -> Judgement:
    match reason:
        case StopReason.TIMEOUT:
            return Judgement(
                Verdict.TIMEOUT,
                None,
                f"Stopped after {limits.wall_seconds:g} s of wall-clock time, the limit for a run.",
            )
        case StopReason.OUTPUT:
            return Judgement(
                Verdict.OUTPUT_LIMIT,
                None,
                f"Stopped: the run printed more than {human_bytes(limits.output_bytes)}, "
                "the limit for a run's output.",
            )
        case StopReason.CANCEL:
            return Judgement(Verdict.KILLED, None, "Cancelled.")
        case StopReason.CPU:
            return Judgement(Verdict.TIMEOUT, None, _cpu_detail(limits))
        case StopReason.UNIX_SOCKETS:
            return Judgement(
                Verdict.MEMORY_LIMIT,
                None,
                f"Stopped: the run held more than {MAX_UNIX_SOCKETS} Unix sockets at once, the "
                "limit for a run (what they queue is kernel memory its memory limit cannot "
                "count in full).",
            )
        case _:
            assert_never(reason)


def _cpu_detail(limits: Limits) -> str:
    return f"Stopped after {limits.cpu_seconds:g} s of CPU time, the limit for a run."


def _oom_killed(cgroup: RunCgroup) -> bool:
    try:
        return cgroup.oom_killed()
    except OSError:
        return False


def _read_report(report_bytes: bytes) -> dict[str, Any]:
    """The supervisor's JSON lines merged; a line that is not JSON is skipped."""
    report: dict[str, Any] = {}
    for line in report_bytes.splitlines():
        try:
            report.update(json.loads(line))
        except ValueError:
            continue
    return report


def _not_started(report: dict[str, Any]) -> Judgement:
    """No wait status of the code: the jail never got as far as running it."""
    init = report.get("init")
    if isinstance(init, int) and os.WIFEXITED(init) and os.WEXITSTATUS(init) == SETUP_FAILED:
        return Judgement(
            Verdict.INTERNAL_ERROR, None, "The sandbox could not build this run's jail."
        )
    return Judgement(
        Verdict.INTERNAL_ERROR,
        None,
        "The sandbox could not start or watch this run: " + str(report.get("error", report)),
    )


def _ended(status: int, limits: Limits, cgroup: RunCgroup) -> Judgement:
    """The verdict from the code's own wait status."""
    if os.WIFSIGNALED(status):
        return _signalled(os.WTERMSIG(status), limits, cgroup)
    code = os.WEXITSTATUS(status)
    if code == 0:
        return Judgement(Verdict.OK, 0, "")
    return Judgement(Verdict.ERROR, code, f"The program exited with status {code}.")


def _signalled(sig: int, limits: Limits, cgroup: RunCgroup) -> Judgement:
    if sig == signal.SIGSYS:
        return Judgement(
            Verdict.KILLED,
            -sig,
            "Stopped: the code made a system call the sandbox forbids (such as ptrace, "
            "mount or creating namespaces).",
        )
    # The kernel sends SIGXCPU at RLIMIT_CPU, which it measures on its own clock: the
    # cgroup's count may still read a few ms short then (seen under load), so SIGXCPU
    # alone is enough. A SIGKILL is ours only when the run's CPU time is used up.
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_exhausted(cgroup, limits)):
        return Judgement(Verdict.TIMEOUT, -sig, _cpu_detail(limits))
    return Judgement(Verdict.ERROR, -sig, f"The program was ended by signal {_name(sig)}.")


def _name(sig: int) -> str:
    """SIGSEGV and the like; a real-time signal (which the code may send itself) has no name
    in signal.Signals, and must not turn a plain error into a failure of ours."""
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)
