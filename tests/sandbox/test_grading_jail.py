"""Graded runs through the real worker: the learner's jail and the grader's, as a learner's
submission goes (sandbox/README.md, "Grading"). The honesty of every exercise is proven in
tests/grading with the trusted runner; here a sample of it goes through the jails."""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any

import pytest

from app.settings import PROJECT_ROOT
from sandbox.grading.compare import DEFAULT_TOLERANCES
from sandbox.grading.exercise import Exercise, grading_request, load
from sandbox.protocol import Mode
from tests.support.sandbox_worker import WorkerHandle, needs_isolation

pytestmark = needs_isolation
EXERCISES = PROJECT_ROOT / "content" / "exercises"


def exercise(slug: str) -> Exercise:
    return load(EXERCISES / slug)


def tolerance(ex: Exercise, dtype: str, device: str) -> str:
    """The tolerance a grading on `device` compares `dtype` with, as its report names it."""
    per_device = ex.config.tolerances.get(dtype) or DEFAULT_TOLERANCES[dtype]
    return per_device.get(device, per_device["cpu"]).short()


def graded(
    worker: WorkerHandle,
    ex: Exercise,
    code: str,
    mode: Mode = Mode.SUBMIT,
    seed: int = 7,
    backend: str = "cpu",
) -> dict[str, Any]:
    return worker.grade(code, grading_request(ex, mode, seed).to_json(), backend=backend)


# clip-grad-norm: its performance test times the learner's function bound to parameters kept
# in the learner's process (content/README.md), a path of its own through the jails.
@pytest.mark.parametrize(
    "slug", ["stable-softmax", "gelu-autograd-function", "adamw-bias-correction", "clip-grad-norm"]
)
def test_the_reference_passes_through_the_jails(worker: WorkerHandle, slug: str) -> None:
    ex = exercise(slug)
    result = graded(worker, ex, ex.reference)
    assert result["verdict"] == "ok", result["detail"]
    grading = result["grading"]
    failing = [(t["name"], t["message"]) for t in grading["tests"] if t["status"] != "pass"]
    assert grading["verdict"] == "passed", failing
    assert grading["score"] == 100.0
    streamed = [e["test"]["name"] for e in result["events"] if e["type"] == "test"]
    assert streamed == [t["name"] for t in grading["tests"]]
    assert len(streamed) == len(ex.tests())
    assert grading["performance"]["ratio"] > 0  # every passing submission reports its time


@pytest.mark.parametrize(
    "slug", ["stable-softmax", "gelu-autograd-function", "adamw-bias-correction"]
)
def test_a_mutant_fails_a_hidden_test_through_the_jails(worker: WorkerHandle, slug: str) -> None:
    ex = exercise(slug)
    first_mutant = sorted(ex.mutants)[0]
    grading = graded(worker, ex, ex.mutants[first_mutant])["grading"]
    assert grading["verdict"] == "failed"
    assert any(t["hidden"] and t["status"] == "fail" for t in grading["tests"])


def test_run_mode_grades_the_visible_tests_only(worker: WorkerHandle) -> None:
    ex = exercise("stable-softmax")
    grading = graded(worker, ex, ex.reference, Mode.RUN)["grading"]
    assert {t["name"] for t in grading["tests"]} == {t.name for t in ex.tests() if t.visible}
    assert not any(t["hidden"] for t in grading["tests"])


def test_the_learners_output_is_its_own(worker: WorkerHandle) -> None:
    ex = exercise("stable-softmax")
    code = ex.reference + "\nprint('loaded once')\n"
    result = graded(worker, ex, code, Mode.RUN)
    assert result["stdout"] == "loaded once\n"
    assert result["grading"]["verdict"] == "passed"


def test_code_that_does_not_load_is_an_error_with_its_traceback(worker: WorkerHandle) -> None:
    ex = exercise("stable-softmax")
    grading = graded(worker, ex, "def softmax(x, dim:\n")["grading"]
    assert grading["verdict"] == "error"
    assert "SyntaxError" in grading["detail"]
    assert all(t["status"] == "error" for t in grading["tests"])


def test_the_jailed_grader_and_the_trusted_runner_agree(worker: WorkerHandle) -> None:
    """The honesty matrix runs in-process (tests/grading); it proves the jailed path's
    suites only if both give the same results for the same code and seed."""
    from sandbox.grading.trusted import grade_in_process

    ex = exercise("gelu-autograd-function")
    for code in (ex.mutants["missing_pdf_term"], ex.mutants["tanh_approximation"]):
        jailed = graded(worker, ex, code, seed=5)["grading"]
        trusted = grade_in_process(ex, code, seed=5)
        assert [(t["name"], t["status"]) for t in jailed["tests"]] == [
            (t.name, t.status.value) for t in trusted.tests
        ]
        assert jailed["score"] == trusted.score


# The flag torch sets in a forked child to say its pthreadpool is the parent's, and corrupt:
# caffe2/utils/threadpool/pthreadpool-cpp.cc, `(anonymous namespace)::leak_corrupted_threadpool`.
LEAK_FLAG = b"_ZN12_GLOBAL__N_125leak_corrupted_threadpoolE"


def local_symbol(library: Path, name: bytes) -> int | None:
    """The address of a symbol in a shared library's .symtab (local symbols included),
    relative to where it is loaded; None when the library has no such symbol (stripped).
    Read through a map of the file: the library is hundreds of megabytes."""
    with library.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[:6] != b"\x7fELF\x02\x01":  # 64-bit little-endian
            return None
        (shoff,) = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
        sections = [
            struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
        ]
        for _, kind, _, _, offset, size, link, _, _, _ in sections:
            if kind != 2:  # SHT_SYMTAB
                continue
            strings_at, strings_size = sections[link][4], sections[link][5]
            found = data.find(b"\0" + name + b"\0", strings_at, strings_at + strings_size)
            if found < 0:
                return None
            for at in range(
                offset, offset + size, 24
            ):  # Elf64_Sym: name, info, other, shndx, value, size
                if struct.unpack_from("<I", data, at)[0] == found + 1 - strings_at:
                    return int(struct.unpack_from("<Q", data, at + 8)[0])
        return None


LEAK_PROBE = """
import ctypes

def _pool_marked_corrupt():
    for line in open("/proc/self/maps"):
        fields = line.split()
        if fields[-1].endswith("/libtorch_cpu.so") and int(fields[2], 16) == 0:
            start = int(fields[0].split("-")[0], 16)
            return ctypes.c_bool.from_address(start + {offset}).value
    return None

print("pool marked corrupt:", _pool_marked_corrupt())
"""


def test_the_learners_server_starts_with_a_sound_thread_pool(worker: WorkerHandle) -> None:
    """A fork marks torch's thread pool corrupt in the child, and the first call that asks
    for it rebuilds it without a lock: two threads asking at once (the eight autograd threads
    a backward starts after torch.export) can get none, and the process aborts (SIGABRT,
    "Invalid thread pool!"; export-friendly-module on a busy machine). The relay's server
    must rebuild it in its one thread before the learner's code runs. Read from the
    learner's code, at load, so no race is needed to see it."""
    import torch

    offset = local_symbol(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so", LEAK_FLAG)
    if offset is None:
        pytest.skip("this torch's libtorch_cpu.so names no leak_corrupted_threadpool")
    ex = exercise("stable-softmax")
    result = graded(worker, ex, ex.reference + LEAK_PROBE.format(offset=offset), Mode.RUN)
    assert result["stdout"] == "pool marked corrupt: False\n", result["stderr"]
    assert result["grading"]["verdict"] == "passed"


# The learner's jail on the GPU (the grader's stays on the CPU): skipped where the worker has
# no CUDA backend; docs/sandbox-and-grading.md says where these ran.
GPU_SAMPLE = ["stable-softmax", "gelu-autograd-function", "adamw-bias-correction", "lora-linear"]


@pytest.mark.parametrize("slug", GPU_SAMPLE)
def test_the_reference_passes_through_the_jails_on_the_gpu(worker: WorkerHandle, slug: str) -> None:
    if "cuda" not in worker.status()["backends"]:
        pytest.skip("this host's worker has no CUDA backend (no NVIDIA GPU answered)")
    ex = exercise(slug)
    result = graded(worker, ex, ex.reference, backend="cuda")
    assert result["verdict"] == "ok", result["detail"]
    grading = result["grading"]
    failing = [(t["name"], t["message"]) for t in grading["tests"] if t["status"] != "pass"]
    assert grading["verdict"] == "passed", failing
    # The report names the tolerances it compared with: the exercise's CUDA ones (looser than
    # its CPU ones for these four), since the learner's code ran on the GPU.
    assert grading["tolerances"] == {d: tolerance(ex, d, "cuda") for d in grading["tolerances"]}
    assert any(tolerance(ex, d, "cpu") != tolerance(ex, d, "cuda") for d in grading["tolerances"])
    assert grading["performance"]["ratio"] > 0


@pytest.mark.parametrize("slug", GPU_SAMPLE)
def test_a_mutant_fails_a_hidden_test_through_the_jails_on_the_gpu(
    worker: WorkerHandle, slug: str
) -> None:
    if "cuda" not in worker.status()["backends"]:
        pytest.skip("this host's worker has no CUDA backend (no NVIDIA GPU answered)")
    ex = exercise(slug)
    grading = graded(worker, ex, ex.mutants[sorted(ex.mutants)[0]], backend="cuda")["grading"]
    assert grading["verdict"] == "failed"
    assert any(t["hidden"] and t["status"] == "fail" for t in grading["tests"])


def _alternatives() -> list[tuple[str, str]]:
    return [
        (folder.name, path.stem)
        for folder in sorted(p for p in EXERCISES.iterdir() if p.is_dir())
        for path in sorted((folder / "alternatives").glob("*.py"))
    ]


@pytest.mark.parametrize(("slug", "name"), _alternatives())
def test_every_alternative_passes_through_the_jails(
    worker: WorkerHandle, slug: str, name: str
) -> None:
    """Each correct alternative (tests/grading/test_alternatives.py proves it on five seeds
    in process) once as a learner's submission goes: the two paths agree."""
    ex = exercise(slug)
    code = (EXERCISES / slug / "alternatives" / f"{name}.py").read_text(encoding="utf-8")
    result = graded(worker, ex, code, seed=sum(map(ord, name)) % 1000)
    assert result["verdict"] == "ok", result["detail"]
    grading = result["grading"]
    failing = [(t["name"], t["message"]) for t in grading["tests"] if t["status"] != "pass"]
    assert grading["verdict"] == "passed", failing
