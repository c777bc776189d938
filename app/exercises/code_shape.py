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
import hashlib
import threading
from collections import OrderedDict


def _drop_no_ops(body: list[ast.stmt]) -> None:
    """Drops, in place and at every depth, the statements that are a bare constant:
    docstrings, string "comments", `...`; they do nothing when the module runs. Only
    statements are visited (they nest only through these fields), not every expression:
    that walk cost more than the parse."""
    body[:] = [s for s in body if not _is_constant(s)]
    for statement in body:
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list):
                _drop_no_ops(inner)
        for nested in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            _drop_no_ops(nested.body)


def _is_constant(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def program_shape(code: str) -> str | None:
    """The module's syntax tree as text, without what cannot change its behaviour; None
    when the code does not parse (nothing can be said about it)."""
    try:
        tree = ast.parse(code)
        _drop_no_ops(tree.body)
        return ast.dump(tree, include_attributes=False)
    except (SyntaxError, ValueError):  # ValueError: NUL bytes in the source
        return None
    except (RecursionError, MemoryError):  # nested past what the parser or dump can take
        return None


def same_program(before: str, after: str) -> bool:
    """True when both parse and differ at most in formatting, comments and docstrings."""
    if before == after:
        return program_shape(before) is not None
    shape = program_shape(before)
    return shape is not None and shape == program_shape(after)


class ShapeCache:
    """Digests of program shapes by the code's sha256, the most recently used kept. A
    submission's code never changes, so a digest stays true; the admin page then parses only
    the submissions that came since it was last shown. b"" marks code that does not parse."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._digests: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()  # handlers run in a thread pool

    def get(self, code_sha256: str) -> bytes | None:
        with self._lock:
            digest = self._digests.get(code_sha256)
            if digest is not None:
                self._digests.move_to_end(code_sha256)
            return digest

    def digest(self, code_sha256: str, code: str) -> bytes:
        """The shape's digest (b"" when the code does not parse), kept for next time."""
        shape = program_shape(code)
        digest = hashlib.sha256(shape.encode()).digest() if shape is not None else b""
        with self._lock:
            self._digests[code_sha256] = digest
            self._digests.move_to_end(code_sha256)
            while len(self._digests) > self._size:
                self._digests.popitem(last=False)
        return digest


# About 100 bytes an entry: a few MB for the submissions of a busy month.
SHAPES = ShapeCache(50_000)
