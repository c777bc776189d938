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
    # Its answers are right, so the values were compared with the grader's own copy; but it
    # overwrote its caller's tensor, which the default check reports (side_effects.py).
    tests = grade(worker, right_and_meddling)["grading"]["tests"]
    failing = {t["name"]: t["message"] for t in tests if t["status"] != "pass"}
    assert failing, tests
    assert all("your function changed the tensor it was given: argument 1 of softmax" in m
               for m in failing.values()), failing  # fmt: skip
    assert "log_softmax of small rows" not in failing


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


@pytest.mark.parametrize(
    "answer",
    [
        # The property checks compute with the answer (`p < 0`, `p.sum(dim)`) before they
        # compare: a string makes them raise TypeError, not a mismatch.
        "def softmax(x, dim=-1):\n    return 'not a tensor'\n",
        # A tuple where a tensor belongs: `p < 0` raises TypeError again.
        "def softmax(x, dim=-1):\n    return (x.exp(),)\n",
    ],
)
def test_an_answer_that_breaks_a_check_fails_only_that_test(
    worker: WorkerHandle, answer: str
) -> None:
    result = grade(worker, REFERENCE + "\n" + answer)
    assert result["verdict"] == "ok", (result["detail"], result["grading"])
    seen = statuses(result)
    assert {seen[n] for n in LOG_SOFTMAX_TESTS} == {"pass"}, result["grading"]["tests"]
    assert result["grading"]["verdict"] == "failed"
    messages = [t["message"] for t in result["grading"]["tests"] if t["status"] == "fail"]
    assert any("could not use your answer" in m for m in messages), messages


def test_tensors_sharing_their_bytes_cannot_exhaust_the_graders_memory(
    worker: WorkerHandle,
) -> None:
    # A frame whose tensors all point at the same 32 MiB of its body: 6 GB once decoded,
    # were each copied out of it.
    code = REFERENCE + (
        "\nimport json\n"
        "import sandbox.grading.wire as _wire\n"
        "_encode = _wire.encode\n"
        "def encode(header, value):\n"
        "    if header.get('ok') is True and value == 'amplify':\n"
        "        n = 32 << 20\n"
        "        spec = {'dtype': 'uint8', 'shape': [n], 'offset': 0, 'nbytes': n,\n"
        "                'device': 'cpu', 'requires_grad': False}\n"
        "        items = [{'tensor': i} for i in range(200)]\n"
        "        head = {'ok': True, 'value': {'list': items}, 'tensors': [spec] * 200}\n"
        "        return json.dumps(head).encode(), bytes(n)\n"
        "    return _encode(header, value)\n"
        "_wire.encode = encode\n"
        "def log_softmax(x, dim=-1):\n"
        "    return 'amplify'\n"
    )
    result = grade(worker, code)
    assert result["verdict"] == "ok", (result["detail"], result["grading"])
    seen = statuses(result)
    assert {seen[n] for n in SOFTMAX_TESTS} == {"pass"}
    assert {seen[n] for n in LOG_SOFTMAX_TESTS} == {"error"}
    messages = [t["message"] for t in result["grading"]["tests"] if t["status"] == "error"]
    assert all("cannot be graded" in m for m in messages), messages


def test_skipping_the_timed_calls_does_not_pass_a_graded_performance_test(
    worker: WorkerHandle,
) -> None:
    # Ten times slower than the reference, and its timed rounds skip the calls (answering
    # the count of calls they should have made): a round's answer must be its outputs, which
    # are compared with the reference's.
    code = REFERENCE + (
        "\nimport time\n"
        "_softmax = softmax\n"
        "def softmax(x, dim=-1):\n"
        "    time.sleep(0.005)\n"
        "    return _softmax(x, dim)\n"
        "import sandbox.grading.executor as _executor\n"
        "_executor.Executor._repeat = lambda self, p: len(p['inputs'])\n"
    )
    request = grading_request(EXERCISE, Mode.SUBMIT, seed=11).to_json()
    request["config"] = {
        **request["config"],
        "call_seconds": CALL_SECONDS,
        "performance": {"graded": True, "max_ratio": 2.0, "ignore_load": True},
    }
    result = worker.grade(code, request)
    assert result["verdict"] == "ok", (result["detail"], result["grading"])
    seen = statuses(result)
    assert {seen[n] for n in SOFTMAX_TESTS - {"time against the reference"}} == {"pass"}
    assert seen["time against the reference"] in ("fail", "error"), result["grading"]["tests"]


def test_making_its_own_time_noisy_does_not_excuse_a_slow_solution(worker: WorkerHandle) -> None:
    # Only the timed calls (the performance test's (64, 256) inputs) sleep. A steady
    # reference, 50 ms a call (its spread small even on a busy machine), and a learner at
    # least 2.4 times slower that sleeps much longer in every other round, so that its own
    # spread is far over the lab's limit.
    steady = "\nimport time as _t\n_soft = softmax\ndef softmax(x, dim=-1):\n"
    steady += "    if tuple(x.shape) == (64, 256):\n        _t.sleep(0.05)\n"
    steady += "    return _soft(x, dim)\n"
    noisy = REFERENCE + (
        "\nimport time, itertools\n"
        "_softmax = softmax\n"
        "_calls = itertools.count()\n"
        "def softmax(x, dim=-1):\n"
        "    if tuple(x.shape) == (64, 256):\n"
        "        time.sleep(0.12 if (next(_calls) // 8) % 2 else 0.4)\n"
        "    return _softmax(x, dim)\n"
    )
    request = grading_request(EXERCISE, Mode.SUBMIT, seed=11).to_json()
    request["reference"] += steady
    request["config"] = {
        **request["config"],
        "call_seconds": 6.0,
        "performance": {"graded": True, "max_ratio": 1.5, "ignore_load": True},
    }
    result = worker.grade(noisy, request, limits={"wall_seconds": 60})
    perf = next(t for t in result["grading"]["tests"] if t["category"] == "performance")
    assert perf["status"] == "fail", perf["message"]


@pytest.mark.parametrize(
    ("setup", "use"),
    [
        ("", "getattr(torch, 'soft' + 'max')(x, dim)"),
        ("", "vars(torch)['soft' + 'max'](x, dim)"),
        ("", "torch._softmax(x, dim, False)"),
        ("from torch.nn.functional import *\n_f = globals()['soft' + 'max']\n", "_f(x, dim)"),
    ],
)
def test_the_forbidden_function_by_another_road_breaks_the_api_rule(
    worker: WorkerHandle, setup: str, use: str
) -> None:
    code = REFERENCE + f"\nimport torch\n{setup}def softmax(x, dim=-1):\n    return {use}\n"
    result = grade(worker, code)
    assert statuses(result)["computes softmax itself"] == "fail", result["grading"]["tests"]
