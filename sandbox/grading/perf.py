"""The performance test: the learner's time per call against the reference's, in
interleaved rounds, summarised with the lab harness's statistics (median, IQR, spread).

The grader holds both clocks: the reference's calls run in its own process, the learner's
as one `repeat` request (each round on inputs drawn afresh, so no answer can be cached
between rounds) timed from sending it to its answer. Sending the inputs is counted against
the learner (a learner cannot make itself look faster than it is, only slower); the
reference's calls pay the same encoding of their inputs. Graded only where exercise.yml says
`performance: {graded: true, max_ratio: R}`, and then only when both sides' spread is under
the lab harness's limit: a noisy measurement passes, with a sentence saying so."""

from __future__ import annotations

import time
from typing import Any

from sandbox.grading.draws import Draw, case_seed
from sandbox.grading.dsl import Test
from sandbox.grading.solution import Solution
from sandbox.lab.backprop_lab.stats import SideStats, summarize
from sandbox.lab.backprop_lab.verdict import MAX_SPREAD


class SlowerThanAllowed(Exception):
    """Graded, measured cleanly, and over the exercise's ratio."""

    def __init__(self, message: str, figures: dict[str, Any]) -> None:
        super().__init__(message)
        self.figures = figures


def _round(sol: Solution, target: str, inputs: list[tuple[Any, ...]]) -> float:
    started = time.perf_counter()
    sol.repeat(target, inputs)
    return (time.perf_counter() - started) * 1000 / len(inputs)


def measure(
    test: Test, learner: Solution, reference: Solution, seed: int, settings: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The sentence shown and the figures kept; SlowerThanAllowed when graded and too slow."""
    draw_case = test.inputs
    assert isinstance(test.target, str) and draw_case is not None
    rounds, calls = test.options["rounds"], test.options["calls"]

    def inputs(r: int) -> list[tuple[Any, ...]]:
        return [draw_case(Draw(case_seed(seed, test.name, r * calls + k), 2 + k)).args
                for k in range(calls)]  # fmt: skip

    warm = inputs(rounds)
    _round(reference, test.target, warm)
    _round(learner, test.target, warm)
    ours: list[float] = []
    theirs: list[float] = []
    for r in range(rounds):
        batch = inputs(r)
        ours.append(_round(reference, test.target, batch))
        theirs.append(_round(learner, test.target, batch))
    ref, yours = summarize(ours), summarize(theirs)
    ratio = yours.median_ms / ref.median_ms if ref.median_ms > 0 else float("inf")
    noisy = max(ref.spread, yours.spread) > MAX_SPREAD
    text = (
        f"your code {_side(yours)}, the reference {_side(ref)}; {ratio:.2f}x the reference's "
        f"time ({rounds} interleaved rounds of {calls} calls, sending the inputs included)"
    )
    figures = {"ratio": ratio, "learner": yours.to_dict(), "reference": ref.to_dict()}
    limit = settings.get("max_ratio")
    if settings.get("graded") and limit is not None:
        figures["max_ratio"] = limit
        if noisy:
            text += f"; too noisy to grade (spread over {MAX_SPREAD:.0%}), so not held against you"
        elif ratio > float(limit):
            raise SlowerThanAllowed(f"{text}; the limit is {float(limit):g}x", figures)
    return text, figures


def _side(stats: SideStats) -> str:
    return f"{stats.median_ms:.3g} ms per call (spread {stats.spread:.0%})"
