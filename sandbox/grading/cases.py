"""The case of a failing visible test, as a learner reads it and replays it.

A visible test that fails carries, beside its message, a `case` (TestResult.case): the
inputs of the case that failed, the learner's output, the expected output, the largest
difference, the seed, and a Python snippet that rebuilds the inputs exactly and makes the
same calls of the learner's code, then prints the output against the expected value. Built
in the grader's jail, from what the grader already holds: the case's inputs, the requests
the learner's side was sent during the case (`Recording`), and the last pair of values the
test compared (`compare.last_compared`). Hidden tests get none: their inputs are the secret.

Everything here is bounded (a summary, never the whole of a large tensor) and JSON-safe
(non-finite floats are written as text, since JSON has no NaN)."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from sandbox.grading.case_values import (
    difference,
    summary,
)
from sandbox.grading.compare import dtype_name
from sandbox.grading.draws import Draw
from sandbox.grading.dsl import Case
from sandbox.grading.solution import Solution
from sandbox.grading.wire import Ref

LITERAL_MAX = 512  # values a tensor may have to be written into the snippet as a literal
MAX_STEPS = 12  # requests of the learner's code the snippet writes out
MAX_SNIPPET = 48 * 1024
MAX_CASE_BYTES = 96 * 1024  # the whole case, as JSON


# --- the requests of one case ----------------------------------------------------------------


@dataclass
class Step:
    op: str
    payload: dict[str, Any]
    answer: Any = None
    raised: bool = False


class Recording(Solution):
    """The learner's handle, noting each request of the current case and its answer: what
    the snippet makes the learner's code do again. Used for visible tests only."""

    def __init__(self, inner: Solution) -> None:
        self.inner = inner
        self.device = inner.device
        self.call_seconds = inner.call_seconds
        self.steps: list[Step] = []

    def request(self, op: str, payload: dict[str, Any]) -> Any:
        step = Step(op, payload)
        if op != "audit":  # the grader's question about side effects, not a call of theirs
            self.steps.append(step)
        try:
            step.answer = self.inner.request(op, payload)
        except BaseException:
            step.raised = True
            raise
        finally:
            self.last_devices = self.inner.last_devices
        return step.answer

    def begin(self, test: str) -> None:
        self.inner.begin(test)

    def close(self) -> None:
        self.inner.close()


# --- the snippet ----------------------------------------------------------------------------


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = a.detach().cpu(), b.detach().cpu()
    if a.is_floating_point():
        return bool(((a == b) | (a.isnan() & b.isnan())).all())
    return bool(torch.equal(a, b))


def _float_source(value: float) -> str:
    return repr(value) if math.isfinite(value) else ("nan" if math.isnan(value) else repr(value))


def _list_source(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_list_source(v) for v in values) + "]"
    if isinstance(values, float):
        return _float_source(values)
    return repr(values)


def tensor_literal(t: torch.Tensor) -> str:
    """Python source that builds `t` exactly (every float of a float32, float16 or bfloat16
    tensor is a float64 that casts back to itself)."""
    t = t.detach().cpu()
    dtype = f"torch.{dtype_name(t.dtype)}"
    if t.numel() == 0:
        return f"torch.empty({tuple(t.shape)}, dtype={dtype})"
    return f"torch.tensor({_list_source(t.tolist())}, dtype={dtype})"


class _Writer:
    """The snippet's lines, and the names it gives the case's values."""

    def __init__(self, draw: Draw, draws_needed: dict[int, str]) -> None:
        self.lines: list[str] = []
        self.inputs: list[tuple[str, torch.Tensor]] = []  # named inputs, for matching
        self.refs: dict[int, str] = {}
        self.answers: list[tuple[Any, str]] = []
        self.helpers: set[str] = set()
        self.draw = draw
        self.draws_needed = draws_needed
        self.unreproducible = False
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def source(self, value: Any) -> str:
        if isinstance(value, torch.Tensor):
            for name, t in self.inputs:
                if _same(t, value):
                    return name
            if value.numel() <= LITERAL_MAX:
                literal = tensor_literal(value)
                return literal + (".requires_grad_()" if value.requires_grad else "")
            self.unreproducible = True
            return (
                f"torch.zeros({tuple(value.shape)}, dtype=torch.{dtype_name(value.dtype)})"
                "  # NOT the test's values: too large to write out"
            )
        if isinstance(value, Ref):
            return self.refs.get(value.id, "None  # an object of an earlier step")
        if isinstance(value, float):
            return _float_source(value)
        if isinstance(value, tuple):
            inner = ", ".join(self.source(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, list):
            return "[" + ", ".join(self.source(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k!r}: {self.source(v)}" for k, v in value.items()) + "}"
        return repr(value)


def _draw_lines(draw: Draw, wanted: dict[int, str]) -> list[str]:
    """The case's seeded draws replayed, up to the last one `wanted` names: every earlier
    draw is made again too, since each one moves the generator on."""
    if not wanted:
        return []
    last = max(wanted)
    lines = [f"g = torch.Generator().manual_seed({draw.seed})  # this case's seed"]
    for i, (kind, args, _) in enumerate(draw.log[: last + 1]):
        name = wanted.get(i, "_")
        shape = tuple(args["shape"])
        if kind == "integers":
            expr = f"torch.randint({args['low']}, {args['high']}, {shape}, generator=g)"
        elif args["normal"]:
            expr = f"torch.randn({shape}, generator=g, dtype=torch.float64)"
        else:
            scale = _float_source(float(args["high"] - args["low"]))
            expr = (
                f"torch.rand({shape}, generator=g, dtype=torch.float64) * {scale} + "
                f"{_float_source(float(args['low']))}"
            )
        if kind == "tensor":
            expr = f"({expr}).to(torch.{args['dtype']})"
        lines.append(f"{name} = {expr}")
    return lines


def _replayable(draw: Draw, t: torch.Tensor) -> int | None:
    """The index of the seeded draw that made `t`, when replaying it gives `t` exactly."""
    for i, (_, _, made) in enumerate(draw.log):
        if made is t:
            namespace: dict[str, Any] = {"torch": torch, "inf": math.inf, "nan": math.nan}
            code = "\n".join(_draw_lines(draw, {i: "made"}))
            try:
                exec(compile(code, "<replay>", "exec"), namespace)  # our own generated source
            except Exception:
                return None
            return i if _same(namespace["made"], t) else None
    return None


HELPERS = {
    "non_contiguous": '''def non_contiguous(t):
    """The same values in a layout no fresh tensor has (a transposed caller's tensor)."""
    if t.numel() < 2:
        return t
    if t.dim() >= 2:
        dims = list(reversed(range(t.dim())))
        return t.permute(dims).contiguous().permute(dims)
    return torch.stack([t, torch.zeros_like(t)], dim=-1)[..., 0]
''',
    "with_grad": '''def with_grad(value):
    """Floating tensors requiring grad, as a model's activations arrive."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().clone().requires_grad_(True)
    return value
''',
}


def _arguments(w: _Writer, payload: dict[str, Any]) -> str:
    args = list(payload.get("args", ()))
    sources = [w.source(a) for a in args]
    alias = payload.get("alias")
    if isinstance(alias, list) and len(alias) == 2:
        i, j = alias
        if 0 <= i < j < len(sources):
            shared = w.fresh("shared")
            w.lines.append(f"{shared} = {sources[i]}  # one tensor, passed twice")
            sources[i] = sources[j] = shared
    if payload.get("layout") == "strided":
        w.helpers.add("non_contiguous")
        sources = [
            f"non_contiguous({s})" if isinstance(a, torch.Tensor) else s
            for s, a in zip(sources, args, strict=True)
        ]
    if payload.get("inputs") == "grad":
        w.helpers.add("with_grad")
        sources = [f"with_grad({s})" for s in sources]
    kwargs = payload.get("kwargs") or {}
    sources += [f"{k}={w.source(v)}" for k, v in kwargs.items()]
    return ", ".join(sources)


def _step_lines(w: _Writer, step: Step) -> None:
    p, op = step.payload, step.op
    if op in ("call", "new", "method"):
        callee = p["target"] if op != "method" else f"{w.source(p['obj'])}.{p['name']}"
        stem = "obj" if isinstance(step.answer, Ref) else "got"
        name = w.fresh(stem)
        w.lines.append(f"{name} = {callee}({_arguments(w, p)})")
    elif op == "get":
        name = w.fresh("got")
        attr = f".{p['name']}" if p.get("name") else ""
        w.lines.append(f"{name} = {w.source(p['obj'])}{attr}")
    elif op == "set":
        w.lines.append(f"{w.source(p['obj'])}.{p['name']} = {w.source(p['value'])}")
        return
    elif op == "keep":
        name = w.fresh("obj")
        w.lines.append(f"{name} = {w.source(p['value'])}")
    elif op == "index":
        name = w.fresh("obj")
        w.lines.append(f"{name} = {w.source(p['obj'])}[{p['index']!r}]")
    elif op == "vjp":
        name, args, grads = w.fresh("got"), w.fresh("args"), w.fresh("grads")
        callee = p["target"] if "obj" not in p else f"{w.source(p['obj'])}.{p['target']}"
        w.helpers.add("with_grad")
        arguments = ", ".join(w.source(a) for a in p.get("args", ()))
        kwargs = "".join(f", {k}={w.source(v)}" for k, v in (p.get("kwargs") or {}).items())
        w.lines += [
            f"{args} = [with_grad(a) for a in [{arguments}]]",
            f"{name} = {callee}(*{args}{kwargs})",
            f"outputs = [o for o in ({name} if isinstance({name}, (tuple, list)) else [{name}])"
            " if isinstance(o, torch.Tensor) and o.requires_grad]",
            f"grad_output = {w.source(p['grad_output'])}",
            "grad_output = list(grad_output) if isinstance(grad_output, (tuple, list)) "
            "else [grad_output]",
            f"wanted = [a for a in {args} if isinstance(a, torch.Tensor) and a.requires_grad]",
            "found = iter(torch.autograd.grad(outputs, wanted, grad_output[: len(outputs)], "
            "allow_unused=True))",
            f"{grads} = [next(found) if isinstance(a, torch.Tensor) and a.requires_grad "
            f"else None for a in {args}]  # a gradient per argument",
            f"print('gradients:', {grads})",
        ]
        if isinstance(step.answer, dict):
            w.answers.append((step.answer.get("output"), name))
            for i, grad in enumerate(step.answer.get("grads") or []):
                w.answers.append((grad, f"{grads}[{i}]"))
        return
    else:
        w.lines.append(f"# (a {op!r} request of the test, not written out)")
        return
    if isinstance(step.answer, Ref):
        w.refs[step.answer.id] = name
    w.answers.append((step.answer, name))


def _answer_source(w: _Writer, actual: Any) -> str | None:
    """The snippet's expression for the output the test compared: an answer itself, or a
    list or tuple of answers; None when the test computed it from them."""
    for answer, name in w.answers:
        if answer is actual:
            return name
    if isinstance(actual, (list, tuple)) and actual:
        parts = [_answer_source(w, a) for a in actual]
        if all(parts):
            inner = ", ".join(p for p in parts if p)
            return f"[{inner}]" if isinstance(actual, list) else f"({inner},)"
    return None


def _value_count(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return int(value.numel())
    if isinstance(value, (list, tuple)):
        return sum(_value_count(v) for v in value)
    if isinstance(value, dict):
        return sum(_value_count(v) for v in value.values())
    return 1


def snippet(
    test_name: str,
    steps: Sequence[Step],
    named: Sequence[tuple[str, Any]],
    draw: Draw,
    compared: tuple[Any, Any, str] | None,
    diff: dict[str, Any] | None,
    tolerance: tuple[float, float] | None,
) -> str:
    """Python that rebuilds the case's inputs and makes the same requests of the learner's
    code, then prints the output beside the expected one."""
    wanted: dict[int, str] = {}
    for name, value in named:
        if isinstance(value, torch.Tensor) and value.numel() > LITERAL_MAX:
            index = _replayable(draw, value)
            if index is not None:
                wanted[index] = name
    w = _Writer(draw, wanted)
    body: list[str] = []
    drawn = set(wanted.values())
    for name, value in named:
        if name in drawn or not isinstance(value, torch.Tensor):
            continue
        body.append(f"{name} = {w.source(value)}")
        w.inputs.append((name, value))
    for name, value in named:
        if name in drawn:
            w.inputs.append((name, value))
    w.lines = []
    for step in steps[:MAX_STEPS]:
        _step_lines(w, step)
    if len(steps) > MAX_STEPS:
        w.lines.append(f"# ... {len(steps) - MAX_STEPS} more requests of the test not written out")
    check = _check_lines(w, compared, diff, tolerance)
    head = [
        f"# The failing case of the test {test_name!r}, rebuilt.",
        "# Paste your solution above these lines (in a Q&A item's code editor, or a file of",
        "# your own with torch installed), then run it.",
        "import torch",
        "from math import inf, nan",
        "",
    ]
    helpers = [HELPERS[h] for h in sorted(w.helpers)]
    parts = head + helpers + _draw_lines(draw, wanted) + body + [""] + w.lines + [""] + check
    if w.unreproducible:
        parts.insert(3, "# Some inputs were too large to write out: see the lines marked NOT.")
    return "\n".join(parts).rstrip() + "\n"


def _check_lines(
    w: _Writer,
    compared: tuple[Any, Any, str] | None,
    diff: dict[str, Any] | None,
    tolerance: tuple[float, float] | None,
) -> list[str]:
    if compared is None:
        return ["# The test checks a property of these outputs: " + "print them to see it."]
    expected, actual, where = compared
    got = _answer_source(w, actual)
    if got is None:
        return [
            f"# The test compared a value it computed from these outputs ({where}):",
            f"print({f'expected ({where}):'!r}, {w.source(expected)})"
            if _value_count(expected) <= LITERAL_MAX
            else "# (the expected value is too large to write out)",
        ]
    lines = [f"print('your output:', {got})"]
    if _value_count(expected) <= LITERAL_MAX:
        atol, rtol = tolerance or (0.0, 0.0)
        lines += [
            f"expected = {w.source(expected)}",
            "print('expected:', expected)",
            _compare_source(got, "expected", atol, rtol),
        ]
    elif diff is not None:
        path = diff["path"].replace("output", got, 1)
        index = tuple(diff["index"])
        at = f"{path}[{index}]" if index else path
        lines += [
            f"print('at {diff['where']}: yours', float({at}), "
            f"'expected', {_float_source(float(diff['expected']))})",
        ]
    return lines


def _compare_source(got: str, expected: str, atol: float, rtol: float) -> str:
    return f"""
def close(a, e):
    if isinstance(e, torch.Tensor):
        if not isinstance(a, torch.Tensor) or a.shape != e.shape or a.dtype != e.dtype:
            return False
        if not (e.is_floating_point() or e.is_complex()):
            return bool(torch.equal(a, e))
        return bool(torch.allclose(a.detach().double(), e.double(), atol={atol!r},
                                   rtol={rtol!r}, equal_nan=True))
    if isinstance(e, (list, tuple)):
        return isinstance(a, (list, tuple)) and len(a) == len(e) and all(
            close(x, y) for x, y in zip(a, e))
    if isinstance(e, dict):
        return isinstance(a, dict) and set(a) == set(e) and all(close(a[k], e[k]) for k in e)
    if isinstance(e, float) and not isinstance(a, bool) and isinstance(a, (int, float)):
        return abs(a - e) <= {atol!r} + {rtol!r} * abs(e) or (a != a and e != e)
    return a == e


print("matches" if close({got}, {expected}) else "DOES NOT MATCH the expected output")"""


# --- the whole case ---------------------------------------------------------------------------


@dataclass
class Witness:
    """What one case of a visible test saw: its inputs and seed, the learner's requests."""

    case: Case
    draw: Draw
    steps: list[Step] = field(default_factory=list)


def named_inputs(c: Case, names: Sequence[str] = ()) -> list[tuple[str, Any]]:
    """The case's values, named: positional arguments after the target's parameters when
    known (else arg1, arg2...), keyword arguments by their names, `data` by its keys."""
    out: list[tuple[str, Any]] = []
    for i, value in enumerate(c.args):
        out.append((names[i] if i < len(names) else f"arg{i + 1}", value))
    out += [(k, v) for k, v in c.kwargs.items()]
    out += [(k, v) for k, v in c.data.items() if isinstance(k, str) and k.isidentifier()]
    return out


def build(
    test_name: str,
    witness: Witness,
    compared: tuple[Any, Any, str] | None,
    tolerance: tuple[float, float] | None,
    names: Sequence[str] = (),
) -> dict[str, Any]:
    """The `case` of a failing visible test: JSON-safe and at most MAX_CASE_BYTES."""
    named = named_inputs(witness.case, names)
    # Names the snippet can assign without shadowing Python or the learner's own functions.
    safe = [(f"{n}_in" if not n.startswith("arg") else n, v) for n, v in named]
    diff = difference(compared[0], compared[1]) if compared else None
    out: dict[str, Any] = {
        "seed": witness.draw.seed,
        "inputs": [{"name": n, **summary(v)} for n, v in named],
    }
    if compared is not None:
        expected, actual, where = compared
        out["compared"] = where
        out["output"] = summary(actual)
        out["expected"] = summary(expected)
    if diff is not None:
        out["difference"] = diff
    try:
        code = snippet(test_name, witness.steps, safe, witness.draw, compared, diff, tolerance)
    except Exception as exc:  # a case the writer does not know how to rebuild: say so
        code = f"# This case could not be written out as code ({type(exc).__name__})\n"
    if len(code) > MAX_SNIPPET:
        code = "# This case is too large to write out as code.\n"
    out["snippet"] = code
    return bounded(out)


def bounded(case: dict[str, Any]) -> dict[str, Any]:
    """The case as JSON would carry it, dropping the snippet, then the inputs' detail, when
    it is over its size."""
    text = json.dumps(case, allow_nan=False)
    if len(text) > MAX_CASE_BYTES:
        case = {**case, "snippet": "# This case is too large to write out as code.\n"}
        text = json.dumps(case, allow_nan=False)
    if len(text) > MAX_CASE_BYTES:
        case = {k: case[k] for k in ("seed", "snippet") if k in case}
    result: dict[str, Any] = json.loads(json.dumps(case, allow_nan=False))
    return result
