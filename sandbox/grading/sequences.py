"""Stateful objects driven through sequences of calls (a default of every exercise whose
target is an object): a cache filled by one method and read by the next, an optimiser's
`zero_grad` between steps, a layer switched between training and evaluation. Tests that
call methods in one fixed order miss the state one call leaves for the next.

`sequence(...)` draws an order of calls per case, each call at least once, and compares the
learner's answers with those of a fresh reference object driven through the same order."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from sandbox.grading.draws import Draw
from sandbox.grading.dsl import Case, Inputs, Test, values

# move(sol, obj, case, k) -> the k-th call's answer (None for a call that answers nothing)
Move = Callable[[Any, Any, Case, int], Any]


def sequence(
    name: str,
    build: Callable[[Any, Case], Any],
    moves: Mapping[str, Move],
    inputs: Inputs,
    *,
    length: int = 6,
    cases: int = 3,
    **kw: Any,
) -> Test:
    """A values test: `build(sol, case)` makes the object, then `length` calls drawn from
    `moves` (each at least once, in a drawn order) run on it; the answers are compared call
    by call, each named by its place and method ("call 3 (forward)")."""
    names = list(moves)
    if length < len(names):
        raise ValueError(f"{name}: a sequence of {length} cannot call each of {names}")

    def drawn(d: Draw) -> Case:
        c = inputs(d)
        calls = names + [d.choice(names) for _ in range(length - len(names))]
        order = [calls[i] for i in d.permutation(len(calls))]
        return Case(c.args, c.kwargs, {**c.data, "calls": order})

    def drive(sol: Any, c: Case) -> dict[str, Any]:
        obj = build(sol, c)
        return {
            f"call {k + 1} ({call})": moves[call](sol, obj, c, k)
            for k, call in enumerate(c.data["calls"])
        }

    description = kw.pop("description", "") or (
        f"a fresh object driven through {length} calls of {', '.join(names)} in a drawn order"
    )
    test = values(name, drive, drawn, cases=cases, description=description, **kw)
    # Marked, so that tests/grading/test_sequences.py can see each object target has one.
    return replace(test, options={**test.options, "sequence": tuple(names)})
