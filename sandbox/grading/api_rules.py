"""API rules: names an exercise forbids, found in the learner's code by reading its syntax
tree in the grader (never by running it).

A forbidden entry is either a dotted name (`torch.softmax`, `F.softmax`, `nn.Softmax`: `F`
and `nn` stand for torch.nn.functional and torch.nn) or `.attr` (any attribute of that name,
e.g. `.backward` for `loss.backward()`). Imports are followed (`import torch.nn.functional
as fn; fn.softmax`, `from torch import softmax as s`), and so are the usual ways round a
static check: the attribute's name as a whole string (`getattr(torch, "softmax")`), a torch
name computed at run time (`getattr(torch, "soft" + "max")`, `vars(torch)`, `.__dict__`),
the private twins (`torch._softmax`), `from torch import *` where it brings something
forbidden, and `eval`, `exec`, `compile`, `__import__` and `importlib`, which are refused
outright while anything is forbidden."""

from __future__ import annotations

import ast
from collections.abc import Sequence

ALIASES = {"F": "torch.nn.functional", "nn": "torch.nn"}
DYNAMIC = ("eval", "exec", "compile", "__import__", "importlib", "builtins", "__builtins__")


def canonical(entry: str) -> str:
    first, _, rest = entry.partition(".")
    if first in ALIASES:
        return ALIASES[first] + ("." + rest if rest else "")
    return entry


def violations(source: str, forbid: Sequence[str]) -> list[str]:
    """One sentence per use of something forbidden, in the order of the code."""
    if not forbid:
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [f"line {exc.lineno}: the code does not parse ({exc.msg})"]
    dotted = {canonical(e) for e in forbid if not e.startswith(".")}
    attrs = {e[1:] for e in forbid if e.startswith(".")}
    last_parts = {d.rsplit(".", 1)[-1] for d in dotted} | attrs
    imported = _import_names(tree)
    found: list[tuple[int, str]] = []

    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call) and _looked_up_in_torch(node, imported):
            found.append((line, "a torch name looked up at run time is not allowed here"))
        if isinstance(node, (ast.Attribute, ast.Name)):
            name = _dotted(node, imported)
            tail = name.rsplit(".", 1)[-1]
            if name in dotted or any(name.startswith(d + ".") for d in dotted):
                found.append((line, f"{_source(node)} ({name}) is not allowed in this exercise"))
            elif (
                name.startswith("torch.")
                and tail.startswith("_")
                and (tail.lstrip("_") in last_parts or tail == "__dict__")
            ):
                # torch._softmax, torch.ops.aten._log_softmax: the private twins
                found.append((line, f"{_source(node)} ({name}) is not allowed in this exercise"))
            elif isinstance(node, ast.Attribute) and node.attr in attrs:
                found.append((line, f".{node.attr} is not allowed in this exercise"))
            elif isinstance(node, ast.Name) and node.id in DYNAMIC:
                found.append((line, f"{node.id} is not allowed where functions are forbidden"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                base = node.module + "." if isinstance(node, ast.ImportFrom) and node.module else ""
                full = base + alias.name
                if full in dotted or full.split(".")[0] in DYNAMIC:
                    found.append((line, f"importing {full} is not allowed in this exercise"))
                elif alias.name == "*" and any(d.startswith(base) for d in dotted):
                    found.append((line, f"importing * from {base[:-1]} is not allowed here"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.strip() in last_parts
        ):
            found.append(
                (line, f"the name {node.value.strip()!r} as a string (looked up by name?)")
            )
    seen: set[tuple[int, str]] = set()
    out = []
    for line, text in sorted(found):
        if (line, text) not in seen:
            seen.add((line, text))
            out.append(f"line {line}: {text}")
    return out


def _looked_up_in_torch(node: ast.Call, imported: dict[str, str]) -> bool:
    """`getattr(torch, name)` with a name computed at run time, or `vars(torch)`: a way
    round the check that no string constant would show."""
    if not isinstance(node.func, ast.Name) or not node.args:
        return False
    target = _dotted(node.args[0], imported)
    if not (target == "torch" or target.startswith("torch.")):
        return False
    if node.func.id == "vars":
        return True
    name = node.args[1] if len(node.args) > 1 else None
    return node.func.id == "getattr" and not (
        isinstance(name, ast.Constant) and isinstance(name.value, str)
    )


def _import_names(tree: ast.AST) -> dict[str, str]:
    """Local name -> the dotted name it was imported as."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    names[alias.asname] = alias.name
                else:
                    first = alias.name.split(".")[0]
                    names[first] = first
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.expr, imported: dict[str, str]) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    head = imported.get(node.id, canonical(node.id) if node.id in ALIASES else node.id)
    return ".".join([head, *reversed(parts)])


def _source(node: ast.expr) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # an odd node: the canonical name says enough
        return "it"
