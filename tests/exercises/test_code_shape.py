"""Whether two versions of a solution are the same program (app/exercises/code_shape.py), on
the exercises' own code: the references, and the mutants that each change one thing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.exercises.code_shape import ShapeCache, program_shape, same_program
from tests.support.paths import CONTENT_DIR

EXERCISES = sorted((CONTENT_DIR / "exercises").iterdir())
SOFTMAX = (CONTENT_DIR / "exercises/stable-softmax/reference.py").read_text(encoding="utf-8")

# stable-softmax's reference as a learner might resubmit it: other line breaks, quotes and
# spacing, comments removed and added, docstrings added; nothing that runs differs.
SOFTMAX_REFORMATTED = '''"""My softmax."""
import torch
def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Subtract the max first."""
    if x.numel() == 0: return x.clone()  # nothing to do
    shifted = x - x.amax(dim = dim, keepdim = True)


    e = shifted.exp()
    return e / e.sum(dim=dim,
                     keepdim=True)
def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return x.clone()
    shifted = x - x.amax(dim=dim, keepdim=True)
    return (shifted - shifted.exp().sum(dim=dim, keepdim=True).log())
'''


def test_formatting_comments_and_docstrings_leave_the_program_unchanged() -> None:
    assert SOFTMAX_REFORMATTED != SOFTMAX
    assert same_program(SOFTMAX, SOFTMAX_REFORMATTED)


def test_a_changed_expression_is_a_changed_program() -> None:
    changed = SOFTMAX.replace("e / e.sum(dim=dim, keepdim=True)", "e / e.sum(dim=-1, keepdim=True)")
    assert changed != SOFTMAX
    assert not same_program(SOFTMAX, changed)
    # A change in a function other than the entry point counts too: tests call it.
    helper = SOFTMAX.replace(".log()\n", ".log() + 0.0\n")
    assert helper != SOFTMAX and not same_program(SOFTMAX, helper)


def test_code_that_does_not_parse_is_never_the_same() -> None:
    broken = "def softmax(x:\n    return x\n"
    assert program_shape(broken) is None
    assert not same_program(broken, broken)
    assert not same_program(SOFTMAX, "\x00")


@pytest.mark.parametrize("folder", EXERCISES, ids=lambda p: p.name)
def test_every_reference_rewritten_is_the_same_program(folder: Path) -> None:
    reference = (folder / "reference.py").read_text(encoding="utf-8")
    # ast.unparse drops every comment and rewrites every line: formatting only.
    rewritten = ast.unparse(ast.parse(reference))
    assert rewritten != reference
    assert same_program(reference, rewritten)


@pytest.mark.parametrize("folder", EXERCISES, ids=lambda p: p.name)
def test_every_mutant_differs_from_its_reference(folder: Path) -> None:
    reference = (folder / "reference.py").read_text(encoding="utf-8")
    from sandbox.grading.patches import apply_patch

    patches = sorted((folder / "mutants").glob("*.patch"))
    assert patches
    for patch in patches:
        mutant = apply_patch(reference, patch.read_text(encoding="utf-8"))
        assert not same_program(reference, mutant), patch.name


def test_the_cache_keeps_digests_of_shapes_and_forgets_the_oldest() -> None:
    cache = ShapeCache(2)
    changed = SOFTMAX.replace("keepdim=True)\n    e", "keepdim=False)\n    e")
    assert changed != SOFTMAX
    first = cache.digest("a", SOFTMAX)
    assert first and cache.digest("b", SOFTMAX_REFORMATTED) == first
    assert cache.digest("c", changed) not in (first, b"")
    assert cache.get("a") is None  # the oldest went
    assert cache.get("b") == first
    assert cache.digest("d", "def (") == b"" and cache.get("d") == b""
