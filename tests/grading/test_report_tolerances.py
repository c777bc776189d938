"""The grading report names the tolerances its comparisons allowed on the device it ran on,
the exercise's own where it states them (the side-by-side view shows them per device)."""

from __future__ import annotations

from sandbox.grading.compare import DEFAULT_TOLERANCES
from sandbox.grading.exercise import Exercise
from sandbox.grading.trusted import grade_in_process


def test_the_report_names_the_tolerances_used_on_its_device(
    loaded: dict[str, Exercise],
) -> None:
    exercise = loaded["stable-softmax"]
    report = grade_in_process(exercise, exercise.reference)
    cpu = exercise.config.tolerances.get("float32", {}).get("cpu")
    expected = cpu or DEFAULT_TOLERANCES["float32"]["cpu"]
    assert report.tolerances["float32"] == f"atol {expected.atol:g} + rtol {expected.rtol:g}"
    assert report.to_json()["tolerances"] == report.tolerances


def test_each_grading_names_only_its_own_tolerances(loaded: dict[str, Exercise]) -> None:
    """The record starts afresh: linear-backward's looser float64 tolerance does not stay
    in the next grading's report (stable-softmax states a tighter one of its own)."""
    first = grade_in_process(loaded["linear-backward"], loaded["linear-backward"].reference)
    second = grade_in_process(loaded["stable-softmax"], loaded["stable-softmax"].reference)
    assert first.tolerances["float64"] != second.tolerances["float64"]
    stated = loaded["stable-softmax"].config.tolerances["float64"]["cpu"]
    assert second.tolerances["float64"] == f"atol {stated.atol:g} + rtol {stated.rtol:g}"
