"""Every exercise whose target is an object (a class the learner writes, other than an
autograd.Function) drives it through a drawn sequence of calls (sandbox/grading/sequences.py):
one method leaves state the next one reads, and tests that call methods in one fixed order
miss it. An exercise opts out only with the reason in exercise.yml's `no_sequence`."""

from __future__ import annotations

import ast

import pytest

from sandbox.grading.exercise import Exercise
from tests.grading.conftest import exercise_folders


def object_targets(reference: str) -> list[str]:
    """The top-level classes of a reference, autograd.Functions left out (they are called
    through `apply`, and keep no state between calls)."""
    found = []
    for node in ast.parse(reference).body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [ast.unparse(b) for b in node.bases]
        if not any(b.endswith("Function") for b in bases):
            found.append(node.name)
    return found


@pytest.mark.parametrize("slug", [p.name for p in exercise_folders()])
def test_an_object_target_is_driven_through_a_drawn_sequence_of_calls(
    slug: str, loaded: dict[str, Exercise]
) -> None:
    exercise = loaded[slug]
    if not object_targets(exercise.reference):
        return
    sequences = [t for t in exercise.tests() if t.options.get("sequence")]
    if exercise.config.no_sequence:
        assert not sequences, f"{slug} has a sequence test: drop no_sequence from exercise.yml"
        return
    assert sequences, (
        f"{slug}'s target {object_targets(exercise.reference)} is an object: add a sequence() "
        "test, or say in exercise.yml's no_sequence why it needs none"
    )
    assert all(len(t.options["sequence"]) >= 2 for t in sequences)


def test_object_targets_are_found() -> None:
    code = (
        "import torch\nclass Fn(torch.autograd.Function):\n    pass\n"
        "class Cache:\n    pass\ndef f():\n    class Inner:\n        pass\n"
    )
    assert object_targets(code) == ["Cache"]
