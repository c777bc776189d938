"""The compile-break-free exercise is graded on values and syntax (a learner's function cannot
be sent to the grader to compile), so its premise is proven here instead: the reference
compiles as one graph, and the function the learner starts from does not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from tests.grading.conftest import EXERCISES

FOLDER = EXERCISES / "compile-break-free"


def clip_rows_from(name: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {}
    exec(compile((FOLDER / name).read_text(), str(FOLDER / name), "exec"), namespace)
    function: Callable[..., Any] = namespace["clip_rows"]
    return function


def test_the_reference_compiles_as_one_graph() -> None:
    reference = clip_rows_from("reference.py")
    x = torch.tensor([[3.0, 4.0], [0.0, 0.0], [6.0, 8.0], [0.3, 0.4]])
    compiled = torch.compile(reference, fullgraph=True, backend="eager")
    got, count = compiled(x, 5.0)
    want, want_count = reference(x, 5.0)
    assert torch.equal(got, want) and int(count) == int(want_count) == 1


def test_the_starter_breaks_the_graph() -> None:
    starter = clip_rows_from("starter.py")
    compiled = torch.compile(starter, fullgraph=True, backend="eager")
    # Dynamo refuses it: the `if` on a value read with .item() cannot be traced.
    with pytest.raises((torch._dynamo.exc.Unsupported, torch._dynamo.exc.UserError)):
        compiled(torch.ones(3, 2), 0.5)
