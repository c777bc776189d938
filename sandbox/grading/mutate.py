"""Automatic mutants of a reference, made from its syntax tree: each changes one thing a
realistic bug changes (an operator, a constant, a dimension, a bound, a dropped statement or
`.detach()`, swapped arguments, `max` for `min`, a dropped epsilon). The hidden suite is run
on each (mutation_run.py); a suite is proven when it kills at least 95% of the mutants that
are not equivalent to the reference.

Why a mutator of our own: mutmut and cosmic-ray mutate a package and judge a mutant by a
pytest (or unittest) run of its test files. Here the unit under test is one reference file,
and its judge is the grader's own loop against hidden declarations on five seeds, in this
process; both tools' operator sets informed the list below (arithmetic, comparison,
constant, boolean and statement-removal operators), to which tensor code adds its own
(`dim`, `keepdim`, reductions, `.detach()`, epsilons)."""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from sandbox.grading.mutation_operators import edits, is_docstring

# Part of every cached result's digest: a change to the operators reruns all. 2: ids made
# unique (an outer and an inner call of one chain start at the same column).
VERSION = 2


@dataclass(frozen=True)
class Mutant:
    id: str  # stable while the reference's lines stay: "L12:C8 + -> -" (" #2": a second)
    operator: str
    line: int
    source: str


def mutants(reference: str) -> list[Mutant]:
    """Every mutant of `reference`, once each (two edits giving the same program count once;
    an edit that changes nothing is dropped)."""
    tree = ast.parse(reference)
    original = ast.unparse(tree)
    nodes = list(ast.walk(tree))
    skipped = _skipped(tree)
    seen = {original}
    taken: dict[str, int] = {}
    out: list[Mutant] = []
    for index, node in enumerate(nodes):
        if id(node) in skipped:
            continue
        for operator, what, replace in edits(node):
            mutated = copy.deepcopy(tree)
            target = list(ast.walk(mutated))[index]
            if not _replace(mutated, target, replace(target)):
                continue
            try:
                source = ast.unparse(ast.fix_missing_locations(mutated))
                compile(source, "mutant.py", "exec")
            except (SyntaxError, ValueError, TypeError):
                continue
            if source in seen:
                continue
            seen.add(source)
            line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
            mutant_id = f"L{line}:C{col} {what}"
            taken[mutant_id] = taken.get(mutant_id, 0) + 1
            if taken[mutant_id] > 1:
                mutant_id += f" #{taken[mutant_id]}"
            out.append(Mutant(mutant_id, operator, line, source))
    return out


def _skipped(tree: ast.Module) -> set[int]:
    """Nodes no mutant touches: docstrings, annotations, `__main__` blocks, and the inside
    of a negative constant (mutated as one constant)."""
    out: set[int] = set()

    def skip(node: ast.AST | None) -> None:
        if node is not None:
            out.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and is_docstring(body[0]):
            skip(body[0])
        if isinstance(node, ast.arg):
            skip(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            skip(node.returns)
            for decorator in node.decorator_list:
                skip(decorator)
        elif isinstance(node, ast.AnnAssign):
            skip(node.annotation)
        elif isinstance(node, ast.If) and _is_main(node):
            skip(node)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if isinstance(node.operand, ast.Constant):
                skip(node.operand)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            skip(node)
    return out


def _is_main(node: ast.If) -> bool:
    return "__main__" in ast.unparse(node.test) and "__name__" in ast.unparse(node.test)


def _replace(tree: ast.AST, target: ast.AST, new: ast.AST | list[ast.stmt] | None) -> bool:
    """Put `new` where `target` is in `tree`; False where it cannot go."""
    if new is None:
        return False
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is target:
                if isinstance(new, list):
                    return False
                setattr(parent, field, new)
                return True
            if isinstance(value, list) and any(v is target for v in value):
                i = next(i for i, v in enumerate(value) if v is target)
                if isinstance(new, list):
                    value[i : i + 1] = new
                else:
                    value[i] = new
                if not value:
                    value.append(ast.Pass())
                return True
    return False
