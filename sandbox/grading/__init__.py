"""Grading exercises: the declarations tests.py is written in, and the machinery that runs
them (sandbox/README.md, "Grading"; content/README.md, "Exercises").

An exercise's tests.py imports what it needs from here:

    from sandbox.grading import (
        case, values, edge, shapes, gradients, prop, trajectory, nontrivial, api_rule,
        performance, sequence, expect_close, fail,
    )
"""

from sandbox.grading.checks import expect_close
from sandbox.grading.draws import Draw
from sandbox.grading.dsl import (
    CATEGORIES,
    Case,
    Test,
    api_rule,
    case,
    edge,
    fail,
    gradients,
    nontrivial,
    performance,
    prop,
    shapes,
    trajectory,
    values,
)
from sandbox.grading.sequences import sequence
from sandbox.grading.wire import Ref

__all__ = [
    "CATEGORIES",
    "Case",
    "Draw",
    "Ref",
    "Test",
    "api_rule",
    "case",
    "edge",
    "expect_close",
    "fail",
    "gradients",
    "nontrivial",
    "performance",
    "prop",
    "sequence",
    "shapes",
    "trajectory",
    "values",
]
