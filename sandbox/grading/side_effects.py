"""The default checks every exercise gets on each case, after its own: what the learner's code
did besides answering (executor.py notes it in the learner's process, the grader asks for it
with an `audit` request).

- a tensor the caller passed (an argument, a grad_output handed to a backward) was changed in
  place: a real caller's tensor would be overwritten;
- a list or dict the caller passed (a state dict, a list of tensors) was edited in place:
  an entry added, removed or replaced;
- an answer shares memory with a tensor the caller passed: changing one changes the other;
- an object kept in the learner's process holds an autograd graph in its state (a module's
  buffers, a plain object's tensor attributes: running statistics updated outside
  `torch.no_grad()`): the graph grows with every step and a later
  backward fails.

Before, every argument reached the learner as a fresh copy, so none of these could be seen.
An exercise whose target is meant to change what it is given (an initialiser that fills a
weight, an in-place clip) names it in exercise.yml's `side_effects`, and one whose answer may
be an argument itself (a gradient passed through) in `may_alias`, each with the reason."""

from __future__ import annotations

import re

from sandbox.grading.compare import Mismatch
from sandbox.grading.solution import Solution

ARGUMENT = re.compile(r"^args\[(\d+)\](.*)$")


def where(place: str) -> str:
    """`args[0]` -> argument 1; `kwargs.mask` -> the argument `mask`; `grad_output` -> the
    gradient passed to backward."""
    if place.startswith("grad_output"):
        return "the incoming gradient (grad_output)"
    match = ARGUMENT.match(place)
    if match:
        inner = f" (its part {match.group(2)})" if match.group(2) else ""
        return f"argument {int(match.group(1)) + 1}{inner}"
    if place.startswith("kwargs."):
        return f"the argument `{place.removeprefix('kwargs.')}`"
    return place or "an input"


def message(finding: str) -> str | None:
    kind, _, rest = finding.partition(":")
    called, _, place = rest.partition(":")
    if kind == "changed" and place.startswith("grad_output"):
        return (
            f"your backward wrote into the incoming gradient (grad_output) of {called}: autograd "
            "may share that tensor with other parts of the graph, so compute the gradient into "
            "a new tensor"
        )
    if kind == "changed":
        return (
            f"your function changed the tensor it was given: {where(place)} of {called} was "
            "modified in place; compute into a new tensor and leave the caller's inputs as "
            "they were"
        )
    if kind == "edited":
        return (
            f"your function changed what it was given: {where(place)} of {called} (a list or "
            "dict) was edited in place; build a new one and leave the caller's as it was"
        )
    if kind == "shares":
        return (
            f"{called} returned a tensor that shares memory with {where(place)}: return a new "
            "tensor (e.g. with .clone()), so that changing one never changes the other"
        )
    if kind == "graph":
        return (
            f"the buffer `{place}` of your {called} still holds an autograd graph after the "
            "call: keep it out of autograd (update it under torch.no_grad() or from detached "
            "values)"
        )
    return None


def check(learner: Solution, changes: dict[str, str], aliases: dict[str, str]) -> None:
    """Raise Mismatch for the first side effect the learner's last requests had, unless its
    target is spared (exercise.yml's `side_effects` for changes, `may_alias` for shared
    memory)."""
    findings = learner.request("audit", {})
    if not isinstance(findings, list):
        raise Mismatch("the answer to an audit was malformed")
    for finding in findings:
        if not isinstance(finding, str):
            continue
        kind, _, rest = finding.partition(":")
        called = rest.partition(":")[0]
        spared = changes if kind in ("changed", "edited") else aliases if kind == "shares" else {}
        if called in spared:
            continue
        text = message(finding)
        if text:
            raise Mismatch(text)
