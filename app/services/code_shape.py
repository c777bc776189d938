"""Whether two versions of a learner's solution are the same program: their syntax trees,
compared without positions, comments, formatting or docstrings.

The whole module is compared, not only the entry point's definition. The grader runs the
module: the entry point calls helpers, reads module-level constants and imports, and some
tests call other names than the entry point (stable-softmax's call `log_softmax` too). A
fix in any of them changes the outcome, so comparing the entry point alone would call a
fixed helper "unchanged" and blame the test. Comparing the module errs the other way (an
edit anywhere counts as a change), which is the side a flag of a wrong test should err on:
it then only fires when the very same program failed and then passed."""

from __future__ import annotations

import ast


class _NoOpStatements(ast.NodeTransformer):
    """Drops statements that are a bare constant: docstrings, string "comments", `...`.
    They do nothing when the module runs."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list):
                setattr(node, field, [s for s in statements if not _is_constant(s)])
        return node


def _is_constant(statement: object) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def program_shape(code: str) -> str | None:
    """The module's syntax tree as text, without what cannot change its behaviour; None
    when the code does not parse (nothing can be said about it)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):  # ValueError: NUL bytes in the source
        return None
    return ast.dump(_NoOpStatements().visit(tree), include_attributes=False)


def same_program(before: str, after: str) -> bool:
    """True when both parse and differ at most in formatting, comments and docstrings."""
    if before == after:
        return program_shape(before) is not None
    shape = program_shape(before)
    return shape is not None and shape == program_shape(after)
