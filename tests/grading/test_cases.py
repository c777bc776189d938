"""A failing visible test's case (sandbox/grading/cases.py): bounded summaries of its values,
the largest difference, a snippet that replays it with the project's Python, and hidden
tests that carry no case and no values of their inputs."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
import torch

from sandbox.grading import case_values, cases
from sandbox.grading.draws import Draw, case_seed
from sandbox.grading.exercise import Exercise
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol.grading import Mode, TestResult, TestStatus

SLUG = "stable-softmax"
BUGGY = "no_max_subtraction"  # exp(x) overflows: NaN on huge logits
HUGE = "softmax of huge logits"  # a visible test it fails


def test_a_small_tensor_is_shown_in_full() -> None:
    s = case_values.summary(torch.tensor([[1.5, -2.0], [0.25, 3.0]]))
    assert s["kind"] == "tensor" and s["shape"] == [2, 2] and s["dtype"] == "float32"
    assert s["full"] is True
    assert s["text"] == "[[1.5, -2], [0.25, 3]]"
    assert (s["min"], s["max"], s["nan"], s["inf"]) == (-2.0, 3.0, 0, 0)


def test_a_large_tensor_is_summarised_by_a_corner_and_its_range() -> None:
    t = torch.arange(10_000, dtype=torch.float64).reshape(2, 50, 100)
    s = case_values.summary(t)
    assert s["full"] is False and s["shape"] == [2, 50, 100]
    assert s["corner"] == "[0, :4, :6]"
    assert s["text"].startswith("[[0, 1, 2, 3, 4, 5], [100, 101")
    assert (s["min"], s["max"]) == (0.0, 9999.0)
    assert len(json.dumps(s)) < 400  # a summary, not the values


def test_nan_and_infinities_are_counted_and_the_summary_is_plain_json() -> None:
    s = case_values.summary(torch.tensor([math.nan, math.inf, -math.inf, 2.0]))
    assert (s["nan"], s["inf"], s["min"], s["max"]) == (1, 2, 2.0, 2.0)
    assert s["text"] == "[nan, inf, -inf, 2]"
    json.dumps(s, allow_nan=False)
    only_nan = case_values.summary(torch.full((3,), math.nan))
    assert "min" not in only_nan and only_nan["nan"] == 3


def test_integer_and_boolean_tensors() -> None:
    ints = case_values.summary(torch.tensor([3, -7, 12]))
    assert ints["dtype"] == "int64" and ints["text"] == "[3, -7, 12]"
    assert (ints["min"], ints["max"]) == (-7, 12) and "nan" not in ints
    flags = case_values.summary(torch.tensor([[True, False], [True, True]]))
    assert flags["dtype"] == "bool" and flags["true"] == 3
    assert flags["text"] == "[[True, False], [True, True]]"


def test_outputs_that_are_not_tensors() -> None:
    pair = case_values.summary((torch.zeros(2), 0.5, None))
    assert pair["kind"] == "tuple" and pair["length"] == 3
    assert [i["kind"] for i in pair["items"]] == ["tensor", "number", "value"]
    assert case_values.summary(1.0 / 3)["text"] == "0.333333"
    assert case_values.summary({"loss": 2})["items"][0] == {
        "key": "'loss'",
        "kind": "number",
        "text": "2",
    }
    assert case_values.summary("x" * 5000)["text"].__len__() < 500
    many = case_values.summary(list(range(100)))
    assert many["length"] == 100 and len(many["items"]) == case_values.MAX_ITEMS


def test_the_largest_difference_says_where_and_both_values() -> None:
    expected = (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([[0.0, 0.0], [0.0, 0.0]]))
    actual = (torch.tensor([1.0, 2.5, 3.0]), torch.tensor([[0.0, 0.0], [0.0, -4.0]]))
    d = case_values.difference(expected, actual)
    assert d is not None
    assert d["abs"] == 4.0 and d["where"] == "output[1][1, 1]"
    assert (d["expected"], d["got"]) == (0.0, -4.0)
    nan = case_values.difference(torch.ones(2), torch.tensor([1.0, math.nan]))
    assert nan is not None and nan["abs"] == "inf" and nan["got"] == "nan"
    assert case_values.difference(torch.ones(2), torch.ones(2))["abs"] == 0.0  # type: ignore[index]
    assert case_values.difference(torch.ones(2), torch.ones(3)) is None  # other shapes: no pair
    assert case_values.difference(1.0, 1.25) == {
        "abs": 0.25, "where": "output", "index": [], "path": "output",
        "expected": 1.0, "got": 1.25,
    }  # fmt: skip


def test_a_literal_rebuilds_a_tensor_exactly_whatever_its_dtype() -> None:
    for t in (
        torch.randn(3, 4, dtype=torch.float32),
        torch.randn(5, dtype=torch.bfloat16),
        torch.tensor([math.nan, -math.inf, 1e-30], dtype=torch.float64),
        torch.tensor([[1, 2]], dtype=torch.int32),
        torch.tensor([True, False]),
        torch.empty(0, 3),
    ):
        rebuilt = eval(cases.tensor_literal(t), {"torch": torch, "nan": math.nan, "inf": math.inf})
        assert rebuilt.dtype == t.dtype and rebuilt.shape == t.shape
        assert cases._same(rebuilt, t)


def test_a_large_drawn_input_is_drawn_again_from_the_seed() -> None:
    draw = Draw(case_seed(7, "a test", 1), 1, "float32")
    draw.tensor((3,))  # an earlier draw moves the generator on: it is replayed too
    draw.integers((2,), 0, 5)
    big = draw.tensor((40, 30), low=-5, high=5)
    index = cases._replayable(draw, big)
    assert index == 2
    namespace: dict[str, object] = {"torch": torch}
    exec("\n".join(cases._draw_lines(draw, {index: "x"})), namespace)
    assert cases._same(namespace["x"], big)  # type: ignore[arg-type]
    assert cases._replayable(draw, big + 1) is None  # not a draw: written out or marked


def _graded(exercise: Exercise, code: str, mode: Mode = Mode.RUN) -> list[TestResult]:
    return grade_in_process(exercise, code, mode=mode, seed=3).tests


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def buggy_results(loaded: dict[str, Exercise]) -> list[TestResult]:
    exercise = loaded[SLUG]
    return _graded(exercise, exercise.mutants[BUGGY], Mode.SUBMIT)


def test_a_failing_visible_test_carries_its_case(buggy_results: list[TestResult]) -> None:
    failed = next(t for t in buggy_results if t.name == HUGE)
    assert failed.status is TestStatus.FAIL and not failed.hidden
    case = failed.case
    assert case is not None
    assert [i["name"] for i in case["inputs"]] == ["x", "dim"]
    assert case["inputs"][0]["kind"] == "tensor" and case["inputs"][1]["text"] == "-1"
    assert case["output"]["nan"] > 0  # the overflow, seen
    assert case["expected"]["nan"] == 0
    assert case["difference"]["abs"] == "inf" and case["difference"]["got"] == "nan"
    assert case["seed"] == case_seed(3, HUGE, 0)
    assert len(json.dumps(case, allow_nan=False)) <= cases.MAX_CASE_BYTES
    # The result's JSON, as the grader's jail writes it and the worker reads it back.
    assert TestResult.from_json(json.loads(json.dumps(failed.to_json()))).case == case


def test_the_snippet_reproduces_the_failure_and_the_reference_passes_it(
    loaded: dict[str, Exercise], buggy_results: list[TestResult]
) -> None:
    exercise = loaded[SLUG]
    snippet = next(t for t in buggy_results if t.name == HUGE).case["snippet"]  # type: ignore[index]
    assert snippet.startswith("# The failing case of the test 'softmax of huge logits'")
    assert "Paste your solution above" in snippet
    assert "softmax(x_in, dim=-1)" in snippet
    buggy = _run(exercise.mutants[BUGGY] + "\n" + snippet)
    assert "your output: tensor([[nan]" in buggy
    assert buggy.rstrip().endswith("DOES NOT MATCH the expected output")
    fixed = _run(exercise.reference + "\n" + snippet)
    assert fixed.rstrip().endswith("matches")


def test_hidden_tests_carry_no_case_and_no_values_of_their_inputs(
    loaded: dict[str, Exercise], buggy_results: list[TestResult]
) -> None:
    exercise = loaded[SLUG]
    declared = {t.name: t for t in exercise.tests()}
    hidden = [t for t in buggy_results if t.hidden and t.status is not TestStatus.PASS]
    assert len(hidden) >= 2  # the mutant is caught by hidden tests
    for result in hidden:
        assert result.case is None and "case" not in result.to_json()
        test = declared[result.name]
        assert test.inputs is not None
        shown: set[str] = set()
        for index in range(test.cases):
            for k, dtype in enumerate(test.dtypes):
                c = test.inputs(Draw(case_seed(3, test.name, index * 8 + k), index, dtype))
                for value in c.args:
                    if isinstance(value, torch.Tensor) and value.is_floating_point():
                        for v in value.flatten().tolist():
                            if math.isfinite(v) and v != int(v):
                                shown |= {f"{v:.3g}", f"{v:.4g}", f"{v:.6g}", repr(v)}
        assert shown
        leaked = [s for s in shown if s in result.message]
        assert leaked == [], (result.name, result.message)


def test_a_hidden_results_case_is_dropped_whatever_the_grader_sent() -> None:
    forged = {"name": "t", "category": "values", "hidden": True, "status": "fail",
              "message": "", "case": {"seed": 1, "snippet": "x = 1.2345"}}  # fmt: skip
    assert TestResult.from_json(forged).case is None
    shown = TestResult.from_json({**forged, "hidden": False})
    assert shown.case == {"seed": 1, "snippet": "x = 1.2345"}
    huge = {**forged, "hidden": False, "case": {"snippet": "#" * (cases.MAX_CASE_BYTES + 1)}}
    assert TestResult.from_json(huge).case is None
