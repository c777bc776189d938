"""The grader's parts on their own: the wire, the comparison's messages, API rules, draws."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from sandbox.grading import api_rules
from sandbox.grading.compare import Comparison, Mismatch, Tolerance
from sandbox.grading.draws import Draw, case_seed
from sandbox.grading.wire import Ref, WireError, decode, encode

TOLERANCES = {"float32": {"cpu": Tolerance(1e-5, 1e-4)}}


def test_values_cross_the_wire_unchanged() -> None:
    value = {
        "x": torch.arange(6, dtype=torch.float32).reshape(2, 3),
        "pair": (torch.tensor([True, False]), torch.empty(0, 4, dtype=torch.bfloat16)),
        "items": [1, 2.5, float("nan"), float("-inf"), None, "text", Ref(3)],
        7: torch.tensor(3, dtype=torch.int64),
    }
    frame, back = decode(*encode({"op": "call"}, value))
    assert frame.header["op"] == "call"
    assert torch.equal(back["x"], value["x"])
    assert torch.equal(back["pair"][0], value["pair"][0])
    assert back["pair"][1].shape == (0, 4) and back["pair"][1].dtype is torch.bfloat16
    assert back["items"][:2] == [1, 2.5] and back["items"][4:] == [None, "text", Ref(3)]
    assert back["items"][3] == float("-inf") and back["items"][2] != back["items"][2]
    assert back[7].item() == 3


def test_a_tensor_of_size_one_dims_with_odd_strides_crosses_the_wire() -> None:
    """zeros_like of a 1x1 matrix's diagonal has stride 2 and still counts as contiguous: a
    correct answer of that kind once met an error instead of a grade."""
    odd = torch.zeros_like(torch.eye(1, dtype=torch.float64).diagonal()).fill_(5.0)
    strided = torch.ones(1, 1, 3)[:, :, 1:2]
    assert odd.stride() == (2,) and odd.is_contiguous()
    _, back = decode(*encode({"op": "call"}, [odd, strided]))
    assert torch.equal(back[0], odd) and back[0].dtype is torch.float64
    assert torch.equal(back[1], strided) and back[1].shape == (1, 1, 1)


def forged(header: dict[str, object], body: bytes = b"") -> tuple[bytes, bytes]:
    return json.dumps(header).encode(), body


@pytest.mark.parametrize(
    ("header", "body"),
    [
        (
            {
                "value": {"tensor": 0},
                "tensors": [{"dtype": "object", "shape": [1], "offset": 0, "nbytes": 8}],
            },
            b"\0" * 8,
        ),
        (
            {
                "value": {"tensor": 0},
                "tensors": [{"dtype": "float32", "shape": [4], "offset": 0, "nbytes": 16}],
            },
            b"\0" * 8,
        ),
        (
            {
                "value": {"tensor": 0},
                "tensors": [{"dtype": "float32", "shape": [-1], "offset": 0, "nbytes": 4}],
            },
            b"\0" * 4,
        ),
        ({"value": {"tensor": 5}, "tensors": []}, b""),
        ({"value": {"pickle": "gASV"}, "tensors": []}, b""),
        ({"value": {"list": [{"list": []}], "x": 1}, "tensors": []}, b""),
        ({"value": {"float": "1e999"}, "tensors": []}, b""),
        ({"value": {"dict": [[[1], 2]]}, "tensors": []}, b""),
    ],
)
def test_forged_frames_are_refused(header: dict[str, object], body: bytes) -> None:
    with pytest.raises(WireError):
        decode(*forged(header, body))


def test_deep_nesting_is_refused() -> None:
    value: object = 1
    for _ in range(40):
        value = {"list": [value]}
    with pytest.raises(WireError):
        decode(*forged({"value": value, "tensors": []}))
    with pytest.raises(WireError):
        decode(b"[" * 100000, b"")


def test_a_bool_tensor_from_odd_bytes_stays_a_bool() -> None:
    header = {
        "value": {"tensor": 0},
        "tensors": [{"dtype": "bool", "shape": [2], "offset": 0, "nbytes": 2}],
    }
    _, back = decode(*forged(header, bytes([7, 0])))
    assert back.tolist() == [True, False]


def test_a_frame_prefix_over_the_caps_is_refused() -> None:
    import socket

    from sandbox.grading.wire import receive

    a, b = socket.socketpair()
    with a, b:
        a.sendall(struct.pack(">IQ", 1 << 30, 0))
        with pytest.raises(WireError):
            receive(b)


def test_a_hidden_mismatch_never_shows_the_expected_value() -> None:
    expected = torch.tensor([[0.123456, 0.5], [0.25, 0.125]])
    actual = expected.clone()
    actual[1, 0] = 0.75
    for visible in (False, True):
        with pytest.raises(Mismatch) as caught:
            Comparison(TOLERANCES, "cpu", visible).check(expected, actual)
        message = str(caught.value)
        assert "first mismatch at (1, 0)" in message and "max abs error 0.5" in message
        assert "atol 1e-05" in message
        assert ("expected 0.25" in message) is visible


def test_shape_and_dtype_mismatches_are_named() -> None:
    compare = Comparison(TOLERANCES, "cpu", visible=False)
    with pytest.raises(Mismatch, match=r"expected shape \(2, 3\), got \(3, 2\)"):
        compare.check(torch.zeros(2, 3), torch.zeros(3, 2))
    with pytest.raises(Mismatch, match="expected dtype float32, got float64"):
        compare.check(torch.zeros(2), torch.zeros(2, dtype=torch.float64))
    with pytest.raises(Mismatch, match="NaN where none was expected"):
        compare.check(torch.zeros(2), torch.tensor([0.0, float("nan")]))
    compare.check(
        torch.tensor([float("nan"), float("inf")]), torch.tensor([float("nan"), float("inf")])
    )


@pytest.mark.parametrize(
    "code",
    [
        "import torch\ny = torch.softmax(x, -1)",
        "import torch.nn.functional as F\ny = F.softmax(x, -1)",
        "import torch.nn.functional as fn\ny = fn.softmax(x, -1)",
        "from torch.nn.functional import softmax as s\ny = s(x)",
        "from torch.nn import functional\ny = functional.softmax(x, 0)",
        "y = x.softmax(-1)",
        "import torch\ny = getattr(torch, 'softmax')(x, -1)",
        "import torch\ny = eval('torch.soft' + 'max')(x, -1)",
        "import importlib\nt = importlib.import_module('torch')",
    ],
)
def test_api_rules_find_forbidden_names_however_they_are_reached(code: str) -> None:
    assert api_rules.violations(code, ["torch.softmax", "F.softmax", ".softmax"])


def test_api_rules_leave_honest_code_alone() -> None:
    code = (
        '"""Softmax along dim: no softmax call."""\nimport torch\n\ndef softmax(x, dim):\n'
        "    e = (x - x.amax(dim, keepdim=True)).exp()\n    return e / e.sum(dim, keepdim=True)\n"
    )
    assert api_rules.violations(code, ["torch.softmax", "F.softmax", ".softmax"]) == []


FORBID = ["torch.softmax", "F.softmax", ".softmax", ".backward", "torch.optim"]


@pytest.mark.parametrize(
    "code",
    [
        '__all__ = ["softmax", "log_softmax"]\n',  # the exercise's own entry point, exported
        'print("softmax of the rows:", 1)\n',  # a label
        '"""softmax without softmax: .backward is not called."""\n',  # a docstring
        "x = 1  # not x.softmax(-1), which would be forbidden\n",  # a comment
        'if __name__ == "__main__":\n    y = x.softmax(-1)\n    y.sum().backward()\n',  # self-test
        'if "__main__" == __name__:\n    import torch.optim\n',
        "def softmax(x):\n    return x\n\ny = softmax(1)\n",  # the learner's own function
    ],
)
def test_api_rules_judge_what_the_code_calls_not_the_words_it_holds(code: str) -> None:
    assert api_rules.violations(code, FORBID) == []


def test_api_rules_still_judge_what_runs_beside_a_self_test() -> None:
    code = 'if __name__ == "__main__":\n    pass\nelse:\n    y = x.softmax(-1)\n'
    assert api_rules.violations(code, FORBID)
    nested = "def f(x):\n    if __name__ == 'x':\n        return x.softmax(0)\n"
    assert api_rules.violations(nested, FORBID)


def test_a_refusal_names_the_line_the_call_and_the_reason() -> None:
    code = "import torch\n\nopt = torch.optim.SGD([w], lr=0.1)\n"
    (refusal,) = api_rules.violations(code, FORBID, "the update is the exercise.")
    assert refusal.startswith("line 3: `torch.optim.SGD([w], lr=0.1)` uses torch.optim.SGD")
    assert refusal.endswith("forbids: the update is the exercise.")
    (attr,) = api_rules.violations("loss.backward()\n", FORBID, "no autograd.")
    assert attr == (
        "line 1: `loss.backward()` uses .backward, which this exercise forbids: no autograd."
    )


def test_a_constant_name_looked_up_counts_as_the_attribute() -> None:
    for code in (
        "import torch.nn.functional as G\ny = getattr(G, 'softmax')(x)\n",
        "y = getattr(x, 'backward')()\n",
        "from operator import methodcaller\nf = methodcaller('softmax', -1)\n",
    ):
        assert api_rules.violations(code, FORBID), code
    assert api_rules.violations("y = getattr(x, 'shape')\n", FORBID) == []


def test_draws_are_seeded_per_case_and_reach_the_edges() -> None:
    a = Draw(case_seed(1, "t", 0), case=0)
    b = Draw(case_seed(1, "t", 0), case=0)
    assert torch.equal(a.tensor((3, 4)), b.tensor((3, 4)))
    assert not torch.equal(
        Draw(case_seed(2, "t", 0)).tensor((3, 4)), Draw(case_seed(1, "t", 0)).tensor((3, 4))
    )
    assert Draw(5, case=0).size(1, 64) == 1
    assert Draw(5, case=0).size(0, 64) == 0
    odd = Draw(5, case=1).size(1, 64)
    assert odd % 2 == 1 and odd & (odd - 1) != 0


def test_a_graded_performance_test_fails_a_solution_far_slower_than_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sandbox.grading import case, perf, performance

    # On a busy machine the spread of microsecond calls passes the noise rule, which would
    # then (rightly) decline to grade: here only the ratio decides.
    monkeypatch.setattr(perf, "MAX_SPREAD", float("inf"))
    from sandbox.grading.runner import Grading, grade
    from sandbox.grading.solution import LocalSolution
    from sandbox.protocol import TestStatus

    fast = "import torch\ndef double(x):\n    return x * 2\n"
    slow = "import time\ndef double(x):\n    time.sleep(0.01)\n    return x * 2\n"
    test = performance("time", "double", lambda d: case(d.tensor((8, 8))), rounds=3, calls=4)
    results = {}
    for name, code in (("fast", fast), ("slow", slow)):
        report = grade(
            Grading(
                tests=[test],
                learner=LocalSolution.from_source(code),
                reference=LocalSolution.from_source(fast, "reference.py"),
                learner_source=code,
                tolerances={},
                forbid=[],
                seed=0,
                performance={"graded": True, "max_ratio": 3.0, "ignore_load": True},
            )
        )
        results[name] = report.tests[0]
        assert report.performance is not None and report.performance["max_ratio"] == 3.0
    assert results["slow"].status is TestStatus.FAIL, results["slow"].message
    assert "the limit is 3x" in results["slow"].message
    assert f"the best of {perf.ATTEMPTS} measurements" in results["slow"].message
    assert "interleaved rounds" in results["fast"].message
    assert "measurements" not in results["fast"].message


def test_a_noisy_measurement_never_excuses_code_a_clean_one_found_too_slow() -> None:
    """The clean measurements are judged (the best of them); only when none was clean is
    the best of the noisy ones shown, and then the test cannot grade."""
    from sandbox.grading.perf import MAX_SPREAD, _which, chosen
    from sandbox.lab.backprop_lab.stats import SideStats

    def measurement(ratio: float, spread: float) -> tuple[float, SideStats, SideStats]:
        reference = SideStats(median_ms=1.0, iqr_ms=spread, spread=spread)
        return ratio, reference, SideStats(median_ms=ratio, iqr_ms=0.0, spread=0.0)

    clean, noisy = MAX_SPREAD / 2, MAX_SPREAD * 2
    slow_then_noisy = [measurement(22.0, clean), measurement(19.7, noisy)]
    assert chosen(slow_then_noisy)[0] == 22.0  # judged, and over any limit: it fails
    assert chosen([measurement(4.0, clean), measurement(1.1, clean)])[0] == 1.1
    assert chosen([measurement(5.0, noisy), measurement(3.0, noisy)])[0] == 3.0
    # The message says which was judged.
    assert _which(slow_then_noisy) == "; the one clean measurement of 2"
    two_clean = [measurement(4.0, clean), measurement(1.1, clean), measurement(2.0, noisy)]
    assert _which(two_clean) == "; the best of the 2 clean ones of 3 measurements"
    assert _which([measurement(5.0, noisy), measurement(3.0, noisy)]).endswith("of 2 measurements")
    assert _which([measurement(1.0, clean)]) == ""


def test_code_slow_in_one_measurement_only_is_measured_again_and_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As when a busy machine stalls the learner's side for a while: the first measurement
    is over the limit, the second is not, and the best one is judged."""
    from sandbox.grading import case, perf, performance
    from sandbox.grading.runner import Grading, grade
    from sandbox.grading.solution import LocalSolution
    from sandbox.protocol import TestStatus

    monkeypatch.setattr(perf, "MAX_SPREAD", float("inf"))
    fast = "import torch\ndef double(x):\n    return x * 2\n"
    # Slow for the warm-up and the first measurement's 3 rounds of 4 calls, fast after.
    stalled = (
        "import time\ncalls = 0\ndef double(x):\n    global calls\n    calls += 1\n"
        "    if calls <= 16:\n        time.sleep(0.01)\n    return x * 2\n"
    )
    test = performance("time", "double", lambda d: case(d.tensor((8, 8))), rounds=3, calls=4)
    report = grade(
        Grading(
            tests=[test],
            learner=LocalSolution.from_source(stalled),
            reference=LocalSolution.from_source(fast, "reference.py"),
            learner_source=stalled,
            tolerances={},
            forbid=[],
            seed=0,
            performance={"graded": True, "max_ratio": 3.0, "ignore_load": True},
        )
    )
    result = report.tests[0]
    assert result.status is TestStatus.PASS, result.message
    assert "the best of 2 measurements" in result.message
    assert report.performance is not None and report.performance["attempts"] == 2


RELAY = """
import os, sys, torch
from sandbox.grading import learner

def record(fraction):
    with open(sys.argv[2], "a") as f:
        f.write(f"{os.getpid()} {fraction}\\n")

torch.cuda.set_per_process_memory_fraction = record
print(os.getpid(), flush=True)
learner.serve("x = 1\\n", int(sys.argv[1]), "cuda", 0.3, threads=1)
"""


def test_the_relay_leaves_cuda_to_the_server_it_forks(tmp_path: Path) -> None:
    """A process that touched CUDA cannot fork one that uses it: on a GPU the relay must not
    set the memory cap itself (every graded GPU run failed so on an H100). The relay runs in a
    process of its own with CUDA's call replaced by a recorder, so this holds without a GPU."""
    calls = tmp_path / "calls"
    calls.touch()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    relay = subprocess.Popen(
        [sys.executable, "-c", RELAY, str(theirs.fileno()), str(calls)],
        pass_fds=(theirs.fileno(),),
        stdout=subprocess.PIPE,
        text=True,
    )
    theirs.close()
    assert relay.stdout is not None
    relay_pid = int(relay.stdout.readline())
    deadline = time.monotonic() + 60
    while not calls.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    ours.close()  # the grader hangs up: the relay ends its server and returns
    assert relay.wait(timeout=30) == 0
    [(pid, fraction)] = [line.split() for line in calls.read_text().splitlines()]
    assert int(pid) != relay_pid and float(fraction) == 0.3
