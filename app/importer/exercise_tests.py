"""What a learner may see of an exercise's tests, read from tests.py's syntax tree.

The web app never imports torch, so it cannot run tests.py (sandbox/grading executes it in
the grader's jail). The declarations are plain calls, `values("name", ..., visible=True,
description="...")`, so their names, categories and visibility are literals the tree holds;
tests/grading checks that this reading agrees with the grader's own."""

from __future__ import annotations

import ast

from app.importer.errors import ContentError

# Each declaration's category and whether it is visible unless told (sandbox/grading/dsl.py).
KINDS: dict[str, tuple[str, bool]] = {
    "values": ("values", False),
    "edge": ("edge cases", False),
    "trajectory": ("values", False),
    "sequence": ("values", False),
    "shapes": ("shape", True),
    "gradients": ("gradients", False),
    "prop": ("properties", False),
    "nontrivial": ("values", False),
    "api_rule": ("API rules", True),
    "performance": ("performance", False),
}


def visible_tests(source: str, path: str) -> list[dict[str, str]]:
    """[{name, category, description}] of the visible tests, in declaration order."""
    tree = _declarations_tree(source, path)
    listing = next(
        (
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "DECLARATIONS" for t in node.targets)
        ),
        None,
    )
    if not isinstance(listing, ast.List) or not listing.elts:
        raise ContentError(path, 1, "DECLARATIONS must be a literal, non-empty list")
    return [t for t in (_declared(call, path) for call in listing.elts) if t is not None]


def _declarations_tree(source: str, path: str) -> ast.Module:
    """The tree of the file from its `DECLARATIONS =` line on, which ends the file as a rule:
    parsing the helpers above it too was half of what an exercise cost at start-up
    (bench/exercise_import.py). The whole file when that part does not stand alone."""
    start = source.find("\nDECLARATIONS")
    if start >= 0:
        offset = source.count("\n", 0, start + 1)
        try:
            tree = ast.parse(source[start + 1 :])
        except SyntaxError:
            pass
        else:
            return ast.increment_lineno(tree, offset)
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise ContentError(path, exc.lineno or 1, f"does not parse: {exc.msg}") from None


def _declared(node: ast.expr, path: str) -> dict[str, str] | None:
    kind = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None
    if kind not in KINDS:
        raise ContentError(path, node.lineno, "each declaration is a call of sandbox.grading's")
    assert isinstance(node, ast.Call)
    category, visible = KINDS[kind]
    keywords = {k.arg: k.value for k in node.keywords if k.arg}
    name = node.args[0] if node.args else keywords.get("name")
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        raise ContentError(path, node.lineno, "a test's name must be a string literal")
    options: dict[str, object] = {"category": category, "visible": visible, "description": ""}
    for key in options:
        if key in keywords:
            value = keywords[key]
            if not isinstance(value, ast.Constant):
                raise ContentError(path, node.lineno, f"{key}= must be a literal")
            options[key] = value.value
    if not options["visible"]:
        return None
    return {
        "name": name.value,
        "category": str(options["category"]),
        "description": str(options["description"]),
    }
