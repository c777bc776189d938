"""Hostile code against the grader: a learner's submission that tries to pass without
being right, or to see what grades it. Each one goes through the real worker and both
jails (sandbox/README.md, "Grading", has the table of what stops each). Keep it growing."""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.settings import PROJECT_ROOT
from sandbox.grading.exercise import grading_request, load
from sandbox.protocol import Mode
from tests.support.sandbox_worker import (
    WorkerHandle,
    needs_isolation,
    run_cgroups,
)

pytestmark = needs_isolation
EXERCISE = load(PROJECT_ROOT / "content" / "exercises" / "stable-softmax")
REFERENCE = EXERCISE.reference
WRONG = EXERCISE.mutants["no_max_subtraction"]
# Planted in the reference and the tests that the grader gets: never to be seen by the code.
CANARY = "grader-canary-" + "7f3a9c"
CALL_SECONDS = 2.0


@pytest.fixture(autouse=True)
def nothing_is_left(worker: WorkerHandle) -> Any:
    """After each case both jails go: a graded run answers first and is torn down after, so
    this waits (briefly) for no cgroup of this worker's runs to be left. A cgroup is removed
    only once no process is left in it; processes of sandbox users on the host are not
    counted, since other workers on a shared host run as the same uids."""
    yield
    assert worker.state_dir is not None
    deadline = time.monotonic() + 10
    while run_cgroups(worker.state_dir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert run_cgroups(worker.state_dir) == []


def grade(worker: WorkerHandle, code: str, **limits: Any) -> dict[str, Any]:
    request = grading_request(EXERCISE, Mode.SUBMIT, seed=11)
    payload = request.to_json()
    payload["reference"] = f"# {CANARY}\n" + payload["reference"]
    payload["tests"] = f"# {CANARY}\n" + payload["tests"]
    payload["config"] = {**payload["config"], "call_seconds": CALL_SECONDS}
    return worker.grade(code, payload, limits=limits or None)


def statuses(result: dict[str, Any]) -> dict[str, str]:
    return {t["name"]: t["status"] for t in result["grading"]["tests"]}


SOFTMAX_TESTS = {t.name for t in EXERCISE.tests() if t.target == "softmax"}
LOG_SOFTMAX_TESTS = {t.name for t in EXERCISE.tests() if t.target == "log_softmax"}


def test_it_cannot_find_the_reference_or_the_tests(worker: WorkerHandle) -> None:
    snoop = (
        REFERENCE
        + """
import os, stat
def readable(path):
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
needle = ("grader-canary-" + "7f3a9c").encode()
found, pids = [], sorted(p for p in os.listdir("/proc") if p.isdigit())
for pid in pids:
    for name in ("cmdline", "environ", "maps"):
        try:
            if needle in open(f"/proc/{pid}/{name}", "rb").read():
                found.append(f"{pid}/{name}")
        except OSError:
            pass
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                path = f"/proc/{pid}/fd/{fd}"
                if readable(path) and needle in open(path, "rb").read(1 << 20):
                    found.append(f"{pid}/fd/{fd}")
            except OSError:
                pass
    except OSError:
        pass
for root in ("/tmp", "/dev/shm", "/run", "/var", "/etc", "/home", "/root", "/opt/lab"):
    for folder, _, files in os.walk(root):
        for f in files:
            try:
                path = os.path.join(folder, f)
                if readable(path) and needle in open(path, "rb").read(1 << 20):
                    found.append(os.path.join(folder, f))
            except OSError:
                pass
print("pids", len(pids), "found", found)
"""
    )
    result = grade(worker, snoop)
    assert "found []" in result["stdout"], (result["detail"], result["stderr"], result["grading"])
    assert CANARY not in result["stdout"] + result["stderr"]
    assert result["grading"]["verdict"] == "passed"


def test_patching_the_comparison_changes_nothing(worker: WorkerHandle) -> None:
    code = (
        WRONG
        + """
import builtins, torch, torch.testing
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.isclose = lambda a, b, *r, **k: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *a, **k: None
torch.Tensor.__eq__ = lambda a, b: True
builtins.abs = lambda x: 0
"""
    )
    result = grade(worker, code)
    assert result["grading"]["verdict"] == "failed"
    assert statuses(result)["softmax of huge logits"] == "fail"


def test_printing_a_verdict_passes_nothing(worker: WorkerHandle) -> None:
    fake = (
        '{"test": {"name": "softmax of huge logits", "category": "edge cases", '
        '"hidden": false, "status": "pass", "message": "", "ms": 1}}'
    )
    report = '{"report": {"verdict": "passed", "score": 100.0, "tests": []}}'
    code = WRONG + f"\nprint({fake!r})\nprint({report!r})\nprint('All tests passed')\n"
    result = grade(worker, code)
    assert result["grading"]["verdict"] == "failed"
    assert statuses(result)["softmax of huge logits"] == "fail"
    assert result["grading"]["score"] < 100


def test_exiting_while_loading_is_an_error(worker: WorkerHandle) -> None:
    result = grade(worker, REFERENCE + "\nimport sys\nsys.exit(0)\n")
    assert result["grading"]["verdict"] == "error"
    assert "sys.exit" in result["grading"]["detail"]
    assert set(statuses(result).values()) == {"error"}


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("import sys; sys.exit(0)", "sys.exit"),
        ("import os; os._exit(0)", "exited with status 0"),
        ("import ctypes; ctypes.string_at(0)", "SIGSEGV"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "SIGKILL"),
    ],
)
def test_ending_inside_one_function_fails_only_its_tests(
    worker: WorkerHandle, how: str, message: str
) -> None:
    code = REFERENCE + f"\ndef log_softmax(x, dim=-1):\n    {how}\n"
    result = grade(worker, code)
    seen = statuses(result)
    assert {seen[n] for n in SOFTMAX_TESTS} == {"pass"}, result["grading"]["tests"]
    assert {seen[n] for n in LOG_SOFTMAX_TESTS} == {"error"}
    messages = [t["message"] for t in result["grading"]["tests"] if t["status"] == "error"]
    assert all(message in m for m in messages), messages


def test_hanging_in_one_test_times_out_that_test_only(worker: WorkerHandle) -> None:
    code = REFERENCE + "\ndef log_softmax(x, dim=-1):\n    while True:\n        pass\n"
    started = time.monotonic()
    result = grade(worker, code)
    seen = statuses(result)
    assert {seen[n] for n in SOFTMAX_TESTS} == {"pass"}
    assert {seen[n] for n in LOG_SOFTMAX_TESTS} == {"timeout"}
    # Each hanging test costs one call's time, not the run's.
    assert time.monotonic() - started < 60
    assert result["verdict"] == "ok"


def test_answering_with_the_first_answer_fails(worker: WorkerHandle) -> None:
    code = (
        REFERENCE
        + """
_first = {}
_softmax = softmax
def softmax(x, dim=-1):
    if "y" not in _first:
        _first["y"] = _softmax(x, dim)
    return _first["y"]
"""
    )
    result = grade(worker, code)
    assert result["grading"]["verdict"] == "failed"
    assert statuses(result)["softmax along any dim"] == "fail"


def test_changing_the_given_tensors_does_not_change_the_expected_values(
    worker: WorkerHandle,
) -> None:
    wrong_and_meddling = (
        "import torch\n"
        "def softmax(x, dim=-1):\n"
        "    x.fill_(0.0)\n"
        "    return torch.full_like(x, 1.0 / x.shape[dim]) if x.numel() else x\n"
        "def log_softmax(x, dim=-1):\n"
        "    x.zero_()\n"
        "    return x\n"
    )
    result = grade(worker, wrong_and_meddling)
    assert statuses(result)["softmax of small rows"] == "fail"
    assert statuses(result)["log_softmax of small rows"] == "fail"
    right_and_meddling = REFERENCE + (
        "\n_softmax = softmax\n"
        "def softmax(x, dim=-1):\n"
        "    y = _softmax(x, dim)\n"
        "    x.mul_(-3.0)\n"
        "    return y\n"
    )
    assert grade(worker, right_and_meddling)["grading"]["verdict"] == "passed"


def test_huge_answers_and_huge_output_fail_without_harm(worker: WorkerHandle) -> None:
    huge_answer = REFERENCE + (
        "\nimport torch\ndef log_softmax(x, dim=-1):\n    return torch.zeros(20_000_000)\n"
    )
    result = grade(worker, huge_answer)
    assert {statuses(result)[n] for n in LOG_SOFTMAX_TESTS} <= {"error", "fail"}
    assert {statuses(result)[n] for n in SOFTMAX_TESTS} == {"pass"}
    flood = REFERENCE + "\nprint('x' * 100_000)\n" * 20
    result = grade(worker, flood, output_bytes=64 * 1024)
    assert result["verdict"] == "output_limit"
    assert result["truncated"] and result["grading"]["verdict"] != "passed"


def test_forged_bytes_on_its_sockets_fail_only_that_test(worker: WorkerHandle) -> None:
    code = REFERENCE + (
        "\nimport os, stat\n"
        "def log_softmax(x, dim=-1):\n"
        "    for fd in range(3, 64):\n"
        "        try:\n"
        "            if stat.S_ISSOCK(os.fstat(fd).st_mode):\n"
        "                os.write(fd, b'\\x00\\x00\\x00\\x10' + b'\\xff' * 64)\n"
        "        except OSError:\n"
        "            pass\n"
        "    import time; time.sleep(0.2)\n"
        "    raise SystemExit\n"
    )
    result = grade(worker, code)
    seen = statuses(result)
    assert {seen[n] for n in SOFTMAX_TESTS} == {"pass"}
    assert {seen[n] for n in LOG_SOFTMAX_TESTS} == {"error"}
    assert result["verdict"] == "ok"


def test_a_load_that_never_ends_times_out_the_run(worker: WorkerHandle) -> None:
    result = grade(worker, "while True:\n    pass\n", wall_seconds=4)
    assert result["verdict"] == "timeout"
    assert result["grading"]["verdict"] == "timeout"
    assert result["grading"]["score"] == 0.0


def test_running_out_of_memory_in_one_function_fails_its_tests(worker: WorkerHandle) -> None:
    code = REFERENCE + (
        "\nimport torch\ndef log_softmax(x, dim=-1):\n    return torch.ones(300, 1024, 1024)\n"
    )
    result = grade(worker, code, memory_mb=512)
    seen = statuses(result)
    assert {seen[n] for n in LOG_SOFTMAX_TESTS} <= {"error", "timeout"}
    assert result["verdict"] == "memory_limit", result["detail"]
    assert result["grading"]["verdict"] != "passed"
