"""API rules: what an exercise forbids, found in the learner's code by reading its syntax tree
in the grader (never by running it). Judged on what the code would call, not on the words it
contains.

A forbidden entry is either a dotted name (`torch.softmax`, `F.softmax`, `nn.Softmax`: `F`
and `nn` stand for torch.nn.functional and torch.nn) or `.attr` (any attribute of that name,
e.g. `.backward` for `loss.backward()`). What counts as a use:

- a name or attribute chain that reaches a forbidden name (`F.softmax`, `x.softmax(-1)`,
  `torch.optim.SGD` where `torch.optim` is forbidden), with imports and their aliases followed
  (`import torch.nn.functional as fn; fn.softmax`, `from torch import softmax as s`);
- `getattr(obj, "softmax")` (and `attrgetter` / `methodcaller`) with a constant name, read as
  the attribute it names;
- the usual ways round a static check: a torch name computed at run time
  (`getattr(torch, "soft" + "max")`, `vars(torch)`, `.__dict__`), the private twins
  (`torch._softmax`), `from torch import *` where it brings something forbidden, and `eval`,
  `exec`, `compile`, `__import__` and `importlib`, refused outright while anything is
  forbidden.

What does not count: string literals, comments, docstrings and `__all__` (a label that says
"softmax" calls nothing), and the block under `if __name__ == "__main__":`, which the grader
never runs (solution.load_source gives the module another name): a learner may keep the
statement's example there as a self-test."""

from __future__ import annotations

import ast
from collections.abc import Sequence

# app/importer/forbidden.py writes the statement's list with the same aliases (a test holds
# the two equal: the web app cannot import this package, which loads torch).
ALIASES = {"F": "torch.nn.functional", "nn": "torch.nn"}
DYNAMIC = ("eval", "exec", "compile", "__import__", "importlib", "builtins", "__builtins__")
NAME_GETTERS = ("getattr", "attrgetter", "methodcaller")
MAX_SHOWN = 80  # characters of a call quoted in a refusal


def canonical(entry: str) -> str:
    first, _, rest = entry.partition(".")
    if first in ALIASES:
        return ALIASES[first] + ("." + rest if rest else "")
    return entry


def without_main_block(tree: ast.Module) -> ast.Module:
    """The module less its top-level `if __name__ == "__main__":` blocks (their `else`, which
    does run, stays)."""
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_test(node.test):
            body.extend(node.orelse)
        else:
            body.append(node)
    tree.body = body
    return tree


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(mains) == 1


class _Rules:
    """The forbidden entries, ready to match."""

    def __init__(self, forbid: Sequence[str]) -> None:
        self.dotted = {canonical(e) for e in forbid if not e.startswith(".")}
        self.attrs = {e[1:] for e in forbid if e.startswith(".")}
        self.last_parts = {d.rsplit(".", 1)[-1] for d in self.dotted} | self.attrs

    def matches(self, name: str, attrs: Sequence[str]) -> str | None:
        """What is forbidden about the chain `name` (its attributes `attrs`), or None."""
        for forbidden in self.dotted:
            if name == forbidden or name.startswith(forbidden + "."):
                return forbidden
        tail = name.rsplit(".", 1)[-1]
        # torch._softmax, torch.ops.aten._log_softmax: the private twins
        private = name.startswith("torch.") and tail.startswith("_")
        if private and (tail.lstrip("_") in self.last_parts or tail == "__dict__"):
            return name
        for attr in attrs:
            if attr in self.attrs:
                return "." + attr
        return None


def violations(source: str, forbid: Sequence[str], reason: str = "") -> list[str]:
    """One sentence per use of something forbidden, in the order of the code: the line, the
    code that uses it, what it reaches, and why the exercise forbids it."""
    if not forbid:
        return []
    try:
        tree = without_main_block(ast.parse(source))
    except SyntaxError as exc:
        return [f"line {exc.lineno}: the code does not parse ({exc.msg})"]
    rules = _Rules(forbid)
    imported = _import_names(tree)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    why = f": {reason.strip()}" if reason.strip() else ""
    found: list[tuple[int, str]] = []

    def refuse(node: ast.AST, what: str) -> None:
        line = getattr(node, "lineno", 0)
        found.append((line, f"{_shown(node, parents)} uses {what}, which this exercise forbids"))

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if _looked_up_in_torch(node, imported):
                shown = _shown(node, parents)
                found.append((node.lineno, f"{shown} looks a torch name up at run time, which "
                              "cannot be checked while functions are forbidden"))  # fmt: skip
            hit = _constant_name_lookup(node, imported, rules)
            if hit:
                refuse(node, hit)
        elif isinstance(node, (ast.Attribute, ast.Name)):
            if isinstance(parents.get(node), ast.Attribute):
                continue  # the outermost chain is judged as a whole
            name, attrs = _chain(node, imported)
            hit = rules.matches(name, attrs) if name or attrs else None
            if hit:
                refuse(node, _reached(name, hit))
            elif isinstance(node, ast.Name) and node.id in DYNAMIC:
                found.append((node.lineno, f"{node.id} runs code that cannot be checked, which "
                              "this exercise refuses while functions are forbidden"))  # fmt: skip
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                base = node.module + "." if isinstance(node, ast.ImportFrom) and node.module else ""
                full = base + alias.name
                if rules.matches(full, ()) or full.split(".")[0] in DYNAMIC:
                    found.append((node.lineno, f"importing {full} is not allowed in this exercise"))
                elif alias.name == "*" and any(d.startswith(base) for d in rules.dotted):
                    found.append((node.lineno, f"importing * from {base[:-1]} is not allowed here"))
    seen: set[tuple[int, str]] = set()
    out = []
    for line, text in sorted(found):
        if (line, text) not in seen:
            seen.add((line, text))
            out.append(f"line {line}: {text}{why}")
    return out


def _constant_name_lookup(node: ast.Call, imported: dict[str, str], rules: _Rules) -> str | None:
    """`getattr(F, "softmax")`, `attrgetter("softmax")`, `methodcaller("softmax")`: the
    attribute a constant name reaches, when it is forbidden."""
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    if called not in NAME_GETTERS or not node.args:
        return None
    index = 1 if called == "getattr" else 0
    if len(node.args) <= index:
        return None
    constant = node.args[index]
    if not (isinstance(constant, ast.Constant) and isinstance(constant.value, str)):
        return None
    attrs = constant.value.split(".")
    if called == "getattr":
        owner, owner_attrs = _chain(node.args[0], imported)
        name = ".".join([owner, *attrs]) if owner else ""
        hit = rules.matches(name, [*owner_attrs, *attrs])
        return None if hit is None else _reached(name, hit)
    if any(a in rules.last_parts for a in attrs):
        return f"the attribute {constant.value!r}"
    return None


def _reached(name: str, hit: str) -> str:
    if hit.startswith(".") or name == hit:
        return hit
    return f"{name} (under {hit})"


def _looked_up_in_torch(node: ast.Call, imported: dict[str, str]) -> bool:
    """`getattr(torch, name)` with a name computed at run time, or `vars(torch)`: a way
    round the check that no constant would show."""
    if not isinstance(node.func, ast.Name) or not node.args:
        return False
    target, _ = _chain(node.args[0], imported)
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


def _chain(node: ast.expr, imported: dict[str, str]) -> tuple[str, list[str]]:
    """An attribute chain: its dotted name from an imported or aliased root (`""` when the
    root is not a plain name, e.g. `f(x).softmax`), and every attribute along it."""
    attrs: list[str] = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    attrs.reverse()
    if not isinstance(node, ast.Name):
        return "", attrs
    head = imported.get(node.id, canonical(node.id) if node.id in ALIASES else node.id)
    return ".".join([head, *attrs]), attrs


def _shown(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    """The code that makes the use: the whole call where the node is what is called."""
    parent = parents.get(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        node = parent
    try:
        text = ast.unparse(node)
    except Exception:  # an odd node: the rest of the sentence says enough
        return "this code"
    text = " ".join(text.split())
    return "`" + (text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "...") + "`"
