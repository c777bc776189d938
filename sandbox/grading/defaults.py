"""Optional arguments left out, as a real caller leaves them: the reference's signature says
which parameters have defaults (the starter states the same ones), and a case is called
again without them. A solution whose default differs from the statement's (`dim=0` for
`dim=-1`, a generator that is required, a padding value of 1) fails here, though every test
passes its arguments in full."""

from __future__ import annotations

import inspect
from typing import Any

from sandbox.grading.dsl import Case
from sandbox.grading.solution import LocalSolution, Solution


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
