"""Gradient checks with gradcheck's semantics, computed on the grader's side in float64.

The learner's process is asked for two things only: forward values (at the inputs, and at
inputs moved a little along random directions, all in one batched message) and
vector-Jacobian products (forward, then backward with a grad_output the grader chose). The
grader then checks, for each random direction u and the grad_output v:

    (<v, f(x + eps u)> - <v, f(x - eps u)>) / (2 eps)  ==  <J^T v, u>

which is what torch.autograd.gradcheck's fast mode checks (a projection of the Jacobian on
both sides), and compares J^T v with the reference's own backward."""

from __future__ import annotations

from typing import Any

import torch

from sandbox.grading import leaves, side_effects
from sandbox.grading.compare import Comparison, Mismatch, Tolerance
from sandbox.grading.dsl import Case
from sandbox.grading.solution import GraderFault, LearnerError, Solution
from sandbox.grading.wire import tensors_in


def _inner(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return float(sum((x.double() * y.double()).sum() for x, y in zip(a, b, strict=True)))


def _moved(args: Any, u: list[torch.Tensor], step: float) -> Any:
    """The arguments with each floating tensor moved by `step` along its direction in u."""
    directions = iter(u)
    return leaves.replaced(args, lambda a: a + step * next(directions))


def check_gradients(
    learner: Solution,
    reference: Solution,
    target: str,
    c: Case,
    options: dict[str, Any],
    generator: torch.Generator,
    visible: bool,
    incoming: tuple[str, ...] = (),
) -> None:
    """`incoming`: the layouts of INCOMING to check the backward with again, a default
    check of a gradient arriving from a larger graph."""
    eps, atol, rtol = options["eps"], options["atol"], options["rtol"]
    args, kwargs = c.args, c.kwargs
    # Every floating tensor argument, those inside a dict or list of parameters included.
    inputs = leaves.floating(args)
    try:
        expected_out = reference.call(target, *args, **kwargs)
        outs = tensors_in(expected_out)
        grad_output = [torch.randn(o.shape, generator=generator, dtype=o.dtype) for o in outs]
        v: Any = grad_output[0] if isinstance(expected_out, torch.Tensor) else tuple(grad_output)
        _, expected_grads = reference.vjp(target, args, v, kwargs)
    except LearnerError as exc:
        raise GraderFault(f"the reference failed a gradient check: {exc}") from None

    _, answer = learner.vjp(target, args, v, kwargs)
    if len(answer) != len(args):
        raise Mismatch("the backward answered for the wrong number of arguments")
    expected = [g for _, g in leaves.paired(args, expected_grads)]
    grads = [g for _, g in leaves.paired(args, answer)]
    for (where, _), g, e in zip(inputs, grads, expected, strict=True):
        if g is None and e is not None:
            raise Mismatch(
                f"no gradient reached {side_effects.where(where)}: is the code under "
                "torch.no_grad(), or does a .detach() (or a tensor rebuilt from .tolist() or "
                "numpy) cut it off from the output?"
            )
    grads = [
        torch.zeros_like(a) if g is None else g for (_, a), g in zip(inputs, grads, strict=True)
    ]
    directions = [
        [torch.randn(a.shape, generator=generator, dtype=torch.float64) for _, a in inputs]
        for _ in range(options["directions"])
    ]
    calls = []
    for u in directions:
        for sign in (1.0, -1.0):
            moved = _moved(args, u, sign * eps)
            calls.append({"op": "call", "target": target, "args": tuple(moved), "kwargs": kwargs})
    answers = learner.batch(calls)
    for n, u in enumerate(directions):
        (ok_plus, plus), (ok_minus, minus) = answers[2 * n], answers[2 * n + 1]
        if not (ok_plus and ok_minus):
            raise LearnerError(f"your forward raised on slightly moved inputs: {plus or minus}")
        try:
            numeric = _inner(grad_output, tensors_in(plus)) - _inner(grad_output, tensors_in(minus))
        except (RuntimeError, ValueError):
            raise Mismatch("the forward's output changed shape when its inputs moved") from None
        numeric /= 2 * eps
        analytic = _inner(grads, u)
        if abs(numeric - analytic) > atol + rtol * abs(numeric):
            raise Mismatch(
                "the backward disagrees with finite differences of the forward: along a random "
                f"direction u, d/dt <v, f(x + t u)> is {numeric:.6g} by central differences "
                f"(eps {eps:g}) and {analytic:.6g} from your backward (<J^T v, u>); "
                f"tolerance atol {atol:g} + rtol {rtol:g}"
            )
    comparison = Comparison({"float64": {learner.device: Tolerance(atol, rtol)}}, learner.device,
                            visible)  # fmt: skip
    _compare(comparison, args, answer, expected_grads, "")
    for layout in incoming:
        given: Any = v  # "strided": the same values as above, in another layout
        wanted: Any = expected_grads
        if layout == "expanded":  # a constant gradient, expanded from one element
            scale = 0.5 + float(torch.rand((), generator=generator))
            constant = [torch.full(o.shape, scale, dtype=o.dtype) for o in outs]
            given = constant[0] if isinstance(expected_out, torch.Tensor) else tuple(constant)
            try:
                _, wanted = reference.vjp(target, args, given, kwargs)
            except LearnerError as exc:
                raise GraderFault(f"the reference failed a gradient check: {exc}") from None
        _check_incoming(learner, target, c, given, wanted, layout, comparison)


# How a larger graph hands a gradient on: the layout asked of the learner's process, and what
# it stands for in a message.
INCOMING = {
    "strided": "a non-contiguous grad_output, as after a transpose downstream",
    "expanded": "a constant grad_output expanded from one element, as from out.sum()",
}


def _check_incoming(
    learner: Solution,
    target: str,
    c: Case,
    grad_output: Any,
    expected: Any,
    layout: str,
    comparison: Comparison,
) -> None:
    """The backward again, with grad_output as it arrives inside a model rather than fresh
    and contiguous: a backward that calls .view() on it or writes into it fails here."""
    how = INCOMING[layout]
    try:
        _, answer = learner.vjp(target, c.args, grad_output, c.kwargs, layout=layout)
    except LearnerError as exc:
        if exc.lost or exc.status != "error":
            raise
        raise LearnerError(
            f"with the gradient arriving from a larger graph ({how}), your backward raised:\n{exc}"
        ) from None
    try:
        _compare(comparison, c.args, answer, expected, f" ({how})")
    except Mismatch as exc:
        raise Mismatch(f"with the gradient arriving from a larger graph: {exc}") from None


def _compare(comparison: Comparison, args: Any, answer: Any, expected: Any, how: str) -> None:
    for (where, g), (_, e) in zip(
        leaves.paired(args, answer), leaves.paired(args, expected), strict=True
    ):
        if e is None:
            continue
        if g is None:
            raise Mismatch(f"no gradient reached {side_effects.where(where)}{how}")
        comparison.check(
            e, g, f"gradient of {side_effects.where(where)} (against the reference's backward)"
        )
