"""The verdict on a finished run, from why it was stopped and what its jail reported. No
jail needed: the cgroup here has no files, so every reading of it fails, as OSError."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from sandbox.cgroups import CgroupV1, RunCgroup
from sandbox.jail import SETUP_FAILED
from sandbox.protocol import Limits, StopReason, Verdict
from sandbox.verdict import Judgement, judge

LIMITS = Limits()


@pytest.fixture
def cgroup(tmp_path: Path) -> RunCgroup:
    return CgroupV1({c: tmp_path / c for c in ("memory", "pids", "cpu", "cpuacct")})


def report(**lines: int) -> bytes:
    return b"".join(json.dumps({k: v}).encode() + b"\n" for k, v in lines.items())


@pytest.mark.parametrize(
    ("reason", "verdict", "words"),
    [
        (StopReason.TIMEOUT, Verdict.TIMEOUT, "60 s of wall-clock time"),
        (StopReason.CPU, Verdict.TIMEOUT, "120 s of CPU time"),
        (StopReason.OUTPUT, Verdict.OUTPUT_LIMIT, "more than 256 KiB"),
        (StopReason.CANCEL, Verdict.KILLED, "Cancelled."),
    ],
)
def test_a_stopped_run_is_judged_by_why_it_was_stopped(
    cgroup: RunCgroup, reason: StopReason, verdict: Verdict, words: str
) -> None:
    # Even when the code itself exited 0 just then: the stop came first.
    judgement = judge(reason, LIMITS, cgroup, report(status=0, init=0))
    assert judgement.verdict is verdict and judgement.exit_code is None
    assert words in judgement.detail


def test_every_stop_reason_has_a_verdict(cgroup: RunCgroup) -> None:
    for reason in StopReason:
        assert judge(reason, LIMITS, cgroup, b"").verdict is not Verdict.INTERNAL_ERROR


@pytest.mark.parametrize(
    ("status", "verdict", "exit_code", "words"),
    [
        (0, Verdict.OK, 0, ""),
        (3 << 8, Verdict.ERROR, 3, "The program exited with status 3."),
        (signal.SIGSEGV, Verdict.ERROR, -11, "The program was ended by signal SIGSEGV."),
        # A real-time signal the code sent itself has no name, and is still the code's own.
        (40, Verdict.ERROR, -40, "The program was ended by signal 40."),
        (signal.SIGXCPU, Verdict.TIMEOUT, -signal.SIGXCPU, "120 s of CPU time"),
        (signal.SIGSYS, Verdict.KILLED, -signal.SIGSYS, "a system call the sandbox forbids"),
    ],
)
def test_a_run_that_ended_by_itself_is_judged_by_its_wait_status(
    cgroup: RunCgroup, status: int, verdict: Verdict, exit_code: int, words: str
) -> None:
    judgement = judge(None, LIMITS, cgroup, report(status=status, init=0))
    assert (judgement.verdict, judgement.exit_code) == (verdict, exit_code)
    assert words in judgement.detail
    assert bool(judgement.detail) is (verdict is not Verdict.OK)


def test_a_sigkill_is_ours_only_when_the_cpu_time_is_used_up(cgroup: RunCgroup) -> None:
    judgement = judge(None, LIMITS, cgroup, report(status=signal.SIGKILL))
    assert judgement.verdict is Verdict.ERROR  # the cgroup cannot say the CPU time ran out


def test_a_run_whose_jail_was_never_built_is_our_failure(cgroup: RunCgroup) -> None:
    built = judge(None, LIMITS, cgroup, report(init=SETUP_FAILED << 8))
    assert built == Judgement(
        Verdict.INTERNAL_ERROR, None, "The sandbox could not build this run's jail."
    )
    lost = judge(None, LIMITS, cgroup, b'{"error": "OSError: unshare"}\nnot json\n')
    assert lost.verdict is Verdict.INTERNAL_ERROR and "OSError: unshare" in lost.detail
