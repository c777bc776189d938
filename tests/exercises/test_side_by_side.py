"""Which devices a `both` submission is graded on, and why each left out is left out: the
same sentence the exercise page shows for its GPU row (app/exercises/submissions.py)."""

from __future__ import annotations

from app.exercises.submissions import devices_for
from sandbox.protocol import WorkerState, WorkerStatus

CPU = {"cpu": "Some CPU"}


def status(devices: dict[str, str], absent: dict[str, str] | None = None) -> WorkerStatus:
    return WorkerStatus(
        WorkerState.READY, list(devices), "x", devices, "ready", absent=absent or {}
    )


def test_both_devices_when_the_worker_has_a_gpu() -> None:
    both = devices_for(["cpu", "cuda"], status(CPU | {"cuda": "Some GPU"}))
    assert both.backends == ["cpu", "cuda"] and both.absent == {}


def test_the_workers_own_reason_for_a_missing_gpu() -> None:
    why = "This host has no NVIDIA GPU (no /dev/nvidia* device files)."
    alone = devices_for(["cpu", "cuda"], status(CPU, {"cuda": why}))
    assert alone.backends == ["cpu"] and alone.absent == {"cuda": why}
    unexplained = devices_for(["cpu", "cuda"], status(CPU))
    assert unexplained.absent == {"cuda": "This server has no CUDA backend right now."}


def test_a_cpu_only_exercise_says_so_even_beside_a_gpu() -> None:
    found = devices_for(["cpu"], status(CPU | {"cuda": "Some GPU"}))
    assert found.backends == ["cpu"]
    assert found.absent == {"cuda": "This exercise is graded on the CPU only."}


def test_a_starting_worker_queues_the_cpu_and_says_why_not_the_gpu() -> None:
    starting = WorkerStatus(WorkerState.STARTING, [], None, {}, "starting: loading PyTorch")
    found = devices_for(["cpu", "cuda"], starting)
    assert found.backends == ["cpu"]
    assert found.absent == {"cuda": "The sandbox is not ready: starting: loading PyTorch"}
