"""The mutation operators (mutate.py): for one node of a reference's syntax tree, the
one-change edits a realistic bug makes, each as (operator family, what it does, a function
from the node to its replacement)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

BINOPS: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Pow: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.MatMult: ast.Mult,
}
COMPARES: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
SWAPPED_NAMES = {
    "max": "min",
    "min": "max",
    "amax": "amin",
    "amin": "amax",
    "argmax": "argmin",
    "argmin": "argmax",
    "maximum": "minimum",
    "minimum": "maximum",
    "sum": "mean",
    "mean": "sum",
    "clamp_min": "clamp_max",
    "clamp_max": "clamp_min",
}
DROPPED_CALLS = ("detach", "clone", "contiguous", "detach_")
SMALL = 1e-3  # a float constant at most this large (and not 0) is read as an epsilon


Edit = tuple[str, str, Callable[[Any], Any]]  # operator, what, replacement


def is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def number(node: ast.AST) -> float | int | None:
    """A numeric constant's value (a negative one included), or None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        value: float | int = node.value  # type: ignore[assignment]
        return value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        inner: float | int = node.operand.value  # type: ignore[assignment]
        return -inner
    return None


def _const(value: float | int) -> ast.expr:
    if value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def _is_eps(node: ast.AST) -> bool:
    value = number(node)
    if isinstance(value, float) and 0 < abs(value) <= SMALL:
        return True
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return isinstance(name, str) and "eps" in name.lower()


def edits(node: ast.AST) -> Iterator[Edit]:
    if isinstance(node, ast.BinOp):
        if (binop := BINOPS.get(type(node.op))) is not None:
            new_op: type[ast.operator] = binop
            yield ("arithmetic", f"{_sym(node.op)} -> {_sym(new_op())}",
                   lambda n: ast.BinOp(n.left, new_op(), n.right))  # fmt: skip
        if isinstance(node.op, (ast.Add, ast.Sub)):
            for side, other in (("right", "left"), ("left", "right")):
                if _is_eps(getattr(node, side)):
                    yield ("epsilon", f"epsilon dropped ({side})", _attribute(other))
    elif isinstance(node, ast.AugAssign):
        if (augop := BINOPS.get(type(node.op))) is not None:
            new_aug: type[ast.operator] = augop
            yield ("arithmetic", f"{_sym(node.op)}= -> {_sym(new_aug())}=",
                   lambda n: ast.AugAssign(n.target, new_aug(), n.value))  # fmt: skip
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        swap_cmp = COMPARES.get(type(node.ops[0]))
        if swap_cmp is not None:
            yield ("comparison", f"{_sym(node.ops[0])} -> {_sym(swap_cmp())}",
                   lambda n: ast.Compare(n.left, [swap_cmp()], n.comparators))  # fmt: skip
    elif isinstance(node, ast.BoolOp):
        flipped: type[ast.boolop] = ast.Or if isinstance(node.op, ast.And) else ast.And
        yield ("boolean", f"{_sym(node.op)} -> {_sym(flipped())}",
               lambda n: ast.BoolOp(flipped(), n.values))  # fmt: skip
    elif (
        isinstance(node, ast.UnaryOp)
        and number(node) is None
        and isinstance(node.op, (ast.USub, ast.Not))
    ):
        yield ("unary", f"{_sym(node.op)} dropped", lambda n: n.operand)
    if (value := number(node)) is not None:
        yield from _constant_edits(value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield ("constant", f"{node.value} -> {not node.value}",
               lambda n: ast.Constant(not n.value))  # fmt: skip
    if isinstance(node, ast.Slice):
        for bound in ("lower", "upper"):
            part = getattr(node, bound)
            if part is not None and number(part) is None:
                for op, sign in ((ast.Add, "+"), (ast.Sub, "-")):
                    yield ("slice", f"slice {bound} {sign}1", _shift(bound, op))
    if isinstance(node, ast.Call):
        yield from _call_edits(node)
    if isinstance(node, ast.Attribute) and node.attr in SWAPPED_NAMES:
        new = SWAPPED_NAMES[node.attr]
        yield ("reduction", f".{node.attr} -> .{new}",
               lambda n: ast.Attribute(n.value, new, n.ctx))  # fmt: skip
    if isinstance(node, ast.Name) and node.id in ("max", "min"):
        new_name = SWAPPED_NAMES[node.id]
        yield ("reduction", f"{node.id} -> {new_name}", lambda n: ast.Name(new_name, n.ctx))
    if isinstance(node, ast.keyword) and node.arg in ("min", "max"):
        new_kw = SWAPPED_NAMES[node.arg]
        yield ("reduction", f"{node.arg}= -> {new_kw}=", lambda n: ast.keyword(new_kw, n.value))
    if isinstance(node, ast.keyword) and node.arg == "eps" and number(node.value) != 0:
        yield ("epsilon", "eps= -> 0", lambda n: ast.keyword("eps", ast.Constant(0.0)))
    if isinstance(node, ast.With):
        yield ("statement", "with dropped (body kept)", lambda n: n.body)
    if isinstance(node, ast.stmt) and _droppable(node):
        yield ("statement", f"{type(node).__name__.lower()} dropped", lambda n: ast.Pass())


def _constant_edits(value: float | int) -> Iterator[Edit]:
    made: set[float | int] = {value}
    candidates = [value + 1, value - 1, 0, 2]
    if isinstance(value, float) and 0 < abs(value) <= SMALL:
        candidates = [0.0, value * 10, value / 10]
    for new in candidates:
        new = type(value)(new)
        if new in made:
            continue
        made.add(new)
        yield ("constant", f"{value!r} -> {new!r}", _constant(new))


def _attribute(name: str) -> Callable[[Any], Any]:
    return lambda n: getattr(n, name)


def _constant(value: float | int) -> Callable[[Any], Any]:
    return lambda n: _const(value)


def _shift(bound: str, op: type) -> Callable[[Any], Any]:
    def edit(n: Any) -> ast.AST:
        moved = ast.BinOp(getattr(n, bound), op(), ast.Constant(1))
        return ast.Slice(
            moved if bound == "lower" else n.lower,
            moved if bound == "upper" else n.upper,
            n.step,
        )

    return edit


def _call_edits(node: ast.Call) -> Iterator[Edit]:
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in DROPPED_CALLS and not node.args:
        yield ("copy", f".{func.attr}() dropped", lambda n: n.func.value)
    positional = [a for a in node.args if not isinstance(a, ast.Starred)]
    if len(positional) == len(node.args) >= 2:
        yield ("arguments", "first two arguments swapped", _swapped_arguments)
    if isinstance(func, ast.Name) and func.id == "range" and node.args:
        stop = 0 if len(node.args) == 1 else 1
        if number(node.args[stop]) is None:
            for op, sign in ((ast.Add, "+"), (ast.Sub, "-")):
                yield ("range", f"range stop {sign}1", _range_shift(stop, op))


def _swapped_arguments(n: Any) -> ast.Call:
    return ast.Call(n.func, [n.args[1], n.args[0], *n.args[2:]], n.keywords)


def _range_shift(stop: int, op: type) -> Callable[[Any], Any]:
    def edit(n: Any) -> ast.AST:
        args = list(n.args)
        args[stop] = ast.BinOp(args[stop], op(), ast.Constant(1))
        return ast.Call(n.func, args, n.keywords)

    return edit


def _droppable(node: ast.stmt) -> bool:
    """Statements whose absence is a realistic bug: an effect (a call, an in-place update, a
    state write) or a guard; not a plain local assignment, whose absence only raises."""
    if isinstance(node, ast.Expr):
        return not is_docstring(node)
    if isinstance(node, (ast.AugAssign, ast.If, ast.Delete)):
        return True
    if isinstance(node, ast.Assign):
        return any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets)
    return False


SYMBOLS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Pow: "**",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.And: "and",
    ast.Or: "or",
    ast.USub: "unary -",
    ast.Not: "not",
}


def _sym(op: ast.AST) -> str:
    return SYMBOLS.get(type(op), type(op).__name__)
