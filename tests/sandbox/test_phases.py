"""A run's clock in phases (sandbox/phases.py): what a lab spends compiling is timed against
an allowance of its own, the page hears when it compiles, a timeout says which phase it
stopped in, and code that claims to compile gains the allowance and nothing more."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from sandbox.lab.backprop_lab import phase as lab_phase
from sandbox.phases import (
    COMPILING,
    MAX_SWITCHES,
    PHASE_FD_ENV,
    RUNNING,
    PhaseClock,
    PhaseLines,
)
from sandbox.protocol import GRADING_VERSION, Limits
from tests.support.sandbox_worker import WorkerHandle, needs_isolation

LIMITS = Limits(wall_seconds=60.0, compile_seconds=120.0)


def test_running_time_counts_against_the_runs_own_limit() -> None:
    clock = PhaseClock.start(LIMITS, now=0.0)
    assert clock.left(10.0) == 50.0
    clock.stop(60.0)
    assert clock.timeout_detail() == ("Stopped after 60 s of wall-clock time, the limit for a run.")


def test_compiling_is_charged_to_the_allowance_first_then_to_the_runs_limit() -> None:
    clock = PhaseClock.start(LIMITS, now=0.0)
    clock.switch(COMPILING, 10.0)  # 10 s of running
    assert clock.left(10.0) == 120.0 + 50.0
    clock.switch(RUNNING, 110.0)  # 100 s of compiling: all from the allowance
    assert clock.compiling_used == 100.0 and clock.running_used == 10.0
    assert clock.left(110.0) == 50.0
    clock.switch(COMPILING, 120.0)  # 10 s more of running
    clock.switch(RUNNING, 160.0)  # 40 s of compiling: 20 from the allowance, 20 past it
    assert clock.compiling_used == 120.0 and clock.running_used == 40.0
    assert clock.left(160.0) == 20.0
    clock.stop(180.0)
    detail = clock.timeout_detail()
    assert detail.startswith("Stopped after 60 s of wall-clock time, the limit for a run, while")
    assert "not counting 120 s of compiling" in detail


def test_a_timeout_while_compiling_says_so() -> None:
    clock = PhaseClock.start(LIMITS, now=0.0)
    clock.switch(COMPILING, 5.0)
    assert clock.left(5.0) == 175.0
    clock.stop(180.0)
    detail = clock.timeout_detail()
    assert detail.startswith("Stopped while compiling, after 175 s of it:")
    assert "up to 120 s beyond the run's own 60 s" in detail


def test_unknown_words_and_repeats_change_nothing() -> None:
    clock = PhaseClock.start(LIMITS, now=0.0)
    assert not clock.switch("sleeping", 1.0)
    assert not clock.switch(RUNNING, 1.0)
    assert clock.switch(COMPILING, 1.0) and not clock.switch(COMPILING, 2.0)
    assert clock.switches == 1


def test_past_the_most_switches_the_clock_stays_running() -> None:
    clock = PhaseClock.start(LIMITS, now=0.0)
    for n in range(MAX_SWITCHES):
        assert clock.switch(COMPILING if n % 2 == 0 else RUNNING, float(n))
    assert clock.phase == RUNNING
    assert not clock.switch(COMPILING, 100.0)
    assert clock.phase == RUNNING


def test_phase_lines_split_chunks_and_drop_what_is_not_a_phase() -> None:
    async def read(chunks: list[bytes]) -> list[str | None]:
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        for chunk in chunks:
            queue.put_nowait(chunk)
        lines = PhaseLines(queue)
        return [await lines.next() for _ in range(4)]

    chunks = [b"comp", b"iling\nrun", b"x" * 100, b"\nrunning\n", b""]
    # A loop of its own, in a thread: a browser test earlier in the session may have left
    # this thread's event loop running (Playwright's sync API keeps one).
    with ThreadPoolExecutor(1) as thread:
        lines = thread.submit(asyncio.run, read(chunks)).result()
    assert lines == [COMPILING, "running", None, None]


def test_the_lab_harness_and_the_sandbox_name_the_same_variable() -> None:
    assert lab_phase.PHASE_FD_ENV == PHASE_FD_ENV


def test_the_harness_reports_compiling_around_the_block(monkeypatch: pytest.MonkeyPatch) -> None:
    read, write = os.pipe()
    monkeypatch.setenv(PHASE_FD_ENV, str(write))
    with pytest.raises(ValueError), lab_phase.compiling():
        raise ValueError("a compile that failed")
    os.close(write)
    assert os.read(read, 100) == b"compiling\nrunning\n"
    os.close(read)


def test_without_the_sandbox_the_harness_reports_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PHASE_FD_ENV, raising=False)
    with lab_phase.compiling():
        pass  # no pipe, no error


# Through the real worker: a run reporting its phases as the harness does.
SAYS = (
    "import os, time\n"
    "def say(word):\n"
    "    os.write(int(os.environ['BACKPROP_PHASE_FD']), (word + '\\n').encode())\n"
)


def phases_of(result: dict[str, object]) -> list[str]:
    events = result["events"]
    assert isinstance(events, list)
    return [e["phase"] for e in events if e["type"] == "phase"]


@needs_isolation
def test_compiling_past_the_runs_limit_ends_well_within_the_allowance(
    worker: WorkerHandle,
) -> None:
    code = SAYS + "say('compiling')\ntime.sleep(3)\nsay('running')\nprint('done')\n"
    result = worker.run(code, limits={"wall_seconds": 2, "compile_seconds": 30})
    assert result["verdict"] == "ok", result["detail"]
    assert result["stdout"] == "done\n"
    assert phases_of(result) == ["compiling", "running"]
    assert [e["allowance_seconds"] for e in result["events"] if e["type"] == "phase"] == [30, 30]


@needs_isolation
def test_a_run_stopped_while_compiling_is_told_so(worker: WorkerHandle) -> None:
    code = SAYS + "say('compiling')\ntime.sleep(60)\n"
    result = worker.run(code, limits={"wall_seconds": 1, "compile_seconds": 2})
    assert result["verdict"] == "timeout"
    assert result["detail"].startswith("Stopped while compiling, after ")
    assert 3000 <= result["wall_ms"] < 30_000


@needs_isolation
def test_claiming_to_compile_gains_the_allowance_and_no_more(worker: WorkerHandle) -> None:
    # Switching as fast as it can, then claiming to compile for good.
    code = SAYS + "for _ in range(10000):\n    say('compiling'); say('running')\n"
    code += "say('compiling')\ntime.sleep(60)\n"
    result = worker.run(code, limits={"wall_seconds": 1, "compile_seconds": 2})
    assert result["verdict"] == "timeout"
    assert result["wall_ms"] < 30_000
    assert len(phases_of(result)) <= MAX_SWITCHES
    # Past the most switches the clock stopped listening: timed as running.
    assert result["detail"].startswith("Stopped after 1 s of wall-clock time")


@needs_isolation
def test_a_client_of_an_older_version_hears_no_phases(worker: WorkerHandle) -> None:
    code = SAYS + "say('compiling')\nsay('running')\n"
    assert phases_of(worker.run(code)) == ["compiling", "running"]
    assert phases_of(worker.run(code, version=GRADING_VERSION)) == []
