"""backprop_lab (sandbox/lab/backprop_lab): the eager-versus-compiled harness that sample code
imports. The verdict, spread and tolerance rules on synthetic numbers; compare() itself with a
stand-in "compiled" function (no compiling), and twice for real with torch.compile."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

LAB = Path(__file__).resolve().parents[2] / "sandbox" / "lab"
if str(LAB) not in sys.path:
    sys.path.insert(0, str(LAB))

from backprop_lab import (  # noqa: E402
    CACHE_STATES,
    MAX_SPREAD,
    RESULT_PREFIX,
    VERDICTS,
    LabResult,
    Receipt,
    cache_state,
    check_outputs,
    compare,
    iqr,
    judge,
    max_abs_diff,
    median,
    percentile,
    spread,
    summarize,
    tolerance_for,
)

compare_module = sys.modules["backprop_lab.compare"]  # the name `compare` is the function

RESULT_KEYS = {
    "label",
    "mode",
    "eager",
    "compiled",
    "compile_seconds",
    "speedup",
    "verdict",
    "verdict_text",
    "correct",
    "max_abs_diff",
    "tolerance",
    "mismatch",
    "receipt",
}
SIDE_KEYS = {"median_ms", "iqr_ms", "spread", "rounds_ms"}


def result_json(printed: str) -> dict[str, Any]:
    lines = [line for line in printed.splitlines() if line.startswith(RESULT_PREFIX + " ")]
    assert len(lines) == 1, printed
    parsed: dict[str, Any] = json.loads(lines[0].removeprefix(RESULT_PREFIX + " "))
    return parsed


# The verdict, from synthetic round times (ms per call).


def test_clearly_faster_with_separate_ranges_is_faster() -> None:
    verdict, text = judge([10.0, 10.2, 10.1, 10.3, 9.9], [8.0, 8.1, 8.2, 7.9, 8.0])
    assert verdict == "faster"
    assert text == (
        "Compiled ran 1.26x faster (eager 10.1 ms, spread 2%; compiled 8.00 ms, spread 1%; "
        "5 interleaved rounds)."
    )


def test_exactly_the_threshold_counts_as_faster() -> None:
    assert judge([11.0, 11.0, 11.0], [10.0, 10.0, 10.0])[0] == "faster"


def test_a_big_ratio_with_overlapping_ranges_is_not_faster() -> None:
    # Medians 15 vs 10 (1.5x), but one eager round was faster than the slowest compiled one.
    verdict, text = judge([15.0, 15.0, 15.1, 14.9, 6.0], [10.0, 10.1, 9.9, 10.0, 10.5])
    assert verdict == "no significant difference"
    assert "1.50x faster" in text and "overlap" in text


def test_a_small_tight_difference_is_no_significant_difference() -> None:
    verdict, text = judge([10.5, 10.5, 10.6, 10.4, 10.5], [10.0, 10.0, 10.1, 9.9, 10.0])
    assert verdict == "no significant difference"
    assert "1.05x faster" in text and "1.10x" in text


def test_a_noisy_side_makes_it_inconclusive_whatever_the_ratio() -> None:
    verdict, text = judge([10.0, 20.0, 15.0, 30.0, 12.0], [5.0, 5.0, 5.1, 4.9, 5.0])
    assert spread([10.0, 20.0, 15.0, 30.0, 12.0]) > MAX_SPREAD
    assert verdict == "inconclusive"
    assert "too noisy" in text and "eager varied by 53%" in text


def test_clearly_slower_is_slower() -> None:
    verdict, text = judge([5.0, 5.1, 4.9, 5.0, 5.0], [8.0, 8.1, 7.9, 8.0, 8.2])
    assert verdict == "slower"
    assert text.startswith("Compiled ran 1.60x slower")


def test_a_slower_median_with_overlapping_ranges_is_not_slower() -> None:
    assert judge([5.0, 5.0, 5.0, 9.0], [8.0, 8.0, 8.1, 8.0])[0] == "no significant difference"


def test_too_few_rounds_is_inconclusive() -> None:
    verdict, text = judge([10.0, 10.0], [5.0, 5.0])
    assert verdict == "inconclusive" and "2 rounds" in text


@pytest.mark.parametrize(
    ("eager", "compiled"),
    [
        ([10.0] * 3, [5.0] * 3),
        ([5.0] * 3, [10.0] * 3),
        ([10.0] * 3, [10.0] * 3),
        ([1.0, 9.0], [1.0]),
    ],
)
def test_every_verdict_is_from_the_closed_set_and_states_its_spread(
    eager: list[float], compiled: list[float]
) -> None:
    verdict, text = judge(eager, compiled)
    assert verdict in VERDICTS
    assert "spread" in text and re.search(r"\d\.\d\dx", text)


# Spread, tolerances and the output check.


def test_spread_is_the_interquartile_range_over_the_median() -> None:
    rounds = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert median(rounds) == 3.0
    assert (percentile(rounds, 25), percentile(rounds, 75)) == (2.0, 4.0)
    assert iqr(rounds) == 2.0
    assert spread(rounds) == pytest.approx(2.0 / 3.0)
    assert iqr([1.0, 2.0]) == pytest.approx(0.5)  # quartiles 1.25 and 1.75, interpolated
    assert spread([4.0]) == 0.0
    side = summarize(rounds)
    assert (side.median_ms, side.iqr_ms, side.rounds_ms) == (3.0, 2.0, rounds)
    assert (side.min_ms, side.max_ms) == (1.0, 5.0)
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        summarize([1.0, -2.0])


def test_the_tolerance_table() -> None:
    assert tolerance_for(torch.float64) == 1e-7
    assert tolerance_for(torch.float32) == 1e-4
    assert tolerance_for(torch.float16) == tolerance_for(torch.bfloat16) == 1e-2
    assert tolerance_for(torch.int64) == tolerance_for(torch.bool) == 0.0


def test_the_output_check_passes_equal_outputs_and_catches_a_small_difference() -> None:
    x = torch.randn(64, 64)
    assert check_outputs(x, x.clone()).correct
    assert check_outputs(x, x + 1e-6).correct
    off = check_outputs(x, x + 1e-3)
    assert not off.correct and off.max_abs_diff == pytest.approx(1e-3, rel=1e-3)
    assert off.mismatch is not None and off.mismatch.startswith("output:")
    assert check_outputs(x, x + 1e-3, tolerance=1e-2).correct
    half = x.to(torch.bfloat16)
    assert check_outputs(half, half + 0.004).correct  # within bfloat16's 1e-2
    nan = torch.tensor([1.0, math.nan])
    assert check_outputs(nan, nan.clone()).correct
    assert not check_outputs(nan, torch.tensor([1.0, 2.0])).correct


def test_the_output_check_walks_nested_outputs() -> None:
    a, b = torch.ones(3), torch.zeros(2, 2)
    eager = {"logits": a, "hidden": (b, [b, 2.0]), "n": 3, "none": None}
    same = {"logits": a.clone(), "hidden": (b.clone(), [b.clone(), 2.0]), "n": 3, "none": None}
    assert check_outputs(eager, same).correct and check_outputs(eager, same).compared == 6
    assert max_abs_diff(eager, same) == 0.0
    wrong = {"logits": a, "hidden": (b, [b + 0.5, 2.0]), "n": 3, "none": None}
    check = check_outputs(eager, wrong)
    assert not check.correct and check.max_abs_diff == 0.5
    assert check.mismatch is not None and check.mismatch.startswith("output['hidden'][1][0]")
    reshaped = check_outputs((a, b), (a, b.reshape(4)))
    assert not reshaped.correct and math.isinf(reshaped.max_abs_diff)
    assert "shape" in (reshaped.mismatch or "")
    assert not check_outputs([a, b], [a]).correct
    assert not check_outputs({"x": a}, {"y": a}).correct
    assert not check_outputs(3, 4).correct


def test_the_cache_state_from_the_counters() -> None:
    miss = {"inductor": {"fxgraph_cache_miss": 1}, "aot_autograd": {"autograd_cache_miss": 1}}
    hit = {"inductor": {"fxgraph_cache_hit": 2}, "aot_autograd": {"autograd_cache_hit": 2}}
    both = {"inductor": {"fxgraph_cache_hit": 1, "fxgraph_cache_miss": 1}}
    assert cache_state(miss, True)[0] == "cold"
    assert cache_state(hit, True)[0] == "warm"
    assert cache_state(both, True)[0] == "partly warm"
    assert cache_state({}, True)[0] == "in-process"
    assert cache_state({}, False)[0] == "unknown"
    assert {"cold", "warm", "unknown"} <= set(CACHE_STATES)


# compare() with a stand-in compiled function: every path but torch.compile, in a second.


def chain(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x * 1.5 + 0.3).tanh() * x.sigmoid() + x.cos()


def test_compare_reports_a_full_receipt_and_passes_an_equal_function(
    capsys: pytest.CaptureFixture[str],
) -> None:
    x = torch.randn(32, 16)
    result = compare(chain, x, compiled=lambda t: chain(t.clone()), rounds=3, min_run_time=0.01)
    printed = capsys.readouterr().out
    assert isinstance(result, LabResult) and result.correct and result.mismatch is None
    assert result.receipt.compiled_by == "caller" and result.receipt.compile_cache == "unknown"
    data = result_json(printed)
    assert data == json.loads(result.to_json())
    receipt = data["receipt"]
    assert set(receipt) == {f.name for f in dataclasses.fields(Receipt)}
    for name in ("device", "torch", "python", "timing_method", "date", "compile_cache"):
        assert isinstance(receipt[name], str) and receipt[name]
    assert receipt["threads"] == torch.get_num_threads()
    assert receipt["inputs"] == [
        {"shape": [32, 16], "dtype": "float32", "device": "cpu", "requires_grad": False}
    ]
    assert receipt["cuda"] is None and receipt["device_type"] == "cpu"
    assert receipt["rounds"] == 3 and receipt["mode"] == "default"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", receipt["date"])
    assert data["verdict_text"].endswith("; outputs match within 1e-4 (absolute + relative).")
    assert "threads        " in printed and "(both sides)" in printed


def test_device_cpu_keeps_a_run_that_has_a_gpu_on_the_cpu(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # On the CUDA backend compare() moves CPU inputs to the GPU unless told otherwise
    # (tests/sandbox/test_cuda.py runs that on a GPU).
    monkeypatch.setattr(compare_module, "_run_has_gpu", lambda: True)
    x = torch.randn(32, 16)
    result = compare(chain, x, compiled=chain, device="cpu", rounds=1, min_run_time=0.01)
    assert result.receipt.device_type == "cpu" and x.device.type == "cpu"


def test_a_tensor_left_on_the_cpu_when_compare_moved_to_the_gpu_is_named_as_the_cause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The GPU stands in as the meta device: mixing it with a CPU tensor fails the same way.
    monkeypatch.setattr(compare_module, "_run_has_gpu", lambda: True)
    monkeypatch.setattr(compare_module, "_gpu", lambda: torch.device("meta"))
    weight = torch.randn(16)
    with pytest.raises(RuntimeError, match=r"fn uses a tensor that stayed on the CPU"):
        compare(lambda t: t * weight, torch.randn(32, 16), rounds=1, min_run_time=0.01)


def test_compare_catches_a_compiled_function_with_slightly_different_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    x = torch.randn(32, 16)
    result = compare(chain, x, compiled=lambda t: chain(t) + 1e-3, rounds=3, min_run_time=0.01)
    data = result_json(capsys.readouterr().out)
    assert not result.correct and data["correct"] is False
    assert data["max_abs_diff"] == pytest.approx(1e-3, rel=1e-2)
    assert "DIFFER" in data["verdict_text"] and data["mismatch"].startswith("output:")


def test_compare_checks_gradients_and_nested_outputs_with_backward(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def pair(x: torch.Tensor) -> dict[str, Any]:
        return {"y": x.sin(), "parts": (x.cos(), x.sum())}

    def same_forward_wrong_backward(x: torch.Tensor) -> dict[str, Any]:
        out = pair(x)
        bump = x * 1e-2
        out["y"] = out["y"] + bump - bump.detach()  # the same values, a gradient off by 1e-2
        return out

    x = torch.randn(16, 16)
    good = compare(pair, x, compiled=pair, rounds=3, min_run_time=0.01, backward=True)
    assert good.correct and good.receipt.backward
    bad = compare(
        pair, x, compiled=same_forward_wrong_backward, rounds=3, min_run_time=0.01, backward=True
    )
    assert not bad.correct and bad.mismatch is not None
    assert bad.mismatch.startswith("grad['input 0']")
    capsys.readouterr()


def test_json_has_no_infinity_when_shapes_differ(capsys: pytest.CaptureFixture[str]) -> None:
    x = torch.randn(4, 4)
    result = compare(chain, x, compiled=lambda t: chain(t).T[:2], rounds=3, min_run_time=0.01)
    assert math.isinf(result.max_abs_diff)
    assert result_json(capsys.readouterr().out)["max_abs_diff"] is None


def test_an_infinite_tolerance_times_functions_without_inputs_and_compares_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    state = {"calls": 0}

    def step() -> torch.Tensor:  # like a training step: each call changes what the next returns
        state["calls"] += 1
        return torch.full((3,), float(state["calls"]))

    result = compare(step, compiled=step, rounds=3, min_run_time=0.01, tolerance=float("inf"))
    data = result_json(capsys.readouterr().out)
    assert result.correct and result.max_abs_diff == 1.0
    assert data["tolerance"] is None and data["receipt"]["inputs"] == []
    assert data["receipt"]["device_type"] == "cpu"
    assert data["verdict_text"].endswith("; outputs not compared (tolerance=inf).")
    with pytest.raises(ValueError):
        compare(step, compiled=step, tolerance=-1.0)


# Real torch.compile: one forward, one forward + backward of an nn.Module.


def test_compare_end_to_end_with_torch_compile(capsys: pytest.CaptureFixture[str]) -> None:
    x = torch.randn(256, 256)
    result = compare(chain, x, label="elementwise chain", rounds=2, min_run_time=0.05)
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    expected = [
        "compiling (first call)…",
        "warming up",
        "timing eager, round 1/2",
        "timing compiled, round 1/2",
        "timing eager, round 2/2",
        "timing compiled, round 2/2",
    ]
    positions = [lines.index(line) for line in expected]
    assert positions == sorted(positions)
    compiled_in = [
        n for n, line in enumerate(lines) if re.fullmatch(r"compiled in \d+\.\d\d s", line)
    ]
    assert len(compiled_in) == 1 and positions[0] < compiled_in[0] < positions[1]
    data = result_json(printed)
    assert set(data) >= RESULT_KEYS
    for side in ("eager", "compiled"):
        assert set(data[side]) >= SIDE_KEYS and len(data[side]["rounds_ms"]) == 2
        assert data[side]["median_ms"] > 0
    assert data["label"] == "elementwise chain" and data["mode"] == "default"
    assert data["correct"] is True and result.correct
    assert data["max_abs_diff"] <= data["tolerance"] == 1e-4
    assert data["compile_seconds"] > 0 and data["speedup"] > 0
    assert data["verdict"] == "inconclusive"  # two rounds per side cannot show their spread
    assert data["receipt"]["compile_cache"] in CACHE_STATES
    assert data["receipt"]["compiled_by"] == "harness"
    assert "Backprop lab: elementwise chain" in printed and "speedup" in printed
    # The app keeps exactly this line, and its receipt shows these keys.
    from app.labs.labs import parse_results

    assert parse_results(printed) == [data]
    assert {"device", "torch", "cuda", "threads", "timing_method", "date"} <= set(data["receipt"])


def test_compare_end_to_end_backward_through_a_compiled_module(
    capsys: pytest.CaptureFixture[str],
) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    result = compare(model, torch.randn(8, 16), rounds=3, min_run_time=0.02, backward=True)
    data = result_json(capsys.readouterr().out)
    # Gradients of all four parameters matched under their own names (not `_orig_mod.`).
    assert result.correct, result.mismatch
    assert data["receipt"]["backward"] is True and data["verdict"] in VERDICTS
    assert model[0].weight.grad is not None
