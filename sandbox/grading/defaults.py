"""Inputs as a real caller passes them, the default checks of every plain function target
(runner.py runs them on a test's first and second cases):

- optional arguments left out: the reference's signature says which parameters have defaults
  (the starter states the same ones), and a case is called again without them. A solution
  whose default differs from the statement's (`dim=0` for `dim=-1`, a generator that is
  required, a padding value of 1) fails here, though every test passes its arguments in full;
- a non-contiguous layout: the same values as a transposed or sliced tensor holds them, so a
  `.view()` that only works on a fresh contiguous copy fails as it would for a caller;
- the same object passed twice: where two positional tensors have one shape and dtype, the
  first is passed in both places (self-attention's `attention(x, x, x)`), against the
  reference called the same way. A solution that scales one of them in place, or caches by
  identity, answers wrongly here."""

from __future__ import annotations

import inspect
from typing import Any

import torch

from sandbox.grading.compare import Comparison, Mismatch
from sandbox.grading.dsl import Case
from sandbox.grading.solution import LearnerError, LocalSolution, Solution


def left_out(reference: Solution, target: str, c: Case) -> tuple[str, Case] | None:
    """(the names left out, the shorter case), or None when the case already leaves every
    optional argument out or the target's signature cannot be read."""
    if not isinstance(reference, LocalSolution):
        return None
    try:
        signature = inspect.signature(reference.executor.resolve(target))
    except (NameError, AttributeError, TypeError, ValueError):
        return None
    params = list(signature.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return None
    optional = {p.name for p in params if p.default is not inspect.Parameter.empty}
    args: list[Any] = list(c.args)
    dropped: list[str] = []
    # Trailing positional arguments whose parameters have defaults.
    while args and len(args) <= len(params) and params[len(args) - 1].name in optional:
        dropped.append(f"`{params[len(args) - 1].name}`")
        args.pop()
    kwargs = {k: v for k, v in c.kwargs.items() if k not in optional}
    dropped += [f"`{k}`" for k in c.kwargs if k in optional]
    if not dropped:
        return None
    return ", ".join(dropped), Case(tuple(args), kwargs, c.data)


def check_left_out(
    learner: Solution, reference: Solution, target: str, c: Case, comparison: Comparison
) -> None:
    reduced = left_out(reference, target, c)
    if reduced is None:
        return
    names, shorter = reduced
    try:
        mine = shorter.copied()
        expected = reference.call(target, *mine.args, **mine.kwargs)
    except LearnerError:
        return  # not a valid call without them (an input's shape depends on them)
    theirs = shorter.copied()
    actual = learner.call(target, *theirs.args, **theirs.kwargs)
    try:
        comparison.check(expected, actual)
    except Mismatch as exc:
        raise Mismatch(f"called without {names} (left to their defaults): {exc}") from None


def check_layout(
    learner: Solution, target: str, c: Case, expected: Any, comparison: Comparison
) -> None:
    theirs = c.copied()
    payload = {"target": target, "args": theirs.args, "kwargs": theirs.kwargs}
    try:
        actual = learner.request("call", {**payload, "layout": "strided"})
    except LearnerError as exc:
        if exc.lost or exc.status != "error":
            raise
        raise LearnerError(
            "with the same inputs in a non-contiguous layout (a transposed or sliced tensor, "
            f"as a caller may pass), your code raised:\n{exc}"
        ) from None
    try:
        comparison.check(expected, actual)
    except Mismatch as exc:
        raise Mismatch(f"with the same inputs in a non-contiguous layout: {exc}") from None


def aliasable(c: Case) -> tuple[int, int] | None:
    """The first two positional tensor arguments of one shape and dtype, or None."""
    seen: dict[tuple[Any, ...], int] = {}
    for j, a in enumerate(c.args):
        if not isinstance(a, torch.Tensor) or a.numel() == 0:
            continue
        key = (tuple(a.shape), a.dtype)
        if key in seen:
            return seen[key], j
        seen[key] = j
    return None


def check_aliased(
    learner: Solution, reference: Solution, target: str, c: Case, comparison: Comparison
) -> None:
    pair = aliasable(c)
    if pair is None:
        return
    i, j = pair
    payload = {"target": target, "args": c.args, "kwargs": c.kwargs, "alias": list(pair)}
    try:
        expected = reference.request("call", payload)
    except LearnerError:
        return  # not a valid call with the two the same
    passed = f"with the same tensor passed as argument {i + 1} and argument {j + 1}"
    try:
        actual = learner.request("call", payload)
    except LearnerError as exc:
        if exc.lost or exc.status != "error":
            raise
        raise LearnerError(
            f"{passed} (as self-attention passes x for queries, keys and values), your code "
            f"raised:\n{exc}"
        ) from None
    try:
        comparison.check(expected, actual)
    except Mismatch as exc:
        raise Mismatch(f"{passed}: {exc}") from None
